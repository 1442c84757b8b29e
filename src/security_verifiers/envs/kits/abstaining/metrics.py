"""Metrics of an abstaining classifier, computed from its outcomes only (:class:`.reward.ClassifierOutcome`).

Invalid answers stay in every all-item quantity (expected cost at their recorded maximum cost, reward 0,
format-valid rate) and drop out of the quantities that need a parsed answer (detection rates, Brier, ECE,
AURC), so an unparseable reply is never a free pass. Outcomes are read by key, strictly: a missing field is
an error, never a default.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from security_verifiers.core.metrics import (
    aurc,
    binary_decision_metrics,
    bootstrap_ci,
    decision_confidence_loss,
    ece,
    group_indices,
    group_reward,
    mean_or_none,
)
from security_verifiers.core.metrics_report import CONSTANT_REWARD, ConstantPolicy
from security_verifiers.core.scoring import Action, brier_score
from security_verifiers.envs.kits.abstaining.reward import AbstainingConfig, Labels

N_BINS = 10
#: The metrics that get bootstrap intervals (all from the same resamples).
INTERVAL_METRICS = ("reward_mean", "expected_cost", "f1", "precision", "tpr", "fpr", "brier", "ece", "aurc")
#: Decimals of the probability the constant policy states (what its answer text holds, and what it is scored on).
CONSTANT_DECIMALS = 4

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
    def of(cls, outcomes: Sequence[Mapping[str, Any]]) -> Columns:
        def floats(key: str) -> NDArray[np.float64]:
            return np.array([np.nan if o[key] is None else o[key] for o in outcomes], dtype=float)

        return cls(
            y=np.array([o["y"] for o in outcomes], dtype=np.int8),
            action=np.array([o["action"] or "" for o in outcomes], dtype=str),
            valid=np.array([o["valid"] for o in outcomes], dtype=bool),
            p=floats("p"), cost=floats("cost"), brier=floats("brier"), reward=floats("reward"),
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


def flat_metrics(c: Columns) -> dict[str, float | int | None]:
    """Every scalar metric of one set of outcomes (the whole run, or one split or difficulty)."""
    p_valid, y_valid = c.forecasts()
    return {
        **c.decisions(),
        "expected_cost": mean_or_none(c.cost),
        "brier": c.valid_mean(c.brier),
        "ece": ece(p_valid, y_valid, N_BINS),
        "aurc": aurc(*decision_confidence_loss(p_valid, y_valid)),
        "reward_mean": mean_or_none(c.reward),
    }


def intervals(c: Columns, items: Sequence[str] | None) -> dict[str, list[float | None]]:
    """Bootstrap 95% intervals of :data:`INTERVAL_METRICS`; every metric sees the same resamples (one seed)."""
    stats: dict[str, Callable[[NDArray[np.intp]], float | None]] = {
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
    return {key: list(bootstrap_ci(c.n, stats[key], clusters=items)) for key in INTERVAL_METRICS}


def constant_policy(c: Columns, config: AbstainingConfig, labels: Labels) -> ConstantPolicy | None:
    """The best answer that ignores the item, and the mean reward it earns on these outcomes' items.

    The reward is separable: the decision part depends on the label alone and the Brier part on the probability
    alone, so the best constant states the items' positive rate ``rate`` (rounded to :data:`CONSTANT_DECIMALS`, as
    its answer text states it) and takes the label whose mean cost-profile reward is highest. Its mean reward is
    the scorer's per-item reward averaged over the two truths, weighted by their shares: a function of ``rate``
    alone, so two splits with the same rate show the same floor to the last digit. ``None`` without outcomes.
    """
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


def family_row(outcomes: Sequence[Mapping[str, Any]], labels: Labels) -> dict[str, Any]:
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


def point_metrics(outcomes: Sequence[dict[str, Any]]) -> dict[str, float | int | None]:
    """The scalar metrics of ``outcomes`` without intervals (a paired bootstrap recomputes them per resample)."""
    return flat_metrics(Columns.of(outcomes))


def classifier_metrics(outcomes: Sequence[dict[str, Any]], config: AbstainingConfig, labels: Labels,
                       items: Sequence[str] | None = None) -> dict[str, Any]:
    """``{"metrics": flat, "intervals": {metric: [lo, hi]}, "breakdowns": {family|split|difficulty: ...},
    "constant_policy": ...}``.

    ``config`` holds the costs and weights the outcomes were scored under; the costs are echoed in the metrics
    (``cost_missed`` ...) so an expected cost is never read without the costs that produced it, and with the
    weights they give :func:`constant_policy`. ``items`` (the item id of each outcome) makes the bootstrap
    resample items rather than rollouts. Every breakdown row adds ``reward_ci`` and ``few_items``
    (:func:`~security_verifiers.core.metrics.group_reward`).
    """
    c = Columns.of(outcomes)
    costs = config.costs
    constant = constant_policy(c, config, labels)

    def rows(key: str, fn: Callable[[Sequence[Mapping[str, Any]]], dict[str, Any]]) -> dict[str, dict[str, Any]]:
        return {name: {**fn([outcomes[i] for i in idx]),
                       **group_reward(c.reward[idx], None if items is None else [items[i] for i in idx])}
                for name, idx in group_indices([o[key] for o in outcomes]).items()}

    def flat(group: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        return flat_metrics(Columns.of(group))

    metrics = {**flat_metrics(c), "cost_missed": costs.missed, "cost_false_alarm": costs.false_alarm,
               "cost_abstain": costs.abstain, CONSTANT_REWARD: None if constant is None else constant.reward_mean}
    return {
        "metrics": metrics,
        "intervals": intervals(c, items),
        "breakdowns": {
            "family": rows("family", lambda group: family_row(group, labels)),
            "split": rows("split", flat),
            "difficulty": rows("difficulty", flat),
        },
        "constant_policy": None if constant is None else constant.model_dump(),
    }
