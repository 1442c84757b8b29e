"""E1 metrics and plots from outcomes produced by the real scorer, checked against hand-computed values."""

import json

import pytest

from security_verifiers.core.types import Item, Message, Transcript
from security_verifiers.envs.kits.abstaining import AbstainingConfig, ClassifierOutcome, classifier_plots
from security_verifiers.envs.network_logs import NetworkLogs
from security_verifiers.envs.network_logs.env import LABELS
from tests.envs.kits.abstaining.report import classifier_metrics

ENV = NetworkLogs()  # default costs: missed 10, false alarm 1, abstain 0.5; reward 0.7 decision + 0.3 Brier
FLOW = {"ts": 1.0, "id.orig_h": "10.0.0.1", "id.orig_p": 4444, "id.resp_h": "10.0.0.2", "id.resp_p": 22,
        "proto": "tcp", "conn_state": "S0"}


def outcome(truth: str, family: str, split: str, difficulty: str, reply: str) -> dict:
    item = Item(id=f"nl-{family}-{reply[:12]}", split=split, meta={"difficulty": difficulty},
                input={"host": {"ip": "10.0.0.1", "role": "workstation"}, "flow": FLOW, "window": []},
                target={"label": truth, "family": family, "p_malicious": float(truth == "Malicious")})
    return ENV.score(item, Transcript(messages=[Message(role="assistant", content=reply)])).outcome


def answer(label: str, p: float) -> str:
    return json.dumps({"label": label, "p_malicious": p})


# Six rollouts: (truth, family, split, difficulty, reply) -> decision, cost, Brier, reward.
OUTCOMES = [
    outcome("Malicious", "scan", "test", "easy", answer("Malicious", 0.9)),  # tp, cost 0, Brier .01, r .997
    outcome("Malicious", "scan", "test", "hard", answer("Benign", 0.2)),  # fn, cost 10, Brier .64, r .108
    outcome("Malicious", "scan", "test", "hard", answer("Abstain", 0.4)),  # abstain, cost .5, .36, r .857
    outcome("Benign", "dns", "ood", "easy", answer("Malicious", 0.6)),  # fp, cost 1, Brier .36, r .822
    outcome("Benign", "dns", "ood", "easy", answer("Benign", 0.1)),  # tn, cost 0, Brier .01, r .997
    outcome("Benign", "dns", "ood", "hard", "I think it is fine."),  # invalid, cost 10, reward 0
]
RESULT = classifier_metrics(OUTCOMES, ENV.config, LABELS)

METRIC_CASES = [
    # One of each decision among the covered four: every covered rate is 1/2.
    ("tpr", 0.5), ("fpr", 0.5), ("fnr", 0.5), ("precision", 0.5), ("f1", 0.5), ("accuracy", 0.5),
    # The abstention counts in abstain_rate, the invalid answer in format_valid_rate; both lower coverage.
    ("coverage", 4 / 6), ("abstain_rate", 1 / 6), ("format_valid_rate", 5 / 6),
    # Expected cost over all six, the invalid answer at the maximum cost 10: (0+10+.5+1+0+10)/6.
    ("expected_cost", 21.5 / 6),
    # Brier over the five valid answers: (.01+.64+.36+.36+.01)/5.
    ("brier", 1.38 / 5),
    # ECE: every valid forecast in its own bin; gaps .1, .8, .6, .6, .1 over 5.
    ("ece", 2.2 / 5),
    # AURC: confidences .9,.9 (right) | .8 (wrong) | .6,.6 (both wrong): 2/5*0 + 1/5*1/3 + 2/5*3/5.
    ("aurc", 23 / 75),
    # Mean reward over all six, the invalid one at 0.
    ("reward_mean", (0.997 + 0.108 + 0.857 + 0.822 + 0.997 + 0.0) / 6),
    ("n", 6),
    # The cost profile is echoed next to the expected cost it produced.
    ("cost_missed", 10.0), ("cost_false_alarm", 1.0), ("cost_abstain", 0.5),
]


