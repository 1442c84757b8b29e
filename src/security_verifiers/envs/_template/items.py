"""The item contract of the template: what ``item.input`` and ``item.target`` hold, as pydantic models.

Every path that brings items in (the public split, ``sv data build``, ``sv eval --data``) validates against
these models before anything runs, so the prompt and the scorer can index an item without checking it, and
``sv envs --json`` shows their JSON Schemas to users who write their own items. Strict: unknown keys, wrong
types and a family outside :data:`FAMILIES` are refused.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

#: family -> (the label it always has, or None when either can happen; what it covers).
FAMILIES: dict[str, tuple[Literal["Attack", "Benign"] | None, str]] = {
    "brute_force": ("Attack", "many guesses at one or two privileged accounts from outside"),
    "password_spray": ("Attack", "a few guesses at each of many accounts from outside"),
    "typo": ("Benign", "a user mistyping a password, then logging in"),
    "stale_credentials": (None, "one account failing for a long time from inside: a script with an old "
                                "password, or an intruder already inside"),
}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class TemplateInput(_Strict):
    """``item.input``: one summary line of an SSH server's failed logins from one source address."""

    line: str = Field(min_length=1, max_length=500, description="The summary line the model classifies.")


class TemplateTarget(_Strict):
    """``item.target``: the label, the family of :data:`FAMILIES`, and the family's probability of an attack."""

    label: Literal["Attack", "Benign"]
    family: str = Field(description="A family of FAMILIES (envs/_template/items.py).")
    p_attack: float = Field(ge=0.0, le=1.0, allow_inf_nan=False)

    @model_validator(mode="after")
    def _family_of_label(self) -> TemplateTarget:
        if self.family not in FAMILIES:
            raise ValueError(f"unknown family {self.family!r} (not in envs/_template/items.py)")
        always = FAMILIES[self.family][0]
        if always is not None and always != self.label:
            raise ValueError(f"family {self.family!r} is {always}, but the label is {self.label}")
        return self
