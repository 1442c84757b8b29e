"""What E5's scorer records of one episode: the contract between ``score``, the metrics and the report."""

from __future__ import annotations

from pydantic import Field

from security_verifiers.core.outcome import Outcome


class AttackOutcome(Outcome):
    """One attack episode: the item's facts, what was delivered, and whether (and when) the target gave way."""

    split: str
    level: str = Field(description="The target attacked: a scripted level, or model:NAME for a served target.")
    carrier: str
    task: str
    deliveries: int = Field(ge=0, description="Attack texts delivered.")
    success: bool = Field(description="The target leaked its canary or broke its policy.")
    success_turn: int | None = Field(None, description="The delivery at which it did.")
    leaked: bool = False
    forbidden: list[str] = Field(default_factory=list, description="The forbidden actions of the winning turn.")
    techniques: list[str] = Field(default_factory=list, description="Techniques tagged in all the texts, sorted.")
    winning_techniques: list[str] = Field(default_factory=list)
    winning_text: str | None = Field(None, description="The texts up to the winning one.")
    texts: list[str] = Field(default_factory=list)
    constant_rewards: dict[str, float] | None = Field(
        None, description="Each constant attacker's reward on the item's scripted target; None against a served "
        "target (and in outcomes scored before they were stored).")
    reward: float