@pytest.mark.parametrize(("key", "expected"), METRIC_CASES)
def test_flat_metrics(key: str, expected: float) -> None:
    assert RESULT["metrics"][key] == pytest.approx(expected)


def test_result_is_strict_json() -> None:
    json.dumps(RESULT, allow_nan=False)


@pytest.mark.parametrize("key", ["reward_mean", "expected_cost", "f1", "precision", "tpr", "fpr", "brier", "ece",
                                 "aurc"])
def test_intervals_bracket_the_estimate(key: str) -> None:
    lo, hi = RESULT["intervals"][key]
    assert lo <= RESULT["metrics"][key] <= hi


def test_intervals_are_deterministic() -> None:
    assert classifier_metrics(OUTCOMES, AbstainingConfig(), LABELS)["intervals"] == RESULT["intervals"]


FAMILY_CASES = [
    # Malicious family: detection rate over covered (1 of tp+fn), abstain counted separately.
    ("scan", {"n": 3, "label": "Malicious", "detection_rate": 0.5, "abstain_rate": 1 / 3,
              "expected_cost": 10.5 / 3}),
    # Benign family: false-alarm rate over covered (1 of fp+tn); the invalid answer costs 10.
    ("dns", {"n": 3, "label": "Benign", "false_alarm_rate": 0.5, "abstain_rate": 0.0,
             "format_valid_rate": 2 / 3, "expected_cost": 11 / 3}),
]


@pytest.mark.parametrize(("family", "expected"), FAMILY_CASES)
def test_family_breakdown(family: str, expected: dict) -> None:
    row = RESULT["breakdowns"]["family"][family]
    for key, value in expected.items():
        assert row[key] == pytest.approx(value), key
    other = "false_alarm_rate" if expected["label"] == "Malicious" else "detection_rate"
    assert other not in row


def test_split_and_difficulty_breakdowns() -> None:
    splits = RESULT["breakdowns"]["split"]
    assert list(splits) == ["ood", "test"]
    assert splits["test"]["tpr"] == 0.5 and splits["test"]["fpr"] is None  # no benign item in test
    assert splits["ood"]["expected_cost"] == pytest.approx(11 / 3)
    difficulty = RESULT["breakdowns"]["difficulty"]
    assert {k: v["n"] for k, v in difficulty.items()} == {"easy": 3, "hard": 3}


def test_env_metrics_uses_its_cost_profile() -> None:
    assert ENV.metrics(OUTCOMES)["metrics"] == RESULT["metrics"]


def test_no_outcomes_give_undefined_metrics() -> None:
    result = classifier_metrics([], AbstainingConfig(), LABELS)
    assert result["metrics"]["n"] == 0 and result["metrics"]["reward_mean"] is None
    assert result["intervals"] == {}  # the builder draws no interval without outcomes
    json.dumps(result, allow_nan=False)


@pytest.mark.parametrize("outcomes", [OUTCOMES, OUTCOMES[-1:]], ids=["mixed", "only-invalid"])
def test_plots_are_written(tmp_path, outcomes) -> None:
    paths = classifier_plots(ClassifierOutcome.read_all(outcomes), LABELS, tmp_path / "plots")
    assert [p.name for p in paths] == ["reliability.png", "risk_coverage.png", "confusion.png"]
    for path in paths:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_precision_ece_and_aurc_intervals_widen_with_fewer_items() -> None:
    # The same six answers, and the same answers repeated ten times (60 items): more items, narrower intervals.
    many = classifier_metrics(OUTCOMES * 10, ENV.config, LABELS, [f"i{k}" for k in range(60)])
    for key in ("precision", "ece", "aurc"):
        lo, hi = RESULT["intervals"][key]
        lo_many, hi_many = many["intervals"][key]
        assert hi_many - lo_many < hi - lo, key


