"""What code-repair's scorer records of one rollout: the contract between ``score``, the metrics and the report.

Stored in ``results.jsonl`` as a plain dict and read back through :class:`RepairOutcome`, so a missing or misspelt
key is an error where it is read, never a silent 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import Field

from security_verifiers.core.outcome import Outcome


class RepairOutcome(Outcome):
    """One rollout of code-repair: the item's facts, the answer's claims, and what running the patch showed."""

    # The item.
    family: str
    variant: str
    cwe: str = Field(description="The task's weakness.")
    split: str
    kind: Literal["program", "detection"] = Field("program", description="detection: an imported record without "
                                                  "tests, scored on naming the CWE and line only.")
    # The answer.
    valid: bool = Field(description="The answer parsed.")
    reward: float
    cwe_claimed: str | None = None
    cwe_correct: bool = False
    located: bool = False
    patch_present: bool = False
    patch_applied: bool = False
    patch_error: str | None = None
    patch_lines: int | None = Field(None, description="Lines the patch adds or removes.")
    reference_lines: int = Field(description="Lines the reference fix adds or removes.")
    harness_probes: list[str] = Field(default_factory=list,
                                      description="Added lines that reach for the harness (the repair is refused).")
    # Running the patched program (set when the patch applied).
    functional_fraction: float | None = None
    functional_failed: list[str] = Field(default_factory=list)
    exploit_blocked: bool = False
    exploited: list[str] = Field(default_factory=list)
    repaired: bool = False
    static_clean: bool = False
    static_remaining: list[str] = Field(default_factory=list)
    static_new_high: list[str] = Field(default_factory=list)
    tool_calls: int = 0
    over_budget: int = Field(0, description="Tool calls past the budget (each refused and charged).")
    timed_out: bool = False
    notes: list[str] = Field(default_factory=list)


def read_outcomes(outcomes: Sequence[Mapping[str, Any] | RepairOutcome]) -> list[RepairOutcome]:
    """Stored outcomes as :class:`RepairOutcome` (already typed ones pass through)."""
    return RepairOutcome.read_all(outcomes)
