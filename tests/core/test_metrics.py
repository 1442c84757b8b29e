"""The shared metrics against hand-computed values."""

import json

import numpy as np
import pytest

from security_verifiers.core.metrics import (
    aurc,
    binary_decision_metrics,
    bootstrap_ci,
    confusion_matrix,
    decision_confidence_loss,
    ece,
    group_indices,
    group_reward,
    mean_or_none,
    reliability_bins,
    risk_coverage_curve,
)

P, N, A = "positive", "negative", "abstain"

DECISION_CASES = [
    # Known confusion: tp=2, fn=1, fp=1, tn=2, everything covered.
    ([1, 1, 1, 0, 0, 0], [P, P, N, P, N, N], [1] * 6,
     {"tp": 2, "fn": 1, "fp": 1, "tn": 2, "tpr": 2 / 3, "fnr": 1 / 3, "fpr": 1 / 3, "precision": 2 / 3,
      "f1": 2 / 3, "accuracy": 4 / 6, "coverage": 1.0, "abstain_rate": 0.0, "format_valid_rate": 1.0}),
    # Abstentions leave tpr/fpr (covered only) but count in abstain_rate and lower coverage.
    ([1, 1, 0, 0], [P, A, A, N], [1] * 4,
     {"tpr": 1.0, "fpr": 0.0, "accuracy": 1.0, "n_abstain": 2, "abstain_rate": 0.5, "coverage": 0.5,
      "format_valid_rate": 1.0}),
    # Invalid answers: out of every rate, in format_valid_rate; an action on an invalid answer is ignored.
    ([1, 1, 0, 0], [P, None, N, P], [1, 0, 1, 0],
     {"tpr": 1.0, "fpr": 0.0, "n_valid": 2, "format_valid_rate": 0.5, "coverage": 0.5, "abstain_rate": 0.0}),
    # No negatives: fpr undefined (None, not 0); all positives missed: f1 is 0, precision undefined.
    ([1, 1], [N, N], [1, 1], {"tpr": 0.0, "fnr": 1.0, "fpr": None, "precision": None, "f1": 0.0}),
    # Everything abstained: every covered-only rate is undefined, the all-item rates are not.
    ([1, 0], [A, A], [1, 1], {"tpr": None, "fpr": None, "f1": None, "accuracy": None, "coverage": 0.0,
                              "abstain_rate": 1.0}),
    # No items at all: every rate undefined.
    ([], [], [], {"n": 0, "tpr": None, "coverage": None, "abstain_rate": None, "format_valid_rate": None}),
]


@pytest.mark.parametrize(("y", "action", "valid", "expected"), DECISION_CASES)
def test_binary_decision_metrics(y, action, valid, expected) -> None:
    got = binary_decision_metrics(y, action, valid)
    for key, value in expected.items():
        assert got[key] == (pytest.approx(value) if value is not None else None), key
    json.dumps(got, allow_nan=False)


def test_decision_rates_partition_the_items() -> None:
    rng = np.random.default_rng(3)
    action = rng.choice([P, N, A], size=200)
    m = binary_decision_metrics(rng.integers(0, 2, 200), action, rng.random(200) > 0.2)
    assert m["coverage"] + m["abstain_rate"] + (1 - m["format_valid_rate"]) == pytest.approx(1.0)
    assert all(type(v) in (int, float) or v is None for v in m.values())


def test_mismatched_lengths_raise() -> None:
    with pytest.raises(ValueError, match="equally long"):
        binary_decision_metrics([1, 0], [P], [1, 1])


def test_confusion_matrix_counts_every_item_once() -> None:
    # Rows: truth negative, positive; columns: negative, abstain, positive, invalid.
    got = confusion_matrix([0, 0, 0, 1, 1, 1, 1], [N, P, None, A, P, P, N], [1, 1, 0, 1, 1, 1, 1])
    assert got == [[1, 0, 1, 1], [1, 1, 2, 0]]


