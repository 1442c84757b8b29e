"""E1 generator: deterministic, exact, well-formed items with the intended label and difficulty mix."""

from collections import Counter

import pytest

from security_verifiers.core.datasets import content_hash
from security_verifiers.core.errors import DatasetError
from security_verifiers.envs.network_logs import pairs
from security_verifiers.envs.network_logs.env import FIELDS
from security_verifiers.envs.network_logs.families import FAMILIES, label_of
from security_verifiers.envs.network_logs.generator import (
    GENERATOR_VERSION,
    IN_DIST_ATTACKS,
    OOD_ATTACKS,
    SPLITS,
    WINDOW,
    generate,
)


@pytest.fixture(scope="module")
def test_items():
    return generate("test", 1000, seed=5)


def test_same_seed_same_items_and_other_seeds_or_splits_differ() -> None:
    first = content_hash(generate("test", 40, seed=1))
    assert content_hash(generate("test", 40, seed=1)) == first
    assert content_hash(generate("test", 40, seed=2)) != first
    assert content_hash(generate("dev", 40, seed=1)) != first


@pytest.mark.parametrize("split", SPLITS)
def test_exact_count_unique_ids_and_split(split: str) -> None:
    items = generate(split, 75, seed=3)
    assert len(items) == 75
    assert len({i.id for i in items}) == 75
    assert {i.split for i in items} == {split}
    assert generate(split, 0, seed=3) == []


def test_prefix_is_stable_when_n_grows() -> None:
    assert generate("train", 30, seed=9) == generate("train", 60, seed=9)[:30]


@pytest.mark.parametrize("split", ["validation", "", "TEST"])
def test_unknown_split_is_an_error(split: str) -> None:
    with pytest.raises(DatasetError, match="unknown split"):
        generate(split, 5, seed=0)


def test_items_follow_the_contract(test_items) -> None:
    for item in test_items:
        inp, target = item.input, item.target
        assert set(inp) == {"host", "flow", "window", "capture"} and set(inp["host"]) == {"ip", "role"}
        assert inp["capture"] == {"ts_resolution": 1e-06, "unrecorded": []}  # Zeek: microseconds, every field
        flows = [*inp["window"], inp["flow"]]
        assert len(inp["window"]) <= WINDOW
        for flow in flows:
            assert tuple(flow) == FIELDS
            assert flow["id.orig_h"] == inp["host"]["ip"]
            assert flow["proto"] in ("tcp", "udp", "icmp")
            assert isinstance(flow["history"], str) and isinstance(flow["orig_pkts"], int)
            assert round(flow["ts"], 6) == flow["ts"]
            assert flow["duration"] is None or round(flow["duration"], 6) == flow["duration"]
        times = [f["ts"] for f in flows]
        assert times == sorted(times) and (len(times) == 1 or times[-1] > times[-2])
        assert target["label"] in ("Malicious", "Benign") and 0.0 <= target["p_malicious"] <= 1.0
        if target["p_malicious"] in (0.0, 1.0):
            assert (target["label"] == "Malicious") == (target["p_malicious"] == 1.0)
        assert item.meta == {
            "generator_version": GENERATOR_VERSION,
            "difficulty": item.meta["difficulty"],
            "network": "enterprise_iot",
        }


def test_label_and_difficulty_mix(test_items) -> None:
    malicious = sum(i.target["label"] == "Malicious" for i in test_items) / len(test_items)
    assert 0.38 <= malicious <= 0.52
    difficulty = Counter(i.meta["difficulty"] for i in test_items)
    assert 0.05 <= difficulty["ambiguous"] / len(test_items) <= 0.2
    assert difficulty["hard"] > 0.25 * len(test_items) and difficulty["easy"] > 0.2 * len(test_items)
    middle = [i.target["p_malicious"] for i in test_items if i.meta["difficulty"] == "ambiguous"]
    assert all(0.05 < p < 0.95 for p in middle)
    assert any(p < 0.5 for p in middle) and any(p > 0.5 for p in middle)
    # the label of an ambiguous item is sampled: both labels occur
    assert {i.target["label"] for i in test_items if i.meta["difficulty"] == "ambiguous"} == {
        "Malicious",
        "Benign",
    }


def test_ood_uses_another_network_and_unseen_attack_families() -> None:
    train = generate("train", 600, seed=0)
    ood = generate("ood", 300, seed=0)
    train_attacks = {i.target["family"] for i in train if i.target["label"] == "Malicious"}
    ood_attacks = {i.target["family"] for i in ood if i.target["label"] == "Malicious"}
    assert train_attacks == set(IN_DIST_ATTACKS)
    assert ood_attacks == set(OOD_ATTACKS)
    assert not train_attacks & ood_attacks
    assert {i.meta["network"] for i in ood} == {"ot_industrial"}
    assert not {i.input["host"]["role"] for i in ood} <= {i.input["host"]["role"] for i in train}
    assert 0.3 <= sum(i.target["label"] == "Malicious" for i in ood) / len(ood) <= 0.55


def test_every_family_is_in_the_taxonomy_with_its_label(test_items) -> None:
    for item in [*test_items, *generate("ood", 300, seed=5)]:
        family = item.target["family"]
        assert family in FAMILIES, family
        assert label_of(family) == item.target["label"], family


def test_windows_are_short_only_for_easy_items(test_items) -> None:
    # a host that just came up has few earlier flows; a hard item's window is what tells, so it is never cut (a quiet
    # host, a VoIP phone say, can still have fewer than 10 earlier flows in its window: rare, not a cut)
    short = [i for i in test_items if len(i.input["window"]) < 10]
    assert short and sum(i.meta["difficulty"] != "easy" for i in short) <= 0.05 * len(short)


def test_a_hard_items_flow_and_host_do_not_depend_on_its_label(monkeypatch) -> None:
    """The pairs draw the flow and the host before the label: forcing every hard item to be the attack, then
    the twin, gives the same flows and hosts (item by item), and only the windows and labels differ."""
    monkeypatch.setattr(pairs, "P_MALICIOUS", 1.0)
    attacks = generate("test", 300, seed=8)
    monkeypatch.setattr(pairs, "P_MALICIOUS", 0.0)
    twins = generate("test", 300, seed=8)
    hard = [(a, b) for a, b in zip(attacks, twins, strict=True) if a.meta["difficulty"] == "hard"]
    assert len(hard) > 80 and all(b.meta["difficulty"] == "hard" for _, b in hard)
    for attack, twin in hard:
        assert attack.input["flow"] == twin.input["flow"] and attack.input["host"] == twin.input["host"]
        assert (attack.target["label"], twin.target["label"]) == ("Malicious", "Benign")
        assert attack.input["window"] != twin.input["window"]
    families = Counter((a.target["family"], b.target["family"]) for a, b in hard)
    assert {a for a, _ in families} == set(IN_DIST_ATTACKS)  # every attack family has its hard variant


def test_hard_items_are_half_malicious() -> None:
    hard = [i for i in generate("train", 2000, seed=3) if i.meta["difficulty"] == "hard"]
    assert pairs.P_MALICIOUS == 0.5
    assert 0.45 <= sum(i.target["label"] == "Malicious" for i in hard) / len(hard) <= 0.55
