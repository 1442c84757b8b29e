"""Metrics of an abstaining classifier, computed from its outcomes only (:class:`.reward.ClassifierOutcome`), as
the declarations :func:`~security_verifiers.core.metrics_builder.build_metrics` turns into the report (the same
builder as every other environment's): the flat metrics, the bootstrap statistics, the breakdowns by family,
split and difficulty, the costs echoed with the run's metrics, and the constant-policy floor.

Invalid answers stay in every all-item quantity (expected cost at their recorded maximum cost, reward 0,
format-valid rate) and drop out of the quantities that need a parsed answer (detection rates, Brier, ECE,
AURC), so an unparseable reply is never a free pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from security_verifiers.core.metrics import (
    aurc,
    binary_decision_metrics,
    decision_confidence_loss,
    ece,
    mean_or_none,
)
from security_verifiers.core.metrics_builder import Breakdown, FlatMetrics, Statistic
from security_verifiers.core.metrics_report import ConstantPolicy
from security_verifiers.core.scoring import Action, brier_score
from security_verifiers.envs.kits.abstaining.reward import AbstainingConfig, ClassifierOutcome, Labels

N_BINS = 10
#: The metrics that get bootstrap intervals (all from the same resamples).
INTERVAL_METRICS = ("reward_mean", "expected_cost", "f1", "precision", "tpr", "fpr", "brier", "ece", "aurc")
#: Decimals of the probability the constant policy states (what its answer text holds, and what it is scored on).
CONSTANT_DECIMALS = 4

#: The kit's headline metrics defined exactly (SVBENCH.md); an environment adds its own (E4: the evidence part's).
#: "Covered": a valid answer whose label is not Abstain. A ratio with a zero denominator is undefined (None).
DEFINITIONS: dict[str, str] = {
    "reward_mean": "Mean reward over all scored rollouts (infrastructure errors left out). A valid answer earns "
                   "decision_weight x (1 - cost / max_cost) + brier_weight x (1 - (p - y)^2), with cost the "
                   "configured profile's cost of its label (0 when right, `abstain` for Abstain) and max_cost = "
                   "max(missed, false_alarm); an unparseable answer earns 0.",
    "expected_cost": "Mean decision cost over all scored rollouts under the configured cost profile: a correct "
                     "label 0, a missed positive `missed`, a false alarm `false_alarm`, Abstain `abstain`, an "
                     "unparseable answer max(missed, false_alarm). Lower is better.",
    "f1": "2 TP / (2 TP + FP + FN) over the covered answers (valid, not Abstain), the positive class being the "
          "attack/phishing label; abstentions and unparseable answers count in neither; undefined without TP, FP "
          "and FN.",
    "brier": "Mean of (p - y)^2 over the valid answers (p the stated probability of the positive class, y 1 for a "
             "positive item); unparseable answers are left out (they are in reward_mean at 0). Lower is better.",
    "abstain_rate": "Valid answers labelled Abstain / all scored rollouts (so coverage + abstain_rate + the "
                    "unparseable share = 1).",
}

_Index = NDArray[np.intp] | slice
_ALL = slice(None)


@dataclass(frozen=True)
class Columns:
    """The outcomes as aligned numpy columns; ``p`` and ``brier`` are NaN where the answer is invalid."""

    y: NDArray[np.int8]
    action: NDArray[np.str_]
    valid: NDArray[np.bool_]
    p: NDArray[np.float64]
    cost: NDArray[np.float64]
    brier: NDArray[np.float64]
    reward: NDArray[np.float64]

    @classmethod
    def of(cls, outcomes: Sequence[ClassifierOutcome]) -> Columns:
        def floats(values: list[float | None]) -> NDArray[np.float64]:
            return np.array([np.nan if v is None else v for v in values], dtype=float)

        return cls(
            y=np.array([o.y for o in outcomes], dtype=np.int8),
            action=np.array([o.action or "" for o in outcomes], dtype=str),
            valid=np.array([o.valid for o in outcomes], dtype=bool),
            p=floats([o.p for o in outcomes]), cost=floats([o.cost for o in outcomes]),
            brier=floats([o.brier for o in outcomes]), reward=floats([o.reward for o in outcomes]),
        )

    @property
    def n(self) -> int:
        return int(self.y.size)

    def decisions(self, idx: _Index = _ALL) -> dict[str, float | int | None]:
        """Decision metrics of the items at ``idx`` (all by default; a bootstrap passes a resample)."""
        return binary_decision_metrics(self.y[idx], self.action[idx], self.valid[idx])

    def valid_mean(self, values: NDArray[np.float64], idx: _Index = _ALL) -> float | None:
        """Mean of ``values`` over the valid answers among the items at ``idx``."""
        return mean_or_none(values[idx][self.valid[idx]])

    def forecasts(self, idx: _Index = _ALL) -> tuple[NDArray[np.float64], NDArray[np.int8]]:
        """The stated probabilities and truths of the valid answers among the items at ``idx``."""
        valid = self.valid[idx]
        return self.p[idx][valid], self.y[idx][valid]


def flat_metrics(outcomes: Sequence[ClassifierOutcome]) -> dict[str, float | int | None]:
    """Every scalar metric of one set of outcomes (the whole run, one split or difficulty, a paired bootstrap's
    resample)."""
    c = Columns.of(outcomes)
    p_valid, y_valid = c.forecasts()
    return {
        **c.decisions(),
        "expected_cost": mean_or_none(c.cost),
        "brier": c.valid_mean(c.brier),
        "ece": ece(p_valid, y_valid, N_BINS),
        "aurc": aurc(*decision_confidence_loss(p_valid, y_valid)),
        "reward_mean": mean_or_none(c.reward),
    }


def interval_statistics(outcomes: Sequence[ClassifierOutcome]) -> dict[str, Statistic]:
    """The bootstrap statistic of each of :data:`INTERVAL_METRICS` (the builder draws every one from the same
    resamples)."""
    c = Columns.of(outcomes)
    stats: dict[str, Statistic] = {
        "reward_mean": lambda idx: mean_or_none(c.reward[idx]),
        "expected_cost": lambda idx: mean_or_none(c.cost[idx]),
        "f1": lambda idx: c.decisions(idx)["f1"],
        "precision": lambda idx: c.decisions(idx)["precision"],
        "tpr": lambda idx: c.decisions(idx)["tpr"],
        "fpr": lambda idx: c.decisions(idx)["fpr"],
        "brier": lambda idx: c.valid_mean(c.brier, idx),
        "ece": lambda idx: ece(*c.forecasts(idx), N_BINS),
        "aurc": lambda idx: aurc(*decision_confidence_loss(*c.forecasts(idx))),
    }
    return {key: stats[key] for key in INTERVAL_METRICS}


def cost_metrics(config: AbstainingConfig) -> dict[str, float]:
    """The costs the outcomes were scored under, echoed with the run's metrics, so that an expected cost is never
    read without the costs that produced it."""
    costs = config.costs
    return {"cost_missed": costs.missed, "cost_false_alarm": costs.false_alarm, "cost_abstain": costs.abstain}


def constant_policy(outcomes: Sequence[ClassifierOutcome], config: AbstainingConfig,
                    labels: Labels) -> ConstantPolicy | None:
    """The best answer that ignores the item, and the mean reward it earns on these outcomes' items.

    The reward is separable: the decision part depends on the label alone and the Brier part on the probability
    alone, so the best constant states the items' positive rate ``rate`` (rounded to :data:`CONSTANT_DECIMALS`, as
    its answer text states it) and takes the label whose mean cost-profile reward is highest. Its mean reward is
    the scorer's per-item reward averaged over the two truths, weighted by their shares: a function of ``rate``
    alone, so two splits with the same rate show the same floor to the last digit. ``None`` without outcomes.
    """
    c = Columns.of(outcomes)
    if c.n == 0:
        return None
    rate = float(c.y.mean())
    p = round(rate, CONSTANT_DECIMALS)
    costs = config.costs

    def mean_reward(action: Action) -> float:
        return sum(share * (config.decision_weight * costs.decision_reward(action, y)
                            + config.brier_weight * (1.0 - brier_score(p, y)))
                   for y, share in ((1, rate), (0, 1.0 - rate)))

    actions: tuple[Action, ...] = ("abstain", "negative", "positive")
    by_action: dict[Action, float] = {a: mean_reward(a) for a in actions}
    best = max(by_action, key=lambda a: by_action[a])  # a tie goes to the earlier: abstaining claims least
    others = ", ".join(f"always-{labels.label(a).lower()} {r:.4f}" for a, r in by_action.items() if a != best)
    return ConstantPolicy(
        policy=f"always-{labels.label(best).lower()}", answer=labels.answer_text(best, p), reward_mean=by_action[best],
        note=f"The best answer that ignores the item: the label of highest mean reward under the configured costs and "
             f"weights (the others: {others}), stating the items' {labels.positive} rate {p} as {labels.probability}.")


def family_row(outcomes: Sequence[ClassifierOutcome], labels: Labels) -> dict[str, Any]:
    """One family: its detection rate if positive, its false-alarm rate if negative (both if mixed)."""
    c = Columns.of(outcomes)
    d = c.decisions()
    has_positive, has_negative = bool(c.y.any()), not bool(c.y.all())
    row: dict[str, Any] = {"n": c.n, "label": "mixed" if has_positive and has_negative
                           else labels.positive if has_positive else labels.negative}
    if has_positive:
        row["detection_rate"] = d["tpr"]
    if has_negative:
        row["false_alarm_rate"] = d["fpr"]
    row.update(abstain_rate=d["abstain_rate"], format_valid_rate=d["format_valid_rate"],
               expected_cost=mean_or_none(c.cost), reward_mean=mean_or_none(c.reward))
    return row


def classifier_breakdowns(labels: Labels, *, family: FlatMetrics | None = None,
                          split: FlatMetrics | None = None) -> dict[str, Breakdown]:
    """The breakdowns by family (:func:`family_row`), split and difficulty (:func:`flat_metrics`); an environment
    whose outcomes carry more (E4's evidence) gives its own rows for the family and split breakdowns."""
    return {
        "family": Breakdown(key=lambda o: o.family, flat=family or (lambda group: family_row(group, labels))),
        "split": Breakdown(key=lambda o: o.split, flat=split or flat_metrics),
        "difficulty": Breakdown(key=lambda o: o.difficulty, flat=flat_metrics),
    }