ECE_CASES = [
    # Perfectly calibrated bins: forecast 0.25 with 1 in 4 positive, forecast 0.75 with 3 in 4.
    ([0.25] * 4 + [0.75] * 4, [1, 0, 0, 0, 1, 1, 1, 0], 0.0),
    # One bin, always wrong with full confidence: gap 1.
    ([1.0, 1.0], [0, 0], 1.0),
    # Two bins of two: |0.1 - 0.5| and |0.9 - 0.5|, each weight 1/2 -> 0.4.
    ([0.1, 0.1, 0.9, 0.9], [0, 1, 0, 1], 0.4),
    # No forecasts: undefined.
    ([], [], None),
]


@pytest.mark.parametrize(("p", "y", "expected"), ECE_CASES)
def test_ece(p, y, expected) -> None:
    got = ece(p, y)
    assert got == (pytest.approx(expected) if expected is not None else None)


def test_ece_rejects_out_of_range_probabilities() -> None:
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        ece([0.5, 1.2], [0, 1])


def test_reliability_bins_keep_empty_bins_and_put_one_in_the_last() -> None:
    bins = reliability_bins([0.0, 1.0, 1.0], [0, 1, 0], n_bins=4)
    assert [b["count"] for b in bins] == [1, 0, 0, 2]
    assert bins[1]["mean_p"] is None and bins[3]["frac_positive"] == 0.5


AURC_CASES = [
    # No errors: risk 0 at every coverage.
    ([0.9, 0.7, 0.6], [0, 0, 0], 0.0),
    # Perfect ranker, 1 error in 3, ranked last: risks 0, 0, 1/3 -> area 1/9 (the minimum at this error rate).
    ([0.9, 0.8, 0.6], [0, 0, 1], 1 / 9),
    # Worst ranker, the error first: risks 1, 1/2, 1/3 -> area (1 + 1/2 + 1/3) / 3.
    ([0.6, 0.8, 0.9], [0, 0, 1], (1 + 1 / 2 + 1 / 3) / 3),
    # All tied: one point at full coverage, so area = overall error rate, whatever the order.
    ([0.7, 0.7, 0.7, 0.7], [1, 0, 0, 0], 0.25),
    # Empty: undefined.
    ([], [], None),
]


@pytest.mark.parametrize(("confidence", "loss", "expected"), AURC_CASES)
def test_aurc(confidence, loss, expected) -> None:
    got = aurc(confidence, loss)
    assert got == (pytest.approx(expected) if expected is not None else None)


def test_perfect_ranker_beats_any_other_order() -> None:
    rng = np.random.default_rng(0)
    loss = (rng.random(50) < 0.3).astype(float)
    perfect = 1.0 - loss + rng.random(50) * 0.1  # every error less confident than every correct answer
    assert aurc(perfect, loss) <= aurc(rng.random(50), loss)


def test_risk_coverage_curve_groups_ties() -> None:
    coverage, risk = risk_coverage_curve([0.9, 0.5, 0.5], [0, 1, 0])
    assert coverage.tolist() == pytest.approx([1 / 3, 1.0])
    assert risk.tolist() == pytest.approx([0.0, 1 / 3])


def test_decision_confidence_loss() -> None:
    # p >= 0.5 decides positive; 0.5 is the least confident forecast.
    conf, loss = decision_confidence_loss([0.5, 0.5, 0.1, 0.95], [1, 0, 1, 1])
    assert conf.tolist() == pytest.approx([0.5, 0.5, 0.9, 0.95])
    assert loss.tolist() == [0.0, 1.0, 1.0, 0.0]


def test_bootstrap_ci_contains_estimate_and_is_deterministic() -> None:
    values = np.random.default_rng(1).random(500)

    def mean(idx: np.ndarray) -> float | None:
        return mean_or_none(values[idx])

    lo, hi = bootstrap_ci(len(values), mean, n_boot=300, seed=7)
    assert lo < float(values.mean()) < hi
    assert hi - lo < 0.1
    assert bootstrap_ci(len(values), mean, n_boot=300, seed=7) == (lo, hi)
    assert bootstrap_ci(len(values), mean, n_boot=300, seed=8) != (lo, hi)


