"""One builder of the metrics report from typed outcomes: what an environment declares, turned into the dict that
:meth:`~security_verifiers.envs.base.Environment.metrics` returns (``{"metrics", "intervals", "breakdowns",
"constant_policy"}``, the shape :class:`~.metrics_report.MetricsReport` validates).

An environment gives its flat-metrics function (the scalar metrics of any set of outcomes), the metrics that get a
bootstrap interval (each as the per-outcome value whose mean it is), its breakdowns (a group label per outcome,
optionally over a subset) and its constant policy. The intervals are drawn here, with
:data:`~.metrics.N_BOOT` resamples from :data:`~.metrics.BOOT_SEED`, resampling items rather than rollouts when the
item of each outcome is given; each breakdown row is the group's flat metrics plus its ``reward_ci`` and
``few_items`` (:func:`~.metrics.group_reward`). Outcomes are read for their ``reward`` attribute.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from security_verifiers.core.metrics import bootstrap_ci, group_indices, group_reward, mean_of
from security_verifiers.core.metrics_report import CONSTANT_REWARD, ConstantPolicy

FlatMetrics = Callable[[Sequence[Any]], dict[str, Any]]


@dataclass(frozen=True)
class Breakdown:
    """One breakdown: the group label of an outcome (``key``), or its labels (``many``: an outcome counts under each,
    ``["none"]`` when it has none), over the outcomes ``among`` accepts (all when ``None``). Groups are listed by
    name; a ``None`` label is the group ``"unknown"``."""

    key: Callable[[Any], Any] | None = None
    many: Callable[[Any], Iterable[Any]] | None = None
    among: Callable[[Any], bool] | None = None

    def __post_init__(self) -> None:
        if (self.key is None) == (self.many is None):
            raise ValueError("a breakdown takes exactly one of key and many")

    def groups(self, outcomes: Sequence[Any]) -> tuple[list[int], dict[str, NDArray[np.intp]]]:
        """The outcomes it covers (their indices), and each group's rows among them."""
        rows = [k for k, o in enumerate(outcomes) if self.among is None or self.among(o)]
        if self.key is not None:
            return rows, group_indices([self.key(outcomes[k]) for k in rows])
        by: dict[str, list[int]] = {}
        for row, k in enumerate(rows):
            for label in list(self.many(outcomes[k])) or ["none"]:  # type: ignore[misc]
                by.setdefault("unknown" if label is None else str(label), []).append(row)
        return rows, {name: np.array(by[name], dtype=np.intp) for name in sorted(by)}


def build_metrics(outcomes: Sequence[Any], items: Sequence[str] | None, flat: FlatMetrics,
                  intervals: Mapping[str, Callable[[Any], float]] | None = None,
                  breakdowns: Mapping[str, Breakdown] | None = None,
                  constant: ConstantPolicy | None = None, floor: bool = True) -> dict[str, Any]:
    """The metrics report of ``outcomes`` (``items``: the item id of each, for the bootstrap's clusters).

    ``intervals`` maps a metric to the per-outcome value whose mean it is (NaN where it does not apply); they are
    left out when there are no outcomes. ``constant``: the floor, whose reward is also the flat ``constant_reward``
    (``None`` where there is none on these outcomes); ``floor`` False: the environment computes no floor, and the
    report has neither key.
    """
    drawn: dict[str, list[float | None]] = {}
    if outcomes:
        for metric, value in (intervals or {}).items():
            values = np.array([value(o) for o in outcomes], dtype=float)
            lo, hi = bootstrap_ci(len(outcomes), mean_of(values), clusters=items)
            drawn[metric] = [lo, hi]
    report: dict[str, Any] = {
        "metrics": {**flat(outcomes), CONSTANT_REWARD: None if constant is None else constant.reward_mean},
        "intervals": drawn,
        "breakdowns": {name: breakdown_rows(outcomes, items, flat, b) for name, b in (breakdowns or {}).items()},
        "constant_policy": None if constant is None else constant.model_dump(),
    }
    if not floor:
        del report["metrics"][CONSTANT_REWARD], report["constant_policy"]
    return report


def breakdown_rows(outcomes: Sequence[Any], items: Sequence[str] | None, flat: FlatMetrics,
                   breakdown: Breakdown) -> dict[str, dict[str, Any]]:
    """Each group's flat metrics, its reward's interval and its ``few_items`` flag."""
    rows, groups = breakdown.groups(outcomes)
    covered = [outcomes[k] for k in rows]
    labels = None if items is None else [items[k] for k in rows]
    rewards = np.array([o.reward for o in covered], dtype=float)
    return {name: {**flat([covered[i] for i in idx]),
                   **group_reward(rewards[idx], None if labels is None else [labels[i] for i in idx])}
            for name, idx in groups.items()}
