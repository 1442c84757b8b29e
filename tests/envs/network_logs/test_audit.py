"""The public sets match their manifest and rebuild byte for byte; no one field predicts the label."""

import json
from pathlib import Path

import pytest

from security_verifiers.core.datasets import read_jsonl
from security_verifiers.core.types import Item
from security_verifiers.envs.network_logs.audit import CATEGORICAL_FIELDS, NUMERIC_FIELDS, shortcut_audit
from security_verifiers.envs.network_logs.env import DATA_DIR
from security_verifiers.envs.network_logs.generator import GENERATOR_VERSION, generate
from security_verifiers.envs.network_logs.public import PUBLIC_SEED, PUBLIC_SIZES, build_public_sets

MANIFEST = json.loads((DATA_DIR / "manifest.json").read_text())


@pytest.fixture(scope="module")
def public_test() -> list[Item]:
    entry = MANIFEST["splits"]["test"]
    return list(read_jsonl(DATA_DIR / entry["file"], "test", entry["hash"]).items)


@pytest.mark.parametrize("split", sorted(PUBLIC_SIZES))
def test_committed_files_match_the_manifest(split: str) -> None:
    entry = MANIFEST["splits"][split]
    dataset = read_jsonl(DATA_DIR / entry["file"], split, expected_hash=entry["hash"])
    assert len(dataset) == entry["n"] == PUBLIC_SIZES[split]
    assert entry["seed"] == PUBLIC_SEED and dataset.splits == (split,)
    assert MANIFEST["generator_version"] == GENERATOR_VERSION


def test_build_reproduces_the_committed_files(tmp_path: Path) -> None:
    manifest = build_public_sets(tmp_path)
    assert manifest == MANIFEST
    for name in ("manifest.json", "test.jsonl", "ood.jsonl", "DATA_CARD.md"):
        assert (tmp_path / name).read_bytes() == (DATA_DIR / name).read_bytes(), name


def test_no_single_field_predicts_the_label(public_test) -> None:
    audit = shortcut_audit(public_test)
    assert set(audit["fields"]) == set(NUMERIC_FIELDS) | set(CATEGORICAL_FIELDS)
    assert audit["max_balanced_accuracy"] <= 0.8
    assert audit["max_balanced_accuracy"] == max(f["balanced_accuracy"] for f in audit["fields"].values())
    assert sum(audit["label_balance"].values()) == pytest.approx(1.0)
    card = (DATA_DIR / "DATA_CARD.md").read_text()
    assert f"balanced accuracy {audit['max_balanced_accuracy']:.3f}" in card


def test_audit_finds_a_planted_shortcut() -> None:
    items = generate("test", 300, seed=4)
    planted = [
        i.model_copy(
            update={
                "input": {
                    **i.input,
                    "flow": {
                        **i.input["flow"],
                        "id.resp_p": 31337 if i.target["label"] == "Malicious" else 443,
                    },
                }
            }
        )
        for i in items
    ]
    audit = shortcut_audit(planted)
    assert audit["max_field"] == "id.resp_p" and audit["max_balanced_accuracy"] > 0.99


def test_audit_needs_both_labels() -> None:
    benign = [i for i in generate("test", 50, seed=4) if i.target["label"] == "Benign"]
    with pytest.raises(ValueError, match="both labels"):
        shortcut_audit(benign)