BOOT_EDGE_CASES = [
    # No items: no interval.
    (0, lambda idx: 1.0, (None, None)),
    # A statistic that is never defined: no interval.
    (5, lambda idx: None, (None, None)),
    # A constant statistic: a zero-width interval at the constant.
    (5, lambda idx: 2.0, (2.0, 2.0)),
]


@pytest.mark.parametrize(("n", "stat", "expected"), BOOT_EDGE_CASES)
def test_bootstrap_ci_edge_cases(n, stat, expected) -> None:
    assert bootstrap_ci(n, stat, n_boot=50) == expected


def test_cluster_bootstrap_with_one_row_per_cluster_is_the_row_bootstrap() -> None:
    y = np.random.default_rng(2).integers(0, 2, 300).astype(float)
    mean = lambda idx: mean_or_none(y[idx])  # noqa: E731
    assert bootstrap_ci(y.size, mean, seed=3, clusters=[f"item-{i}" for i in range(y.size)]) == \
        bootstrap_ci(y.size, mean, seed=3)


def test_cluster_bootstrap_resamples_whole_items() -> None:
    # 60 items, 4 identical rollouts each (--samples 4): the rollouts add no information, so the interval
    # must be as wide as with one rollout per item, and the rollout-level bootstrap is about half as wide.
    per_item = np.random.default_rng(5).integers(0, 2, 60).astype(float)
    y = np.repeat(per_item, 4)
    items = np.repeat([f"i{k}" for k in range(60)], 4).tolist()
    draws: list[np.ndarray] = []

    def mean(idx: np.ndarray) -> float | None:
        draws.append(idx)
        return mean_or_none(y[idx])

    lo_c, hi_c = bootstrap_ci(y.size, mean, n_boot=2000, clusters=items)
    lo_r, hi_r = bootstrap_ci(y.size, lambda idx: mean_or_none(y[idx]), n_boot=2000)
    lo_1, hi_1 = bootstrap_ci(per_item.size, lambda idx: mean_or_none(per_item[idx]), n_boot=2000)
    assert 0.8 < (hi_c - lo_c) / (hi_1 - lo_1) < 1.25
    assert (hi_r - lo_r) < 0.65 * (hi_c - lo_c)
    for idx in draws[:50]:  # every draw holds whole items: each item's 4 rows equally often
        counts = np.bincount(idx, minlength=y.size).reshape(60, 4)
        assert (counts == counts[:, :1]).all() and idx.size == y.size


def test_cluster_labels_must_match_rows() -> None:
    with pytest.raises(ValueError, match="cluster labels"):
        bootstrap_ci(3, lambda idx: 0.0, clusters=["a", "b"])


def test_groups_sorted_with_unknown() -> None:
    got = group_indices(["b", "a", "b", None])
    assert list(got) == ["a", "b", "unknown"]
    assert got["b"].tolist() == [0, 2]


@pytest.mark.parametrize(("rewards", "items", "few"), [
    ([1.0] * 9, None, True),  # nine rollouts, no item ids: nine items
    ([1.0] * 10, None, False),  # ten: enough
    ([1.0] * 12, ["a", "b", "c"] * 4, True),  # twelve rollouts of three items: three
    ([0.0, 1.0] * 10, [f"i{k}" for k in range(20)], False),
])
def test_group_reward_flags_groups_of_few_items(rewards, items, few) -> None:
    row = group_reward(rewards, items, n_boot=200)
    assert row["few_items"] is few
    lo, hi = row["reward_ci"]
    assert lo <= sum(rewards) / len(rewards) <= hi


def test_group_reward_resamples_items() -> None:
    # The same four answers per item: an item bootstrap is as wide as one rollout per item, a rollout one narrower.
    rewards = [float(k % 2) for k in range(10) for _ in range(4)]
    items = [f"i{k}" for k in range(10) for _ in range(4)]
    by_item = group_reward(rewards, items)["reward_ci"]
    by_rollout = group_reward(rewards)["reward_ci"]
    assert by_rollout[1] - by_rollout[0] < by_item[1] - by_item[0]
