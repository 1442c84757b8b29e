"""E1 baselines: well-formed answers, no peeking at the target, and the intended quality ordering."""

import json

import pytest

from security_verifiers.core.types import Item, Message, Transcript
from security_verifiers.envs.network_logs import NetworkLogs
from security_verifiers.envs.network_logs.baselines import (
    ConstantBaseline,
    GBDTBaseline,
    HeuristicBaseline,
    ReferenceBaseline,
    bayes_answer,
)

ENV = NetworkLogs()


@pytest.fixture(scope="module")
def public_test() -> list[Item]:
    return list(ENV.dataset("test").items)


def _tampered(item: Item) -> Item:
    """The same input with the opposite target and different metadata."""
    flipped = "Benign" if item.target["label"] == "Malicious" else "Malicious"
    target = {"label": flipped, "family": "tampered", "p_malicious": 1.0 - item.target["p_malicious"]}
    return item.model_copy(
        update={"target": target, "meta": {"difficulty": "tampered", "network": "elsewhere"}}
    )


def _table(items: list[Item]) -> dict[str, tuple[float, float]]:
    """Mean reward and mean cost of every registered baseline, scored by the environment."""
    out = {}
    for name, factory in ENV.baselines().items():
        policy = factory()
        policy.prepare(items)
        scores = [
            ENV.score(i, Transcript(messages=[Message(role="assistant", content=policy.answer(i, []))]))
            for i in items
        ]
        out[name] = (
            sum(s.reward for s in scores) / len(items),
            sum(s.outcome["cost"] for s in scores) / len(items),
        )
    return out


def test_bayes_answer_follows_the_cost_profile() -> None:
    assert json.loads(bayes_answer(0.01)) == {"label": "Benign", "p_malicious": 0.01}
    assert json.loads(bayes_answer(0.3))["label"] == "Abstain"
    assert json.loads(bayes_answer(0.7))["label"] == "Malicious"


@pytest.mark.parametrize(("label", "p"), [("Malicious", 1.0), ("Benign", 0.0), ("Abstain", 0.5)])
def test_constant_baselines(public_test, label: str, p: float) -> None:
    policy = ConstantBaseline(label)
    assert policy.name == f"always-{label.lower()}"
    assert json.loads(policy.answer(public_test[0], [])) == {"label": label, "p_malicious": p}


def test_constant_baseline_rejects_unknown_label() -> None:
    with pytest.raises(ValueError, match="label must be one of"):
        ConstantBaseline("Maybe")


def test_reference_is_perfect(public_test) -> None:
    policy = ReferenceBaseline()
    rewards = [
        ENV.score(i, Transcript(messages=[Message(role="assistant", content=policy.answer(i, []))])).reward
        for i in public_test
    ]
    assert rewards == [1.0] * len(public_test)


def test_heuristic_and_gbdt_never_read_target_or_meta(public_test) -> None:
    items = public_test[:60]
    tampered = [_tampered(i) for i in items]
    heuristic = HeuristicBaseline()
    assert [heuristic.answer(i, []) for i in items] == [heuristic.answer(i, []) for i in tampered]
    batch, single = GBDTBaseline(), GBDTBaseline()
    batch.prepare(tampered)
    assert [batch.answer(i, []) for i in tampered] == [single.answer(i, []) for i in items]


def test_gbdt_batch_and_single_predictions_agree(public_test) -> None:
    items = public_test[:20]
    batch = GBDTBaseline()
    batch.prepare(items)
    assert [batch.answer(i, []) for i in items] == [GBDTBaseline().answer(i, []) for i in items]
    assert GBDTBaseline().describe() == {
        "kind": "baseline",
        "name": "gbdt",
        "train_size": 4000,
        "train_seed": 0,
    }


def test_quality_ordering_on_the_public_test_set(public_test) -> None:
    table = _table(public_test)
    constants = [table[n] for n in ("always-malicious", "always-benign", "always-abstain")]
    reference, heuristic, gbdt = table["reference"], table["heuristic"], table["gbdt"]
    assert reference == (1.0, 0.0)
    assert gbdt[0] >= 0.95 and gbdt[0] >= heuristic[0] + 0.02
    for policy in (heuristic, gbdt):
        assert policy[0] > max(r for r, _ in constants) + 0.03
        assert policy[1] < min(c for _, c in constants) - 0.1
