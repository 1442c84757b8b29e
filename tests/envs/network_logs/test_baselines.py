"""E1 baselines: well-formed answers, no peeking at the target, and the intended quality ordering."""

import json

import pytest

from security_verifiers.core.scoring import CostProfile
from security_verifiers.core.types import Item, Message, Transcript
from security_verifiers.envs.kits.abstaining import ConstantBaseline, ReferenceBaseline
from security_verifiers.envs.kits.abstaining import bayes_answer as kit_bayes_answer
from security_verifiers.envs.network_logs import NetworkLogs
from security_verifiers.envs.network_logs.baselines import GBDTBaseline, HeuristicBaseline, heuristic_probability
from security_verifiers.envs.network_logs.capture import coarsened
from security_verifiers.envs.network_logs.env import LABELS

ENV = NetworkLogs()
#: A profile where false alarms are the expensive mistake: abstaining is best for 0.5 < p < 0.95.
ALARM_AVERSE = {"missed": 1.0, "false_alarm": 10.0, "abstain": 0.5}


def bayes_answer(p: float, costs: CostProfile) -> str:
    return kit_bayes_answer(p, costs, LABELS)


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
    default, averse = CostProfile(), CostProfile(**ALARM_AVERSE)
    assert json.loads(bayes_answer(0.01, default)) == {"label": "Benign", "p_malicious": 0.01}
    assert json.loads(bayes_answer(0.3, default))["label"] == "Abstain"
    assert json.loads(bayes_answer(0.7, default))["label"] == "Malicious"
    assert [json.loads(bayes_answer(p, averse))["label"] for p in (0.3, 0.7, 0.97)] == ["Benign", "Abstain",
                                                                                       "Malicious"]


@pytest.mark.parametrize("name", ["heuristic", "gbdt"])
def test_honest_baselines_act_by_the_environments_costs(public_test, name: str) -> None:
    """Under ``--env-option costs=...`` the baselines take that profile's Bayes action, not the default's (they
    used to act by the default whatever the option said, and so lost reward they were entitled to)."""
    env = NetworkLogs.from_options({"costs": ALARM_AVERSE})
    policy = env.baselines()[name]()
    policy.prepare(public_test)
    answers = [json.loads(policy.answer(i, [])) for i in public_test]
    labels = {"positive": "Malicious", "negative": "Benign", "abstain": "Abstain"}
    assert all(a["label"] == labels[env.config.costs.bayes_action(a["p_malicious"])] for a in answers)
    assert any(0.05 < a["p_malicious"] < 0.5 and a["label"] == "Benign" for a in answers)  # Abstain by default
    assert policy.describe()["costs"] == ALARM_AVERSE

    def reward(text: str, item: Item) -> float:
        return env.score(item, Transcript(messages=[Message(role="assistant", content=text)])).reward

    by_default = [bayes_answer(a["p_malicious"], CostProfile()) for a in answers]
    assert sum(map(reward, [json.dumps(a) for a in answers], public_test)) > sum(map(reward, by_default, public_test))


@pytest.mark.parametrize("cls", [HeuristicBaseline, GBDTBaseline])
def test_honest_baselines_cannot_be_built_without_the_costs(cls: type) -> None:
    """The costs are a required argument: a default profile, silently taken, is how the baselines came to act by
    the default costs under ``--env-option costs=...`` (this test fails where the constructor has a default)."""
    with pytest.raises(TypeError):
        cls()


@pytest.mark.parametrize(("label", "p"), [("Malicious", 1.0), ("Benign", 0.0), ("Abstain", 0.5)])
def test_constant_baselines(public_test, label: str, p: float) -> None:
    policy = ConstantBaseline(label, LABELS)
    assert policy.name == f"always-{label.lower()}"
    assert json.loads(policy.answer(public_test[0], [])) == {"label": label, "p_malicious": p}


def test_constant_baseline_rejects_unknown_label() -> None:
    with pytest.raises(ValueError, match="label must be one of"):
        ConstantBaseline("Maybe", LABELS)


def test_reference_is_perfect(public_test) -> None:
    policy = ReferenceBaseline(LABELS)
    rewards = [
        ENV.score(i, Transcript(messages=[Message(role="assistant", content=policy.answer(i, []))])).reward
        for i in public_test
    ]
    assert rewards == [1.0] * len(public_test)


def test_heuristic_and_gbdt_never_read_target_or_meta(public_test) -> None:
    items = public_test[:60]
    tampered = [_tampered(i) for i in items]
    heuristic = HeuristicBaseline(CostProfile(), LABELS)
    assert [heuristic.answer(i, []) for i in items] == [heuristic.answer(i, []) for i in tampered]
    batch, single = GBDTBaseline(CostProfile(), LABELS), GBDTBaseline(CostProfile(), LABELS)
    batch.prepare(tampered)
    assert [batch.answer(i, []) for i in tampered] == [single.answer(i, []) for i in items]


