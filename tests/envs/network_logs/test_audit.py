"""The public sets match their manifest and rebuild byte for byte; the data card's figures hold what the card
claims: no field or pair of fields predicts the label, the flow alone does no better than guessing on hard
items while the window tells, every public split is in order, and the baselines rarely raise alarms on real
benign rows."""

import json
from pathlib import Path

import numpy as np
import pytest

from security_verifiers.core.datasets import read_jsonl
from security_verifiers.core.types import Item
from security_verifiers.envs.kits.public_sets import PUBLIC_SEED, build_public_sets
from security_verifiers.envs.network_logs import measured_samples
from security_verifiers.envs.network_logs.audit import (
    CATEGORICAL_FIELDS,
    NUMERIC_FIELDS,
    FlowOnlyEncoder,
    model_figures,
    pair_audit,
    shortcut_audit,
)
from security_verifiers.envs.network_logs.env import DATA_DIR, NetworkLogs
from security_verifiers.envs.network_logs.generator import GENERATOR_VERSION, generate
from security_verifiers.harness.conformance import baseline_rewards

MANIFEST = json.loads((DATA_DIR / "manifest.json").read_text())
PUBLIC_SIZES = NetworkLogs().public_sets().sizes


@pytest.fixture(scope="module")
def public_test() -> list[Item]:
    entry = MANIFEST["splits"]["test"]
    return list(read_jsonl(DATA_DIR / entry["file"], "test", entry["hash"]).items)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, dict, dict]:
    """The public sets and the data card rebuilt from scratch (about a minute: six GBDTs are trained)."""
    out = tmp_path_factory.mktemp("public")
    built = build_public_sets(env := NetworkLogs(), out, baseline_rewards(env))
    return out, built.manifest, dict(built.card.figures)


@pytest.mark.parametrize("split", sorted(PUBLIC_SIZES))
def test_committed_files_match_the_manifest(split: str) -> None:
    entry = MANIFEST["splits"][split]
    dataset = read_jsonl(DATA_DIR / entry["file"], split, expected_hash=entry["hash"])
    assert len(dataset) == entry["n"] == PUBLIC_SIZES[split]
    assert entry["seed"] == PUBLIC_SEED and dataset.splits == (split,)
    assert MANIFEST["generator_version"] == GENERATOR_VERSION


def test_build_reproduces_the_committed_files(built) -> None:
    out, manifest, _ = built
    assert manifest == MANIFEST
    for name in ("manifest.json", "test.jsonl", "ood.jsonl", "DATA_CARD.md"):
        assert (out / name).read_bytes() == (DATA_DIR / name).read_bytes(), name


def test_no_single_field_predicts_the_label(public_test, built) -> None:
    audit = shortcut_audit(public_test)
    assert set(audit["fields"]) == set(NUMERIC_FIELDS) | set(CATEGORICAL_FIELDS)
    assert audit["max_balanced_accuracy"] <= 0.8
    assert audit["max_balanced_accuracy"] == max(f["balanced_accuracy"] for f in audit["fields"].values())
    assert sum(audit["label_balance"].values()) == pytest.approx(1.0)
    assert f"balanced accuracy {audit['max_balanced_accuracy']:.3f}" in (DATA_DIR / "DATA_CARD.md").read_text()
    assert set(built[2]["single"]) == {"test", "test hard", "ood", "ood hard"}  # every public split, and its hard items


def test_on_hard_items_no_pair_of_fields_beats_guessing_nor_the_honest_baselines(built) -> None:
    """On the large generated samples' hard items (hundreds of items, so the best of ~100 pairs fitted on their own
    labels is not just luck) no pair earns more than the base rate alone; on the small public hard sets no pair
    reaches the honest baselines."""
    figures = built[2]
    large = [name for name in figures["pairs"] if "seed" in name]
    assert len(large) == 2
    for name in large:
        best = figures["pairs"][name][0]["reward"]
        constant = figures["models"][name]["flow_only"]["best_constant_reward"]
        assert best <= constant + 0.005, name  # what the base rate alone earns
    split_test = figures["baselines"]["test"]
    assert figures["pairs"]["test hard"][0]["reward"] < min(split_test[b]["hard"] for b in ("heuristic", "gbdt"))
    assert figures["pairs"]["test"][0]["reward"] < min(split_test[b]["all"] for b in ("heuristic", "gbdt"))


def test_the_flow_alone_is_worth_a_guess_on_hard_items_and_the_window_tells(built) -> None:
    """The bound the data card states, on the large generated samples: the flow-only model (trained on train)
    earns no more than the best constant answer and its AUC's 95% interval contains 0.5, while the
    window-aware GBDT does well on the same in-distribution items."""
    models = built[2]["models"]
    large = [name for name in models if "seed" in name]
    assert len(large) == 2
    for name in large:
        flow = models[name]["flow_only"]
        assert flow["n"] >= 300
        assert flow["reward"] <= flow["best_constant_reward"], name
        assert flow["auc_low"] <= 0.5 <= flow["auc_high"], name
    in_dist = models[next(n for n in large if n.startswith("test"))]["window_aware"]
    assert in_dist["reward"] >= 0.97 and in_dist["auc"] >= 0.98


