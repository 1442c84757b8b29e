"""Incentive compatibility of the scoring rules, checked numerically."""

import numpy as np
import pytest

from security_verifiers.core.scoring import CostProfile, brier_score, log_score

GRID = np.linspace(0.0, 1.0, 201)


@pytest.mark.parametrize("rule", [brier_score, log_score])
@pytest.mark.parametrize("q", [0.0, 0.03, 0.2, 0.5, 0.77, 0.95, 1.0])
def test_proper_rule_is_minimised_by_the_true_probability(rule, q: float) -> None:
    expected_loss = [q * rule(p, 1) + (1 - q) * rule(p, 0) for p in GRID]
    best = GRID[int(np.argmin(expected_loss))]
    assert best == pytest.approx(q, abs=0.005)


@pytest.mark.parametrize(
    "profile",
    [
        CostProfile(),  # the security default: 10:1 with a cheap abstain
        CostProfile(missed=5, false_alarm=2, abstain=0.3),  # milder asymmetry
        CostProfile(missed=1, false_alarm=1, abstain=0.2),  # symmetric errors
    ],
)
def test_bayes_action_minimises_expected_cost_and_abstain_band_is_exact(profile: CostProfile) -> None:
    lo, hi = profile.abstain_band()
    for q in GRID:
        costs = {a: profile.expected_cost(a, q) for a in ("positive", "negative", "abstain")}
        action = profile.bayes_action(q)
        assert costs[action] == pytest.approx(min(costs.values()))
        if lo + 1e-9 < q < hi - 1e-9:
            assert action == "abstain"
        elif q < lo - 1e-9:
            assert action == "negative"
        elif q > hi + 1e-9:
            assert action == "positive"


def test_default_band_is_the_documented_one() -> None:
    assert CostProfile().abstain_band() == (0.05, 0.5)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"abstain": 1.0}, "abstain cost"),  # abstain as costly as a false alarm: never useful
        ({"missed": 0}, "greater than 0"),  # zero error cost
        ({"bogus": 1}, "Extra inputs"),  # unknown option
    ],
)
def test_bad_profiles_are_rejected(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        CostProfile(**kwargs)


def test_decision_reward_is_normalised() -> None:
    profile = CostProfile()
    assert profile.decision_reward("positive", 1) == 1.0
    assert profile.decision_reward("negative", 1) == 0.0
    assert 0 < profile.decision_reward("abstain", 0) < 1
