"""Metrics shared by every environment: decisions with abstention, calibration, selective risk, bootstrap.

Everything is vectorised with numpy, so one call over 10,000 items takes microseconds and a
1,000-resample bootstrap of it well under a second. Every value returned is a plain Python ``float``
or ``int``, or ``None`` where the quantity is undefined (an empty denominator): never ``0``, which
would read as a measurement, and never ``NaN``, which is not valid JSON.

Decision vocabulary (the one :class:`~security_verifiers.core.scoring.CostProfile` uses): an answer
is *valid* when it parsed; a valid answer's action is ``"positive"``, ``"negative"`` or
``"abstain"``; an item is *covered* when its answer is valid and not an abstention.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

POSITIVE, NEGATIVE, ABSTAIN = "positive", "negative", "abstain"
#: Resamples of every bootstrap interval a metrics report shows, and the seed they are drawn from: defined once, so
#: the intervals of every environment (and of ``sv compare``) are drawn the same way.
N_BOOT = 1000
BOOT_SEED = 0
#: Column order of :func:`confusion_matrix`.
CONFUSION_COLUMNS = (NEGATIVE, ABSTAIN, POSITIVE, "invalid")


def ratio(num: float, den: float) -> float | None:
    """``num / den``, or ``None`` when the denominator is zero (an undefined rate, not a zero one).

    >>> ratio(1, 4), ratio(0, 0)
    (0.25, None)
    """
    return None if den == 0 else float(num) / float(den)


def mean_or_none(values: ArrayLike) -> float | None:
    """Mean of ``values``, or ``None`` when there are none.

    >>> mean_or_none([1, 2]), mean_or_none([])
    (1.5, None)
    """
    arr = np.asarray(values, dtype=float)
    return float(arr.mean()) if arr.size else None


def mean_of(values: NDArray[np.float64]) -> Callable[[NDArray[np.intp]], float | None]:
    """A bootstrap statistic: the mean of ``values`` at the drawn rows, NaN rows (where the quantity does not apply,
    e.g. a repair rate on an item with no program) left out; ``None`` when every drawn row is NaN.

    >>> stat = mean_of(np.array([1.0, float("nan"), 3.0]))
    >>> stat(np.array([0, 1, 2])), stat(np.array([1, 1]))
    (2.0, None)
    """
    def mean(idx: NDArray[np.intp]) -> float | None:
        drawn = values[idx]
        kept = drawn[~np.isnan(drawn)]
        return float(kept.mean()) if kept.size else None

    return mean


def _actions(action: ArrayLike) -> NDArray[np.str_]:
    """Actions as a numpy string array (``None`` becomes ``""``) so comparisons stay vectorised.

    An array that is already of string dtype is returned as is, which keeps bootstrap resamples cheap.
    """
    arr = np.asarray(action)
    if arr.dtype.kind == "U":
        return arr
    return np.array(["" if a is None else str(a) for a in arr.tolist()], dtype=str)


def _decision_arrays(
    y: ArrayLike, action: ArrayLike, valid: ArrayLike
) -> tuple[NDArray[np.bool_], NDArray[np.str_], NDArray[np.bool_]]:
    truth = np.asarray(y).astype(bool)
    act = _actions(action)
    ok = np.asarray(valid, dtype=bool)
    if not truth.shape == act.shape == ok.shape or truth.ndim != 1:
        raise ValueError(f"y, action and valid must be 1-D and equally long, got {truth.shape}, "
                         f"{act.shape}, {ok.shape}")
    return truth, act, ok


def binary_decision_metrics(
    y: ArrayLike, action: ArrayLike, valid: ArrayLike
) -> dict[str, float | int | None]:
    """Detection metrics of a binary decision with an abstain option and unparseable answers.

    ``y`` is the truth (1 = positive), ``action`` one of ``"positive"``/``"negative"``/``"abstain"``
    (anything, e.g. ``None``, where the answer is invalid) and ``valid`` whether the answer parsed.

    - ``tpr``, ``fpr``, ``fnr``, ``precision``, ``f1``, ``accuracy`` count only *covered* items (valid
      and not abstained): they describe the decisions the model actually made.
    - ``coverage`` = covered / all items, ``abstain_rate`` = valid abstentions / all items and
      ``format_valid_rate`` = valid / all items, so the three refer to the same denominator and
      ``coverage + abstain_rate + (1 - format_valid_rate) == 1``.
    - The raw counts (``tp``, ``fp``, ``tn``, ``fn``, ``n_abstain`` ...) come along for reports.

    >>> m = binary_decision_metrics([1, 1, 0, 0], ["positive", "abstain", "positive", None],
    ...                             [True, True, True, False])
    >>> m["tpr"], m["fpr"], m["coverage"], m["abstain_rate"], m["format_valid_rate"]
    (1.0, 1.0, 0.5, 0.25, 0.75)
    """
    truth, act, ok = _decision_arrays(y, action, valid)
    pos = ok & (act == POSITIVE)
    neg = ok & (act == NEGATIVE)
    tp = int(np.count_nonzero(pos & truth))
    fp = int(np.count_nonzero(pos & ~truth))
    tn = int(np.count_nonzero(neg & ~truth))
    fn = int(np.count_nonzero(neg & truth))
    n, covered = int(truth.size), tp + fp + tn + fn
    n_valid = int(np.count_nonzero(ok))
    n_abstain = int(np.count_nonzero(ok & (act == ABSTAIN)))
    return {
        "n": n, "n_valid": n_valid, "n_covered": covered, "n_abstain": n_abstain,
        "tp": tp, "fp": fp, "tn": tn, "fn": fn,
        "tpr": ratio(tp, tp + fn),
        "fpr": ratio(fp, fp + tn),
        "fnr": ratio(fn, tp + fn),
        "precision": ratio(tp, tp + fp),
        # 2tp / (2tp + fp + fn): 0 when there are positives but none found, undefined only when empty.
        "f1": ratio(2 * tp, 2 * tp + fp + fn),
        "accuracy": ratio(tp + tn, covered),
        "coverage": ratio(covered, n),
        "abstain_rate": ratio(n_abstain, n),
        "format_valid_rate": ratio(n_valid, n),
    }


def confusion_matrix(y: ArrayLike, action: ArrayLike, valid: ArrayLike) -> list[list[int]]:
    """Counts with rows = truth (negative, positive) and columns = :data:`CONFUSION_COLUMNS`.

    Abstentions and invalid answers get their own columns, so every item is counted exactly once.

    >>> confusion_matrix([0, 1, 1, 1], ["negative", "abstain", "positive", None], [1, 1, 1, 0])
    [[1, 0, 0, 0], [0, 1, 1, 1]]
    """
    truth, act, ok = _decision_arrays(y, action, valid)
    column = np.full(truth.shape, 3)
    for j, name in enumerate(CONFUSION_COLUMNS[:3]):
        column[ok & (act == name)] = j
    counts = np.zeros((2, 4), dtype=int)
    np.add.at(counts, (truth.astype(int), column), 1)
    return counts.tolist()


def _probabilities(p: ArrayLike, y: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    prob = np.asarray(p, dtype=float)
    truth = np.asarray(y, dtype=float)
    if prob.shape != truth.shape or prob.ndim != 1:
        raise ValueError(f"p and y must be 1-D and equally long, got {prob.shape} and {truth.shape}")
    if prob.size and not (np.all(prob >= 0.0) and np.all(prob <= 1.0)):
        raise ValueError("probabilities must lie in [0, 1] (and not be NaN)")
    return prob, truth


def _bin_sums(
    p: NDArray[np.float64], y: NDArray[np.float64], n_bins: int
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Per-bin count, sum of ``p`` and sum of ``y``; equal-width bins ``[k/n, (k+1)/n)``, 1.0 in the last."""
    if n_bins < 1:
        raise ValueError(f"n_bins must be at least 1, got {n_bins}")
    idx = np.clip(np.floor(p * n_bins).astype(int), 0, n_bins - 1)
    count = np.bincount(idx, minlength=n_bins).astype(float)
    return count, np.bincount(idx, weights=p, minlength=n_bins), np.bincount(idx, weights=y, minlength=n_bins)


