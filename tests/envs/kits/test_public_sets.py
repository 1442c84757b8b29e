"""The public-set builder: the card's shared skeleton, the files it writes (all or none), its checks, and
``sv data build ENV --public``. Each environment's byte-for-byte rebuild is tested beside it (E1: test_audit.py,
E2: test_generator.py, the template: test_template.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from security_verifiers.cli import main
from security_verifiers.core.datasets import load_public_split
from security_verifiers.envs._template import TemplateEnvironment
from security_verifiers.envs.base import registered
from security_verifiers.envs.kits.public_sets import CardInputs, DataCard, PublicSets, build_public_sets, render_card
from security_verifiers.harness.conformance import baseline_rewards

MANIFEST = {"generator_version": "1.2.3", "splits": {
    "test": {"file": "test.jsonl", "hash": "sha256:aa", "n": 2, "seed": 7},
    "ood": {"file": "ood.jsonl", "hash": "sha256:bb", "n": 1, "seed": 7}}}


def test_render_card_puts_the_environments_parts_in_the_shared_skeleton() -> None:
    card = DataCard(title="E9 demo: public mini sets", about=["What an item is."],
                    sections=[("Balance", ["| a | b |"]), ("Audit", ["x", "", "y"])], limitations=["Few items."])
    assert render_card("demo", MANIFEST, card) == "\n".join([
        "# E9 demo: public mini sets", "", "What an item is.",
        "Rebuild with `sv data build demo --public` (byte-identical on every machine).", "",
        "- Generator version: `1.2.3`",
        '- `test.jsonl`: 2 items, `generate("test", 2, seed=7)`, hash `sha256:aa`',
        '- `ood.jsonl`: 1 items, `generate("ood", 1, seed=7)`, hash `sha256:bb`',
        "", "## Balance", "", "| a | b |", "", "## Audit", "", "x", "", "y", "", "## Limitations", "", "Few items.",
        ""])
    custom = DataCard(title="t", about=[], sections=[], limitations=[], reproducible="the same bytes",
                      rebuild="make data")
    assert "Rebuild with `make data` (the same bytes)." in render_card("demo", MANIFEST, custom)


class _Template(TemplateEnvironment):
    """The template with a builder of another shape (``spec``), a card that fails, or both."""

    spec: PublicSets | None = None

    def public_sets(self) -> PublicSets:
        return self.spec or super().public_sets()


def _failing_card(inputs: CardInputs) -> DataCard:
    raise RuntimeError("the card's figures failed")


def test_the_built_files_load_as_a_public_split(tmp_path: Path) -> None:
    built = build_public_sets(env := TemplateEnvironment(), tmp_path, baseline_rewards(env))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["DATA_CARD.md", "manifest.json", "test.jsonl"]
    assert built.files == (tmp_path / "test.jsonl", tmp_path / "manifest.json", tmp_path / "DATA_CARD.md")
    assert json.loads((tmp_path / "manifest.json").read_text()) == built.manifest
    dataset = load_public_split("template", tmp_path, "test")  # the hash in the manifest is the file's
    assert len(dataset) == 100 and dataset.hash == built.manifest["splits"]["test"]["hash"]


def test_a_failure_leaves_the_previous_files_and_no_partial_ones(tmp_path: Path) -> None:
    build_public_sets(env := TemplateEnvironment(), tmp_path, baseline_rewards(env))
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    env = _Template()
    env.spec = PublicSets(sizes={"test": 5}, generator_version="9.9.9", card=_failing_card)
    with pytest.raises(RuntimeError, match="figures failed"):
        build_public_sets(env, tmp_path, baseline_rewards(env))
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_sizes_must_name_the_public_splits(tmp_path: Path) -> None:
    env = _Template()
    env.spec = PublicSets(sizes={"dev": 5}, generator_version="1.0.0", card=_failing_card)
    with pytest.raises(ValueError, match=r"public sets of \['dev'\], but its public splits are \['test'\]"):
        build_public_sets(env, tmp_path, baseline_rewards(env))
    assert not any(tmp_path.iterdir())


def test_sv_data_build_public_writes_the_committed_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with registered(TemplateEnvironment):
        assert main(["data", "build", "template", "--public", "--out", str(tmp_path / "new")]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["env"] == "template" and summary["files"][0] == str(tmp_path / "new" / "test.jsonl")
    for name in ("test.jsonl", "manifest.json", "DATA_CARD.md"):
        assert (tmp_path / "new" / name).read_bytes() == (TemplateEnvironment.data_dir / name).read_bytes()


def test_sv_data_build_of_one_split_still_works(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "dev.jsonl"
    assert main(["data", "build", "network-logs", "--split", "dev", "--n", "3", "--seed", "1", "--out",
                 str(out)]) == 0
    assert json.loads(capsys.readouterr().out)["n"] == 3
    assert json.loads(out.read_text().splitlines()[0])["sv_dataset"]["written_by"] == "sv data build"


def test_reward_table_lists_each_baseline_to_four_decimals() -> None:
    from security_verifiers.envs.kits.public_sets import reward_table

    assert reward_table({"reference": 1.0, "heuristic": 0.87114}) == [
        "| baseline | reward |", "|---|---:|", "| `reference` | 1.0000 |", "| `heuristic` | 0.8711 |"]
