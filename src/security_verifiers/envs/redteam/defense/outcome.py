"""What E6's scorer records of one episode: the contract between ``score``, the metrics and the report.

Every E6 outcome has the scenario's fields, so the metrics read any of them alike: a scenario of the generated
worlds (:class:`DefenseOutcome`), an AgentDojo episode (:class:`AgentDojoOutcome`, which names its world and suite),
and a refusal-track item (:class:`RefusalOutcome`, with the scenario's fields at their empty values and the label's
fields set). :meth:`DefenseOutcome.read` reads each stored outcome as its own kind.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal, Self

from pydantic import Field

from security_verifiers.core.outcome import Outcome


class DefenseOutcome(Outcome):
    """One scenario episode (and the fields every E6 outcome has)."""

    condition: str = Field(description="attack, twin or clean; benign or harmful on the refusal track.")
    split: str
    kind: Literal["scenario", "refusal"]
    task: str | None
    carrier: str | None
    technique: str | None = Field(description="The attack's technique; None unattacked.")
    attack_goal: str | None
    valid: bool = Field(description="The answer parsed.")
    decision: str | None
    leaked: bool
    leak_fraction: float
    leak_encodings: list[str]
    forbidden: list[str]
    breached: bool = Field(description="A leak or a forbidden action (an under-refusal on the refusal track).")
    done: bool = Field(description="The task's exact check (the right decision on the refusal track).")
    acted: bool = Field(False, description="Any change made to the world (absent from outcomes scored before it).")
    tool_calls: int
    extra_calls: int
    label: str | None
    correct: bool | None
    over_refusal: bool | None
    under_refusal: bool | None
    category: str | None
    reward: float

    @classmethod
    def read(cls, stored: Mapping[str, Any] | Outcome) -> Self:
        """A stored E6 outcome as its own kind (refusal track, AgentDojo episode, or a scenario)."""
        if isinstance(stored, DefenseOutcome):
            return stored  # type: ignore[return-value]
        assert isinstance(stored, Mapping)
        if cls is DefenseOutcome:
            if stored.get("kind") == "refusal":
                return RefusalOutcome.model_validate(stored)  # type: ignore[return-value]
            if "suite" in stored:
                return AgentDojoOutcome.model_validate(stored)  # type: ignore[return-value]
        return cls.model_validate(stored)


class AgentDojoOutcome(DefenseOutcome):
    """One AgentDojo episode: a scenario that names its world and suite (stored after ``kind``)."""

    world: Literal["agentdojo"]
    suite: str

    stored_order: ClassVar[tuple[str, ...]] = ("condition", "split", "kind", "world", "suite")


class RefusalOutcome(DefenseOutcome):
    """One refusal-track item: the decision against the label; the scenario's fields at their empty values."""

    kind: Literal["refusal"]
    task: None = None
    carrier: None = None
    technique: None = None
    attack_goal: None = None
    leaked: bool = False
    leak_fraction: float = 0.0
    leak_encodings: list[str] = Field(default_factory=list)
    forbidden: list[str] = Field(default_factory=list)
    acted: bool = False
    tool_calls: int = 0
    extra_calls: int = 0
    stored_order: ClassVar[tuple[str, ...]] = (
        "condition", "split", "task", "carrier", "technique", "attack_goal", "valid", "leaked", "leak_fraction",
        "leak_encodings", "forbidden", "breached", "done", "acted", "tool_calls", "extra_calls", "kind", "label",
        "decision", "correct", "over_refusal", "under_refusal", "category", "reward")
