"""What config-audit's scorer records of one rollout: the contract between ``score``, the metrics and the report.

Stored in ``results.jsonl`` as a plain dict and read back through :class:`AuditOutcome`, so a missing or
misspelt key is an error where it is read, never a silent 0. An answer that did not parse has no detection or
patch fields at all (``None`` here): it claimed nothing and patched nothing, and :meth:`AuditOutcome.counts`
says what that means for the metrics (every oracle finding missed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from security_verifiers.core.outcome import Outcome

#: The fields an answer that parsed always has, and one that did not never has.
DETECTION_FIELDS = ("tp", "fp", "fn", "tp_w", "fp_w", "fn_w", "detection", "tp_rules", "fp_rules", "fn_rules",
                    "claimed")
PATCH_FIELDS = ("patch_applied", "patch_valid", "patch_inventory_ok", "patch_fixed_w", "patch_original_w",
                "patch_new_w", "patch_n_fixed", "patch_n_new", "patch_n_undetermined", "patch_error", "patch_score")


class Counts(BaseModel):
    """Detection counts of one rollout as the metrics sum them (an invalid answer missed every finding)."""

    tp: int
    fp: int
    fn: int
    tp_w: float
    fp_w: float
    fn_w: float


class AuditOutcome(Outcome):
    """One rollout of config-audit: the item's facts, the episode's tool use, the detection and the patch."""

    # The item.
    platform: Literal["kubernetes", "terraform"]
    cloud: str | None = Field(description="The Terraform provider family (aws, gcp, azure...); None for Kubernetes.")
    clean: bool = Field(description="The oracle finds nothing in the file.")
    n_oracle: int = Field(ge=0)
    oracle_rules: list[str]
    oracle_weight: float = Field(ge=0, description="Severity-weighted total of the oracle's findings.")
    # The episode.
    tool_calls: int = Field(ge=0)
    tool_seconds: float = Field(ge=0)
    over_budget: int = Field(ge=0, description="Tool calls past the budget (each refused and charged).")
    # The answer.
    valid: bool = Field(description="The answer parsed.")
    reward: float
    patch_present: bool
    # Detection: set exactly when the answer parsed.
    tp: int | None = None
    fp: int | None = None
    fn: int | None = None
    tp_w: float | None = None
    fp_w: float | None = None
    fn_w: float | None = None
    detection: float | None = Field(None, description="The detection part of the reward.")
    tp_rules: list[str] | None = None
    fp_rules: list[str] | None = None
    fn_rules: list[str] | None = None
    claimed: int | None = None
    # The patch: set exactly when the answer parsed (``patch_present`` False: no patch was sent).
    patch_applied: bool | None = None
    patch_valid: bool | None = None
    patch_inventory_ok: bool | None = None
    patch_fixed_w: float | None = None
    patch_original_w: float | None = None
    patch_new_w: float | None = None
    patch_n_fixed: int | None = None
    patch_n_new: int | None = None
    patch_n_undetermined: int | None = None
    patch_error: str | None = None
    patch_score: float | None = Field(None, description="The patch part of the reward.")

    @model_validator(mode="after")
    def _parts_match_validity(self) -> AuditOutcome:
        missing = [f for f in (*DETECTION_FIELDS, *PATCH_FIELDS) if f != "patch_error" and getattr(self, f) is None]
        if self.valid and missing:
            raise ValueError(f"a valid answer's outcome lacks {', '.join(missing)}")
        if not self.valid and (len(missing) < len(DETECTION_FIELDS) + len(PATCH_FIELDS) - 1 or self.patch_present):
            raise ValueError("an invalid answer's outcome has detection or patch fields")
        return self

    def stored(self) -> dict[str, Any]:
        """The dict written to ``results.jsonl``: the fields that apply (an invalid answer's are left out)."""
        return self.model_dump(exclude_unset=True)

    def counts(self) -> Counts:
        """The detection counts; an invalid answer detected nothing, so the oracle's findings are all missed."""
        if not self.valid:
            return Counts(tp=0, fp=0, fn=self.n_oracle, tp_w=0.0, fp_w=0.0, fn_w=self.oracle_weight)
        return Counts(tp=self.tp or 0, fp=self.fp or 0, fn=self.fn or 0, tp_w=self.tp_w or 0.0,
                      fp_w=self.fp_w or 0.0, fn_w=self.fn_w or 0.0)

    @property
    def missed_rules(self) -> list[str]:
        """Rule ids of the findings missed (every oracle rule when the answer did not parse)."""
        return list(self.fn_rules or []) if self.valid else list(self.oracle_rules)

    @property
    def fixed_everything(self) -> bool:
        """The patch kept the inventory, fixed every finding's weight and added none."""
        return bool(self.patch_inventory_ok) and self.patch_fixed_w == self.oracle_weight and not self.patch_n_new


def read_outcomes(outcomes: Sequence[Mapping[str, Any] | AuditOutcome]) -> list[AuditOutcome]:
    """Stored outcomes as :class:`AuditOutcome` (already typed ones pass through)."""
    return AuditOutcome.read_all(outcomes)
