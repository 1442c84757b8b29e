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
    breakdown,
    decision_confidence_loss,
    ece,
    mean_or_none,
)
from security_verifiers.core.scoring import CostProfile
from security_verifiers.envs.kits.abstaining.reward import Labels

N_BOOT = 1000
BOOT_SEED = 0
N_BINS = 10
#: The metrics that get bootstrap intervals.
INTERVAL_METRICS = ("reward_mean", "expected_cost", "f1", "tpr", "fpr", "brier")

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


def flat_metrics(c: Columns) -> dict[str, float | int | None]:
    """Every scalar metric of one set of outcomes (the whole run, or one split or difficulty)."""
    p_valid, y_valid = c.p[c.valid], c.y[c.valid]
    return {
        **c.decisions(),
        "expected_cost": mean_or_none(c.cost),
        "brier": c.valid_mean(c.brier),
        "ece": ece(p_valid, y_valid, N_BINS),
        "aurc": aurc(*decision_confidence_loss(p_valid, y_valid)),
        "reward_mean": mean_or_none(c.reward),
    }


def intervals(c: Columns, items: Sequence[str] | None) -> dict[str, list[float | None]]:
    """Bootstrap 95% intervals of the headline metrics; every metric sees the same resamples (one seed)."""
    stats: dict[str, Callable[[NDArray[np.intp]], float | None]] = {
        "reward_mean": lambda idx: mean_or_none(c.reward[idx]),
        "expected_cost": lambda idx: mean_or_none(c.cost[idx]),
        "f1": lambda idx: c.decisions(idx)["f1"],
        "tpr": lambda idx: c.decisions(idx)["tpr"],
        "fpr": lambda idx: c.decisions(idx)["fpr"],
        "brier": lambda idx: c.valid_mean(c.brier, idx),
    }
    return {key: list(bootstrap_ci(c.n, stats[key], n_boot=N_BOOT, seed=BOOT_SEED, clusters=items))
            for key in INTERVAL_METRICS}


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


def classifier_metrics(outcomes: Sequence[dict[str, Any]], costs: CostProfile, labels: Labels,
                       items: Sequence[str] | None = None) -> dict[str, Any]:
    """``{"metrics": flat, "intervals": {metric: [lo, hi]}, "breakdowns": {family|split|difficulty: ...}}``.

    ``costs`` is the profile the outcomes were scored under; its values are echoed in the metrics
    (``cost_missed`` ...) so an expected cost is never read without the costs that produced it.
    ``items`` (the item id of each outcome) makes the bootstrap resample items rather than rollouts.
    """
    c = Columns.of(outcomes)

    def flat(group: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        return flat_metrics(Columns.of(group))

    metrics = {**flat_metrics(c), "cost_missed": costs.missed, "cost_false_alarm": costs.false_alarm,
               "cost_abstain": costs.abstain}
    return {
        "metrics": metrics,
        "intervals": intervals(c, items),
        "breakdowns": {
            "family": breakdown(outcomes, "family", lambda group: family_row(group, labels)),
            "split": breakdown(outcomes, "split", flat),
            "difficulty": breakdown(outcomes, "difficulty", flat),
        },
    }
