"""Proper scoring rules and decision costs shared by the classification environments.

A reward built from these is incentive-compatible: a proper scoring rule is maximised in
expectation by reporting one's true probability, and a cost profile is minimised by the Bayes
action for that probability. Abstaining has an explicit cost between a right and a wrong answer,
so it is optimal exactly inside a band of probabilities (see :meth:`CostProfile.abstain_band`).
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Action = Literal["positive", "negative", "abstain"]
_EPS = 1e-6


def brier_score(p: float, y: int) -> float:
    """Squared error of probability ``p`` for outcome ``y`` (0 is perfect, 1 is worst).

    >>> brier_score(0.8, 1)
    0.03999999999999998
    """
    return (p - y) ** 2


def log_score(p: float, y: int, eps: float = _EPS) -> float:
    """Log loss of ``p`` for outcome ``y``, clipped at ``eps`` so it stays finite.

    >>> round(log_score(0.5, 1), 4)
    0.6931
    """
    p = min(max(p, eps), 1 - eps)
    return -math.log(p if y == 1 else 1 - p)


class CostProfile(BaseModel):
    """The costs of each decision for a binary task with an abstain action.

    A correct decision costs 0. ``missed`` is a false negative (an attack let through), ``false_alarm``
    a false positive and ``abstain`` the cost of deferring to a human. The defaults are the security
    setting: a missed attack is far worse than a false alarm, and abstaining is cheaper than either.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    missed: float = Field(10.0, gt=0, description="Cost of a false negative (missed attack).")
    false_alarm: float = Field(1.0, gt=0, description="Cost of a false positive (false alarm).")
    abstain: float = Field(0.5, ge=0, description="Cost of abstaining, whatever the truth.")

    @model_validator(mode="after")
    def _abstain_below_errors(self) -> CostProfile:
        if self.abstain >= min(self.missed, self.false_alarm):
            raise ValueError(
                f"abstain cost {self.abstain} must be below both error costs "
                f"(missed={self.missed}, false_alarm={self.false_alarm}), or abstaining is never useful"
            )
        return self

    @property
    def max_cost(self) -> float:
        return max(self.missed, self.false_alarm)

    def cost(self, action: Action, y: int) -> float:
        """The cost of ``action`` when the truth is ``y`` (1 = positive).

        >>> CostProfile().cost("negative", 1)
        10.0
        """
        if action == "abstain":
            return self.abstain
        if action == "positive":
            return 0.0 if y == 1 else self.false_alarm
        return self.missed if y == 1 else 0.0

    def expected_cost(self, action: Action, p: float) -> float:
        """Expected cost of ``action`` when the truth is positive with probability ``p``."""
        return p * self.cost(action, 1) + (1 - p) * self.cost(action, 0)

    def bayes_action(self, p: float) -> Action:
        """The action of least expected cost for probability ``p`` (ties go to the cheaper error).

        >>> [CostProfile().bayes_action(p) for p in (0.01, 0.2, 0.9)]
        ['negative', 'abstain', 'positive']
        """
        costs = {a: self.expected_cost(a, p) for a in ("positive", "abstain", "negative")}
        return min(costs, key=lambda a: (costs[a], a != "abstain"))  # type: ignore[return-value]

    def abstain_band(self) -> tuple[float, float]:
        """The interval of ``p`` in which abstaining is the Bayes action.

        Abstain beats "negative" when ``p * missed > abstain`` and beats "positive" when
        ``(1 - p) * false_alarm > abstain``.

        >>> CostProfile().abstain_band()
        (0.05, 0.5)
        """
        return self.abstain / self.missed, 1 - self.abstain / self.false_alarm

    def decision_reward(self, action: Action, y: int) -> float:
        """Cost mapped to [0, 1]: 1 for a correct decision, 0 for the costliest error."""
        return 1.0 - self.cost(action, y) / self.max_cost