def test_gbdt_batch_and_single_predictions_agree(public_test) -> None:
    items = public_test[:20]
    batch = GBDTBaseline(CostProfile(), LABELS)
    batch.prepare(items)
    assert [batch.answer(i, []) for i in items] == [GBDTBaseline(CostProfile(), LABELS).answer(i, []) for i in items]
    assert GBDTBaseline(CostProfile(), LABELS).describe() == {
        "kind": "baseline",
        "name": "gbdt",
        "train_size": 4000,
        "train_seeds": [0, 1, 2, 3, 4],
        "costs": CostProfile().model_dump(),
    }


def test_heuristic_reads_no_interval_off_a_coarse_clock(public_test) -> None:
    """Rounding the timestamps to the minute (as CIC-IDS-2017 writes them) must not create bursts: no benign item
    becomes an alarm, because the heuristic reads intervals only from a fine clock."""
    for item in public_test:
        if item.target["label"] != "Benign":
            continue
        if heuristic_probability(item.input) <= 0.5:
            assert heuristic_probability(coarsened(item.input, 60.0, ("service", "history"))) <= 0.5, item.id


def test_quality_ordering_on_the_public_test_set(public_test) -> None:
    table = _table(public_test)
    constants = [table[n] for n in ("always-malicious", "always-benign", "always-abstain")]
    reference, heuristic, gbdt = table["reference"], table["heuristic"], table["gbdt"]
    assert reference == (1.0, 0.0)
    assert gbdt[0] >= 0.95 and gbdt[0] > heuristic[0]
    for policy in (heuristic, gbdt):
        assert policy[0] > max(r for r, _ in constants) + 0.03
        assert policy[1] < min(c for _, c in constants) - 0.1


def _with_window_prefix(item: Item, prefix: list[dict]) -> Item:
    """The item with everything before its last 3 preceding flows replaced by ``prefix``."""
    return item.model_copy(update={"input": {**item.input, "window": [*prefix, *item.input["window"][-3:]]}})


def test_baselines_read_only_what_the_prompt_shows(public_test) -> None:
    """Under ``window=3`` the baselines' answers do not move when the flows the prompt leaves out change (here: all
    of them replaced by a horizontal scan from the host), while the default (window 20) baselines do see them; under
    the compact prompt the fields it leaves out (source port, packet counts) change nothing either."""
    items = [i for i in public_test if len(i.input["window"]) >= 12 and i.input["flow"]["proto"] == "tcp"][:40]
    assert len(items) >= 20
    scan = [{**items[0].input["flow"], "id.resp_h": f"10.9.0.{k}", "conn_state": "REJ", "history": "Sr",
             "orig_bytes": 0, "resp_bytes": 0} for k in range(17)]
    scanned = [_with_window_prefix(i, scan) for i in items]
    shown3 = NetworkLogs.from_options({"window": 3}).baselines()
    default = ENV.baselines()
    for name in ("heuristic", "gbdt"):
        policy = shown3[name]()
        assert [policy.answer(i, []) for i in items] == [policy.answer(i, []) for i in scanned], name
        assert policy.describe()["shown"] == {"window": 3, "hidden": []}
        full = default[name]()
        assert [full.answer(i, []) for i in items] != [full.answer(i, []) for i in scanned], name
        assert "shown" not in full.describe()
    compact = NetworkLogs.from_options({"window": 3, "prompt_style": "compact"}).baselines()["gbdt"]()
    repacked = [i.model_copy(update={"input": {**i.input, "flow": {**i.input["flow"], "id.orig_p": 1, "orig_pkts": 999,
                                                                      "resp_pkts": 0}}}) for i in items]
    assert [compact.answer(i, []) for i in items] == [compact.answer(i, []) for i in repacked]


def test_the_default_view_is_the_whole_input(public_test) -> None:
    """Items hold at most 20 preceding flows, the default window: the default baselines read them untouched, so their
    public-set scores (``baseline_scores.json``) are those of before the view existed."""
    from security_verifiers.envs.network_logs.baselines import SHOWN_ALL, Shown

    assert all(SHOWN_ALL(i.input) is i.input for i in public_test)
    cut = Shown(window=0, hidden=("orig_pkts",))(public_test[0].input)
    assert cut["window"] == [] and cut["flow"]["orig_pkts"] is None and "orig_pkts" in cut["capture"]["unrecorded"]
