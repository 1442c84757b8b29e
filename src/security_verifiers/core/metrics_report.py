"""The metrics of one run as a type: what every environment's ``metrics`` returns, and what the summary, the
report, the leaderboard and the terminal all render from, so a headline metric reads the same everywhere.

``metrics`` is flat (name -> number, ``None`` where undefined, e.g. F1 with nothing to find and nothing
claimed); ``intervals`` holds a 95% bootstrap interval for some of them (both ends ``None`` exactly when the
metric is undefined); ``breakdowns`` holds the same kind of numbers per group (platform, family, rule...), each
row flagged ``few_items`` (or ``few_findings``) when it rests on too little to read as more than an anecdote;
``constant_policy`` is the reward of a policy that ignores its input, on the same items: the floor a score is
read against (E1's always-Abstain earns 0.89, which looks good until one sees the constant floor next to it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from security_verifiers.core.metrics import FEW

Number = float | int | None
#: The metric that carries :attr:`MetricsReport.constant_policy`'s reward among the flat metrics.
CONSTANT_REWARD = "constant_reward"
#: Row flags of a breakdown, and what each says (the report's footnote).
ROW_FLAGS = {"few_items": f"fewer than {FEW} items", "few_findings": f"fewer than {FEW} oracle findings"}


def fmt(value: Any) -> str:
    """One table cell: floats to 4 decimals, ``None`` as n/a (a rate that is not applicable, or had nothing to
    measure, is never shown as a number), a pair as an interval.

    >>> fmt(0.123456), fmt(None), fmt(3), fmt([0.1, 0.25])
    ('0.1235', 'n/a', '3', '[0.1000, 0.2500]')
    """
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.4f}"
    if isinstance(value, list | tuple) and len(value) == 2:
        return f"[{fmt(value[0])}, {fmt(value[1])}]"
    return str(value)


class HeadlineRow(BaseModel):
    """One headline metric as every view shows it: key, direction, value and interval."""

    key: str
    higher_is_better: bool
    value: Number
    interval: tuple[Number, Number] | None

    @property
    def arrow(self) -> str:
        return "↑" if self.higher_is_better else "↓"


class ConstantPolicy(BaseModel):
    """A policy that gives the same answer to every item, and the mean reward it earns on the run's items.

    Computed from the outcomes alone (their truth labels or facts and the configured reward), so it is the floor
    of exactly the items the run's ``reward_mean`` averages over, errored rollouts excluded."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    policy: str = Field(description="Its name, as a baseline would be named (always-abstain, empty-answer).")
    answer: str = Field(description="The answer text it sends to every item.")
    reward_mean: float
    note: str = Field(description="Why this constant, in sentences: how it was chosen, what it earns per item.")


class MetricsReport(BaseModel):
    """Metrics, intervals and breakdowns of a set of outcomes (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    metrics: dict[str, Number] = Field(default_factory=dict)
    intervals: dict[str, tuple[Number, Number]] = Field(default_factory=dict)
    breakdowns: dict[str, dict[str, dict[str, Any]]] = Field(default_factory=dict)
    constant_policy: ConstantPolicy | None = None

    @model_validator(mode="after")
    def _constant_reward_agrees(self) -> MetricsReport:
        """The flat ``constant_reward`` and the policy's ``reward_mean`` are one number written twice: never two."""
        flat = self.metrics.get(CONSTANT_REWARD)
        stated = None if self.constant_policy is None else self.constant_policy.reward_mean
        if flat != stated:
            raise ValueError(f"metrics[{CONSTANT_REWARD!r}] is {flat} but constant_policy.reward_mean is {stated}")
        return self

    @classmethod
    def from_summary(cls, summary: Mapping[str, Any]) -> MetricsReport:
        """The report stored in a ``summary.json`` (its ``metrics``, ``intervals``, ``breakdowns`` and
        ``constant_policy``; a summary written before the constant policy was added has none)."""
        parts: dict[str, Any] = {k: summary.get(k) or {} for k in ("metrics", "intervals", "breakdowns")}
        return cls.model_validate({**parts, "constant_policy": summary.get("constant_policy")})

    def headline(self, keys: Sequence[tuple[str, bool]]) -> list[HeadlineRow]:
        """The rows of the headline metrics ``(key, higher_is_better)``, in that order."""
        return [HeadlineRow(key=key, higher_is_better=up, value=self.metrics.get(key),
                            interval=self.intervals.get(key)) for key, up in keys]

    def stored(self) -> dict[str, Any]:
        """The three parts as plain JSON values (intervals as lists), as ``summary.json`` keeps them."""
        return self.model_dump(mode="json")
