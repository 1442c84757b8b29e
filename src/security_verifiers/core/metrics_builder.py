"""One builder of the metrics report from typed outcomes: what an environment declares, turned into the dict that
:meth:`~security_verifiers.envs.base.Environment.metrics` returns (``{"metrics", "intervals", "breakdowns",
"constant_policy"}``, the shape :class:`~.metrics_report.MetricsReport` validates).

An environment gives its flat-metrics function (the scalar metrics of any set of outcomes), the metrics that get a
bootstrap interval (each a statistic of the resampled rows; most are the mean of a per-outcome value:
:func:`mean_statistics`), its breakdowns (a group label per outcome, optionally over a subset, or rows of its own
making) and its constant policy. The intervals are drawn here, with
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
#: A bootstrap statistic: its value on the rows at the drawn indices (``None`` where undefined on them).
Statistic = Callable[[NDArray[np.intp]], float | None]


def mean_statistics(values: Mapping[str, Callable[[Any], float]], outcomes: Sequence[Any]) -> dict[str, Statistic]:
    """Each metric of ``values`` (metric -> the per-outcome value whose mean it is, NaN where it does not apply) as
    the bootstrap statistic of ``outcomes``."""
    return {metric: mean_of(np.array([value(o) for o in outcomes], dtype=float)) for metric, value in values.items()}


@dataclass(frozen=True)
class Breakdown:
    """One breakdown: the group label of an outcome (``key``), or its labels (``many``: an outcome counts under each,
    ``["none"]`` when it has none), over the outcomes ``among`` accepts (all when ``None``). Groups are listed by
    name; a ``None`` label is the group ``"unknown"``. Each group's row is ``flat`` of its outcomes (the report's
    flat metrics when ``None``; the abstaining kit's family rows say a detection or false-alarm rate instead). Or
    rows of the environment's own making (``rows``: E2's rule and severity rows count findings, not outcomes)."""

    key: Callable[[Any], Any] | None = None
    many: Callable[[Any], Iterable[Any]] | None = None
    among: Callable[[Any], bool] | None = None
    rows: Callable[[Sequence[Any]], dict[str, dict[str, Any]]] | None = None
    flat: FlatMetrics | None = None

    def __post_init__(self) -> None:
        if sum(f is not None for f in (self.key, self.many, self.rows)) != 1:
            raise ValueError("a breakdown takes exactly one of key, many and rows")

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
                  intervals: Callable[[Sequence[Any]], Mapping[str, Statistic]] | None = None,
                  breakdowns: Mapping[str, Breakdown] | None = None,
                  constant: ConstantPolicy | None = None, floor: bool = True,
                  run: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The metrics report of ``outcomes`` (``items``: the item id of each, for the bootstrap's clusters).

    ``intervals`` gives the bootstrap statistic of each metric with an interval, on these outcomes (every one drawn
    from the same seed, so all see the same resamples); they are left out when there are no outcomes.
    ``constant``: the floor, whose reward is also the flat ``constant_reward`` (``None`` where there is none on
    these outcomes); ``floor`` False: the environment computes no floor, and the report has neither key.
    ``run``: metrics of the whole run only, after the flat ones (E1 and E4 echo the costs they scored with).
    """
    drawn: dict[str, list[float | None]] = {}
    if outcomes and intervals is not None:
        for metric, statistic in intervals(outcomes).items():
            lo, hi = bootstrap_ci(len(outcomes), statistic, clusters=items)
            drawn[metric] = [lo, hi]
    report: dict[str, Any] = {
        "metrics": {**flat(outcomes), **(run or {}),
                    CONSTANT_REWARD: None if constant is None else constant.reward_mean},
        "intervals": drawn,
        "breakdowns": {name: breakdown_rows(outcomes, items, flat, b) for name, b in (breakdowns or {}).items()},
        "constant_policy": None if constant is None else constant.model_dump(),
    }
    if not floor:
        del report["metrics"][CONSTANT_REWARD], report["constant_policy"]
    return report


def breakdown_rows(outcomes: Sequence[Any], items: Sequence[str] | None, flat: FlatMetrics,
                   breakdown: Breakdown) -> dict[str, dict[str, Any]]:
    """Each group's flat metrics, its reward's interval and its ``few_items`` flag (or the breakdown's own rows)."""
    if breakdown.rows is not None:
        return breakdown.rows(outcomes)
    rows, groups = breakdown.groups(outcomes)
    covered = [outcomes[k] for k in rows]
    labels = None if items is None else [items[k] for k in rows]
    rewards = np.array([o.reward for o in covered], dtype=float)
    flat = breakdown.flat or flat
    return {name: {**flat([covered[i] for i in idx]),
                   **group_reward(rewards[idx], None if labels is None else [labels[i] for i in idx])}
            for name, idx in groups.items()}