def ece(p: ArrayLike, y: ArrayLike, n_bins: int = 10) -> float | None:
    """Expected calibration error: the count-weighted mean gap between forecast and frequency per bin.

    Equal-width bins, so the value is comparable across models (equal-mass bins would move with each
    model's forecasts). ``None`` when there are no forecasts.

    >>> ece([0.25, 0.25, 0.25, 0.25], [1, 0, 0, 0])  # perfectly calibrated
    0.0
    >>> ece([0.9, 0.9], [0, 0])
    0.9
    """
    prob, truth = _probabilities(p, y)
    if prob.size == 0:
        return None
    _, sum_p, sum_y = _bin_sums(prob, truth, n_bins)
    return float(np.sum(np.abs(sum_p - sum_y)) / prob.size)


def reliability_bins(p: ArrayLike, y: ArrayLike, n_bins: int = 10) -> list[dict[str, float | int | None]]:
    """The bins of a reliability diagram: edges, count, mean forecast and observed positive fraction.

    Empty bins are kept (with ``None`` means) so a plot or table always has ``n_bins`` rows.

    >>> reliability_bins([0.1, 0.15, 0.9], [0, 1, 1], n_bins=2)[0]
    {'lo': 0.0, 'hi': 0.5, 'count': 2, 'mean_p': 0.125, 'frac_positive': 0.5}
    """
    prob, truth = _probabilities(p, y)
    count, sum_p, sum_y = _bin_sums(prob, truth, n_bins)
    return [
        {"lo": k / n_bins, "hi": (k + 1) / n_bins, "count": int(count[k]),
         "mean_p": ratio(sum_p[k], count[k]), "frac_positive": ratio(sum_y[k], count[k])}
        for k in range(n_bins)
    ]