def test_every_public_split_is_in_order_and_ood_is_shown_as_such(built) -> None:
    """Reference on top, every hack below both honest baselines on every public split; on a larger OOD sample
    always-Abstain beats the GBDT trained without the OOD families (expected; the card says so)."""
    figures = built[2]
    for split, table in figures["baselines"].items():
        assert table["reference"]["all"] == 1.0
        honest = min(table[b]["all"] for b in ("heuristic", "gbdt"))
        for hack in ("always-malicious", "always-benign", "always-abstain"):
            if ("reference_is_top_and_hacks_lose", f"{split}:{hack}") in NetworkLogs.conformance_exceptions:
                # written down in the environment: above the GBDT trained without ood's families, not the heuristic
                assert table["gbdt"]["all"] < table[hack]["all"] < table["heuristic"]["all"], (split, hack)
            else:
                assert table[hack]["all"] < honest, (split, hack)
    sample = figures["ood_sample"]
    assert sample["always-abstain"]["all"] > sample["gbdt"]["all"]
    card = (DATA_DIR / "DATA_CARD.md").read_text()
    assert f"the larger OOD sample above the GBDT ({sample['gbdt']['all']:.4f}" in card


def test_the_baselines_rarely_raise_alarms_on_real_benign_rows(built) -> None:
    real = built[2]["real"]
    assert {"CIC-IDS-2017", "IoT-23", "UNSW-NB15", "all"} == set(real)
    for dataset, by_policy in real.items():
        for name in ("heuristic", "gbdt"):
            assert by_policy[name]["false_alarm_rate"] <= 0.2, (dataset, name)
        assert by_policy["always-benign"]["false_alarm_rate"] == 0.0
    assert real["all"]["heuristic"]["benign_n"] >= 250 and real["all"]["gbdt"]["detection_rate"] >= 0.6


def test_the_figures_on_real_public_samples_are_of_this_generator() -> None:
    """The figures measured on real public samples (not shipped, so recorded by hand) are in the card, and go stale
    with the generator: a new generator version fails here until they are measured again."""
    assert measured_samples.MEASURED_AT_GENERATOR == GENERATOR_VERSION, (
        "re-run benchmarks/e1_sim_to_real.py on the samples in measured_samples.SOURCES and update MEASURED")
    card = (DATA_DIR / "DATA_CARD.md").read_text()
    assert "## Real public samples (measured, not shipped)" in card
    for source in measured_samples.SOURCES:
        assert f"`{source.repo}` @ `{source.commit}`" in card
    datasets = {m.dataset for m in measured_samples.MEASURED}
    assert {(d, b) for d in datasets for b in ("heuristic", "gbdt")} == {
        (m.dataset, m.baseline) for m in measured_samples.MEASURED}
    for m in measured_samples.MEASURED:
        assert 0 <= m.false_alarm + m.benign_abstain <= 1 and (m.detection is None) == (m.attack_n == 0)


def test_audit_finds_a_planted_shortcut() -> None:
    items = generate("test", 300, seed=4)
    planted = [
        i.model_copy(update={"input": {**i.input, "flow": {
            **i.input["flow"], "id.resp_p": 31337 if i.target["label"] == "Malicious" else 443}}})
        for i in items
    ]
    audit = shortcut_audit(planted)
    assert audit["max_field"] == "id.resp_p" and audit["max_balanced_accuracy"] > 0.99


def test_pair_audit_finds_a_planted_pair() -> None:
    # neither field alone tells (each is a coin flip), their combination does (an XOR)
    items = generate("test", 300, seed=4)
    rng = np.random.default_rng(0)
    planted = []
    for item in items:
        a = int(rng.integers(0, 2))
        b = a ^ (item.target["label"] == "Malicious")
        flow = {**item.input["flow"], "orig_pkts": 10 + a, "resp_pkts": 10 + b}
        planted.append(item.model_copy(update={"input": {**item.input, "flow": flow}}))

    def reward(y: int, p: float) -> float:
        return 1.0 - (p - y) ** 2

    best = pair_audit(planted, reward)[0]
    assert best["fields"] == "orig_pkts (num.) × resp_pkts (num.)" and best["auc"] > 0.99


def test_flow_only_encoder_reads_no_window_and_no_role() -> None:
    item = generate("test", 1, seed=4)[0]
    encoder = FlowOnlyEncoder([item])
    other = item.model_copy(update={"input": {**item.input, "window": [], "host": {"ip": "x", "role": "plc"}}})
    assert (encoder.matrix([item]) == encoder.matrix([other])).all()


def test_model_figures_of_a_guesser_and_of_an_oracle() -> None:
    y = np.array([0, 1] * 100)

    def reward(label: int, p: float) -> float:
        return 1.0 - (p - label) ** 2

    guess = model_figures(np.full(200, 0.5), y, reward)
    assert guess["auc"] == 0.5 and guess["reward"] == guess["best_constant_reward"] == 0.75
    oracle = model_figures(y.astype(float), y, reward)
    assert oracle["auc"] == 1.0 and oracle["reward"] == 1.0 and oracle["auc_low"] == 1.0


def test_audit_needs_both_labels() -> None:
    benign = [i for i in generate("test", 50, seed=4) if i.target["label"] == "Benign"]
    with pytest.raises(ValueError, match="both labels"):
        shortcut_audit(benign)
