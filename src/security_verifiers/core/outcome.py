"""What a scorer records of one rollout, as a type: the base every environment's outcome model derives from.

An outcome is written to ``results.jsonl`` as a plain dict (:meth:`Outcome.stored`) and read back through the same
model (:meth:`Outcome.read`), so the scorer, the metrics and the report agree on one shape: a missing or misspelt
key, or a value of the wrong type, is an error where it is read, never a silent 0. The model is strict (no
coercion: ``"1"`` is not a number, a float field takes an int only as the number it is) and frozen (the metrics
never change an outcome). Every environment names its model (``Environment.outcome_model``), and the conformance
suite checks that every outcome its scorer stores reads back to the same dict.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict


class Outcome(BaseModel):
    """Base of every environment's outcome model: strict, frozen, unknown keys refused."""

    model_config = ConfigDict(strict=True, frozen=True, extra="forbid")

    #: The order of the keys in the stored dict when it is not the order the fields are declared in (a model that
    #: adds fields to its parent's, and stores them among the parent's); empty: the declared order.
    stored_order: ClassVar[tuple[str, ...]] = ()

    def stored(self) -> dict[str, Any]:
        """The dict written to ``results.jsonl`` (plain JSON values)."""
        dumped = self.model_dump()
        if not self.stored_order:
            return dumped
        return {key: dumped[key] for key in self.stored_order if key in dumped} | dumped

    @classmethod
    def read(cls, stored: Mapping[str, Any] | Outcome) -> Self:
        """A stored outcome as this model (an outcome already read passes through)."""
        if isinstance(stored, cls):
            return stored
        return cls.model_validate(stored)

    @classmethod
    def read_all(cls, stored: Sequence[Mapping[str, Any] | Outcome]) -> list[Self]:
        """:meth:`read` of each outcome, in order."""
        return [cls.read(o) for o in stored]