def decision_confidence_loss(p: ArrayLike, y: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The (confidence, loss) pairs that selective-risk metrics of a probability forecast use.

    Confidence is ``max(p, 1 - p)`` and loss the 0/1 error of the plain decision ``p >= 0.5``. This
    deliberately ignores any cost profile: it asks whether the model's probabilities rank its own
    mistakes last, whatever the task's costs; how well it abstains under those costs is measured by
    coverage and expected cost instead.

    >>> conf, loss = decision_confidence_loss([0.9, 0.2, 0.5], [1, 1, 0])
    >>> conf.tolist(), loss.tolist()
    ([0.9, 0.8, 0.5], [0.0, 1.0, 1.0])
    """
    prob, truth = _probabilities(p, y)
    return np.maximum(prob, 1.0 - prob), ((prob >= 0.5) != (truth == 1)).astype(float)


def risk_coverage_curve(
    confidence: ArrayLike, loss: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Risk (mean loss of the accepted items) against coverage, accepting items by decreasing confidence.

    Items of equal confidence cannot be told apart by a threshold, so they enter together: the curve
    has one point per distinct confidence value, and a model gains nothing from ties.

    >>> cov, risk = risk_coverage_curve([0.9, 0.8, 0.8, 0.6], [0, 0, 1, 1])
    >>> cov.tolist(), risk.round(4).tolist()
    ([0.25, 0.75, 1.0], [0.0, 0.3333, 0.5])
    """
    conf = np.asarray(confidence, dtype=float)
    losses = np.asarray(loss, dtype=float)
    if conf.shape != losses.shape or conf.ndim != 1:
        raise ValueError(f"confidence and loss must be 1-D and equally long, got {conf.shape}, "
                         f"{losses.shape}")
    if conf.size == 0:
        return np.empty(0), np.empty(0)
    order = np.argsort(-conf, kind="stable")
    sorted_conf = conf[order]
    ends = np.flatnonzero(np.r_[sorted_conf[1:] != sorted_conf[:-1], True])
    accepted = ends + 1
    return accepted / conf.size, np.cumsum(losses[order])[ends] / accepted


def aurc(confidence: ArrayLike, loss: ArrayLike) -> float | None:
    """Area under the risk–coverage curve (lower is better), as a right-step integral over coverage.

    Without ties this is the usual ``mean_k(risk at the k most confident items)``. It is 0 only when
    there are no errors; a perfect ranker reaches the minimum for its error rate (all errors last).

    >>> aurc([0.9, 0.8, 0.7], [0, 0, 0])
    0.0
    >>> round(aurc([0.9, 0.8, 0.6], [0, 0, 1]), 4)  # perfect ranker: the error comes last
    0.1111
    >>> round(aurc([0.6, 0.8, 0.9], [0, 0, 1]), 4)  # worst ranker: the error comes first
    0.6111
    """
    coverage, risk = risk_coverage_curve(confidence, loss)
    if coverage.size == 0:
        return None
    return float(np.sum(np.diff(coverage, prepend=0.0) * risk))


def bootstrap_ci(
    n_items: int,
    stat_fn: Callable[[NDArray[np.intp]], float | None],
    n_boot: int = N_BOOT,
    seed: int = BOOT_SEED,
    alpha: float = 0.05,
    clusters: Sequence[Any] | None = None,
) -> tuple[float | None, float | None]:
    """Percentile bootstrap interval of a statistic over rows resampled with replacement.

    ``stat_fn(idx)`` computes the statistic on the rows at ``idx`` (an index array with repeats);
    resamples where it is undefined (``None``, e.g. no positives drawn) are dropped. The generator is
    seeded, so the same data and seed give the same interval. ``(None, None)`` when there are no
    rows or the statistic is never defined.

    ``clusters`` (one label per row, e.g. each rollout's item id) resamples whole clusters: the rollouts
    of one item under ``--samples`` > 1 are not independent evidence, and treating them as such would
    shrink the interval by up to the square root of the number of samples. With one row per cluster
    this is the plain row bootstrap (the same draws).

    >>> values = [0.0, 1.0] * 50
    >>> lo, hi = bootstrap_ci(len(values), lambda idx: mean_or_none([values[i] for i in idx]), n_boot=200)
    >>> lo < 0.5 < hi
    True
    """
    if n_boot < 1 or not 0.0 < alpha < 1.0:
        raise ValueError(f"need n_boot >= 1 and 0 < alpha < 1, got n_boot={n_boot}, alpha={alpha}")
    if n_items <= 0:
        return None, None
    rng = np.random.default_rng(seed)
    draw = _cluster_sampler(clusters, n_items, rng) if clusters is not None else None
    stats = [stat_fn(draw() if draw else rng.integers(0, n_items, size=n_items)) for _ in range(n_boot)]
    defined = np.array([s for s in stats if s is not None], dtype=float)
    if defined.size == 0:
        return None, None
    lo, hi = np.quantile(defined, [alpha / 2, 1 - alpha / 2])
    return float(lo), float(hi)


def _cluster_sampler(clusters: Sequence[Any], n_rows: int,
                     rng: np.random.Generator) -> Callable[[], NDArray[np.intp]] | None:
    """A function drawing one cluster resample as row indices; None when every row is its own cluster."""
    if len(clusters) != n_rows:
        raise ValueError(f"{len(clusters)} cluster labels for {n_rows} rows")
    index: dict[Any, int] = {}
    label_of_row = np.fromiter((index.setdefault(c, len(index)) for c in clusters), dtype=np.intp, count=n_rows)
    n_clusters = len(index)
    if n_clusters == n_rows:
        return None
    rows_by_cluster = np.argsort(label_of_row, kind="stable")
    sizes = np.bincount(label_of_row, minlength=n_clusters)
    starts = np.cumsum(sizes) - sizes

    def draw() -> NDArray[np.intp]:
        picked = rng.integers(0, n_clusters, size=n_clusters)
        lengths = sizes[picked]
        offsets = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        return rows_by_cluster[np.repeat(starts[picked], lengths) + offsets]

    return draw


def group_indices(keys: Sequence[Any]) -> dict[str, NDArray[np.intp]]:
    """The row indices of each distinct key, by group name in sorted order; ``None`` groups under ``"unknown"``
    so no row silently drops out.

    >>> {k: v.tolist() for k, v in group_indices(["a", "b", "a", None]).items()}
    {'a': [0, 2], 'b': [1], 'unknown': [3]}
    """
    groups: dict[str, list[int]] = {}
    for index, value in enumerate(keys):
        groups.setdefault("unknown" if value is None else str(value), []).append(index)
    return {name: np.array(groups[name], dtype=np.intp) for name in sorted(groups)}


#: A breakdown row resting on fewer items (or, for a rule, oracle findings) than this is flagged: a rate over
#: 3 items moves by a third with one answer, and a reader skimming a table should not take it for a finding.
FEW = 10


def group_reward(rewards: ArrayLike, items: Sequence[Any] | None = None, n_boot: int = N_BOOT,
                 seed: int = BOOT_SEED) -> dict[str, Any]:
    """What a breakdown row adds to its group's own metrics: ``reward_ci``, the 95% bootstrap interval of the
    group's mean reward (resampling items when ``items`` labels each reward with its item), and ``few_items``,
    true when the group holds fewer than :data:`FEW` distinct items (rollouts when ``items`` is ``None``).

    >>> row = group_reward([1.0, 0.0, 1.0], ["a", "b", "c"], n_boot=200)
    >>> row["few_items"], row["reward_ci"][0] <= 2 / 3 <= row["reward_ci"][1]
    (True, True)
    """
    values = np.asarray(rewards, dtype=float)
    n_items = len(set(items)) if items is not None else int(values.size)
    lo, hi = bootstrap_ci(int(values.size), lambda idx: mean_or_none(values[idx]), n_boot=n_boot, seed=seed,
                          clusters=items)
    return {"reward_ci": [lo, hi], "few_items": n_items < FEW}
