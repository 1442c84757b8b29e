"""E1's one scorer: incentive compatibility of the full reward, and bad output at the minimum."""

import itertools
import json

import numpy as np
import pytest

from security_verifiers.core.types import Item, Message, ParseStatus, Transcript
from security_verifiers.envs.network_logs import NetworkLogs
from tests.helpers import e1_item


def reply(text: str) -> Transcript:
    return Transcript(messages=[Message(role="assistant", content=text)])


def reward(env: NetworkLogs, item: Item, label: str, p: float) -> float:
    return env.score(item, reply(json.dumps({"label": label, "p_malicious": p}))).reward


ENV = NetworkLogs()
MAL, BEN = e1_item(1, "Malicious"), e1_item(2, "Benign")
LABELS = ("Malicious", "Benign", "Abstain")
P_GRID = np.round(np.linspace(0, 1, 101), 2)


def expected_reward(label: str, p: float, q: float) -> float:
    return q * reward(ENV, MAL, label, p) + (1 - q) * reward(ENV, BEN, label, p)


@pytest.mark.parametrize("q", [0.0, 0.02, 0.049, 0.07, 0.2, 0.35, 0.49, 0.51, 0.6, 0.9, 1.0])
def test_truthful_bayes_answer_maximises_expected_reward(q: float) -> None:
    best = max(itertools.product(LABELS, P_GRID), key=lambda lp: expected_reward(lp[0], lp[1], q))
    bayes = {"positive": "Malicious", "negative": "Benign", "abstain": "Abstain"}[ENV.config.costs.bayes_action(q)]
    assert best[0] == bayes
    assert best[1] == pytest.approx(q, abs=0.006)
    assert expected_reward(bayes, q, q) >= expected_reward(best[0], best[1], q) - 1e-12


def test_abstaining_is_optimal_exactly_inside_the_band() -> None:
    lo, hi = ENV.config.costs.abstain_band()
    for q in np.linspace(0, 1, 401):
        by_label = {label: expected_reward(label, q, q) for label in LABELS}
        winner = max(by_label, key=by_label.get)
        if lo + 1e-6 < q < hi - 1e-6:
            assert winner == "Abstain", q
        elif q < lo - 1e-6 or q > hi + 1e-6:
            assert winner != "Abstain", q


@pytest.mark.parametrize(
    ("text", "status"),
    [
        ("", ParseStatus.EMPTY),  # silence
        ("Malicious", ParseStatus.NO_JSON),  # prose
        ('{"label": "Malicious"}', ParseStatus.SCHEMA),  # missing probability
        ('{"label": "Evil", "p_malicious": 0.9}', ParseStatus.SCHEMA),  # label outside the grammar
        ('{"label": "Malicious", "p_malicious": 1.5}', ParseStatus.SCHEMA),  # probability out of range
        ('{"label": "Malicious", "p_malicious": NaN}', ParseStatus.SCHEMA),  # NaN is not a probability
        ('{"label": "Malicious", "p_malicious": "0.9"}', ParseStatus.SCHEMA),  # a string is not a number
        ('{"label": "Malicious", "p_malicious": 1}', ParseStatus.OK),  # an integer probability is fine
    ],
)
def test_bad_output_is_a_parse_failure_at_minimum_reward(text: str, status: ParseStatus) -> None:
    score = ENV.score(MAL, reply(text))
    assert score.parse_status == status
    if status != ParseStatus.OK:
        assert score.reward == 0.0 and score.outcome["valid"] is False
        assert score.outcome["cost"] == ENV.config.costs.max_cost


def test_reward_is_in_unit_interval_and_reference_is_top() -> None:
    rewards = [reward(ENV, item, label, p) for item in (MAL, BEN) for label in LABELS for p in P_GRID]
    assert min(rewards) >= 0.0 and max(rewards) <= 1.0
    assert reward(ENV, MAL, "Malicious", 1.0) == 1.0 and reward(ENV, BEN, "Benign", 0.0) == 1.0


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"decision_weight": 0.9}, "must equal 1"),  # weights that leave [0, 1]
        ({"colour": "red"}, "unknown key 'colour'"),  # unknown option
        ({"costs": {"missed": 1, "false_alarm": 1, "abstain": 2}}, "abstain cost"),  # abstain never useful
    ],
)
def test_bad_env_options_are_errors(options: dict, message: str) -> None:
    from security_verifiers.core.errors import ConfigError

    with pytest.raises(ConfigError, match=message):
        NetworkLogs.from_options(options)