def test_breakdown_rows_carry_a_reward_interval_and_flag_small_groups() -> None:
    # Three 'scan' items: flagged; the same family with twelve items: not flagged.
    scan = RESULT["breakdowns"]["family"]["scan"]
    assert scan["n"] == 3 and scan["few_items"] is True
    assert scan["reward_ci"][0] <= scan["reward_mean"] <= scan["reward_ci"][1]
    big = classifier_metrics(OUTCOMES[:3] * 4, ENV.config, LABELS, [f"i{k}" for k in range(12)])
    assert big["breakdowns"]["family"]["scan"]["few_items"] is False
    # Four rollouts of each of three items (--samples 4) are still three items: flagged.
    repeated = classifier_metrics(OUTCOMES[:3] * 4, ENV.config, LABELS, ["a", "b", "c"] * 4)
    assert repeated["breakdowns"]["family"]["scan"]["few_items"] is True
    for name in ("split", "difficulty"):
        assert all({"reward_ci", "few_items"} <= set(row) for row in RESULT["breakdowns"][name].values())


# -- the constant floor, on the public test split -------------------------------------------------------------------
TEST_ITEMS = list(ENV.dataset("test").items)


def mean_reward(env: NetworkLogs, reply: str) -> float:
    scores = [env.score(item, Transcript(messages=[Message(role="assistant", content=reply)])) for item in TEST_ITEMS]
    return sum(s.reward for s in scores) / len(scores)


def outcomes_of(env: NetworkLogs, reply: str) -> list[dict]:
    return [env.score(i, Transcript(messages=[Message(role="assistant", content=reply)])).outcome for i in TEST_ITEMS]


@pytest.mark.parametrize(("costs", "policy"), [
    # The security profile (a miss costs 10, abstaining 0.5): abstaining is the best constant, as always-abstain's
    # 0.89 suggested; the floor states the test split's 37% malicious rate instead of always-abstain's 0.5.
    ({}, "always-abstain"),
    # A false alarm costs 10, a miss 1: calling everything benign is the cheapest constant.
    ({"costs": {"missed": 1.0, "false_alarm": 10.0, "abstain": 0.5}}, "always-benign"),
])
def test_the_constant_floor_is_what_its_answer_scores_on_the_same_items(costs: dict, policy: str) -> None:
    env = NetworkLogs.from_options(costs)
    # Computed from any run's outcomes (here a model that always says Malicious): only the truths matter.
    metrics = env.metrics(outcomes_of(env, answer("Malicious", 0.9)))
    constant = metrics["constant_policy"]
    assert constant["policy"] == policy
    assert metrics["metrics"]["constant_reward"] == constant["reward_mean"]
    # The same value when the scorer marks that very answer on every item.
    assert constant["reward_mean"] == pytest.approx(mean_reward(env, constant["answer"]), abs=1e-12)
    # No constant answer does better: the three baselines' constants, and the floor's label at another probability.
    for label, p in (("Abstain", 0.5), ("Malicious", 1.0), ("Benign", 0.0), ("Abstain", 0.3), ("Benign", 0.45)):
        assert mean_reward(env, answer(label, p)) <= constant["reward_mean"] + 1e-12


def test_always_abstain_reads_against_its_floor() -> None:
    # always-abstain scores 0.89 and its floor 0.89363 (0.7 * 0.95 + 0.3 * (1 - 0.39 * 0.61)): the same label, with
    # the base rate as its probability, earns a little more.
    run = ENV.metrics(outcomes_of(ENV, answer("Abstain", 0.5)))
    assert run["metrics"]["reward_mean"] == pytest.approx(0.89)
    assert run["constant_policy"]["policy"] == "always-abstain"
    assert run["constant_policy"]["answer"] == answer("Abstain", 0.39)
    assert run["metrics"]["reward_mean"] < run["metrics"]["constant_reward"] == pytest.approx(0.89363)


def test_no_outcomes_have_no_floor() -> None:
    result = classifier_metrics([], AbstainingConfig(), LABELS)
    assert result["constant_policy"] is None and result["metrics"]["constant_reward"] is None
