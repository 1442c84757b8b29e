"""The committed public sets are what the generator writes today (a generator, family or sandbox change that
alters them must be followed by `sv data build code-repair --public`), and what the card says of them holds."""

from __future__ import annotations

import json

from security_verifiers.core.datasets import write_jsonl
from security_verifiers.envs.code_repair.env import DATA_DIR, CodeRepair
from security_verifiers.envs.code_repair.generator import generate
from security_verifiers.envs.code_repair.public import shortcut_audit
from security_verifiers.envs.kits.public_sets import PUBLIC_SEED

MANIFEST = json.loads((DATA_DIR / "manifest.json").read_text())


def test_the_ood_split_is_regenerated_byte_for_byte(tmp_path) -> None:  # noqa: ANN001
    items = generate("ood", MANIFEST["splits"]["ood"]["n"], PUBLIC_SEED)
    assert write_jsonl(items, tmp_path / "ood.jsonl") == MANIFEST["splits"]["ood"]["hash"]


def test_the_test_split_starts_with_what_the_generator_writes() -> None:
    committed = list(CodeRepair().dataset("test").items)
    assert [i.model_dump() for i in generate("test", 16, PUBLIC_SEED)] == [i.model_dump() for i in committed[:16]]


def test_every_weakness_is_there_and_no_import_gives_it_away() -> None:
    for split in ("test", "ood"):
        items = list(CodeRepair().dataset(split).items)
        assert len({i.target["cwe"] for i in items}) == 15
        assert any(len(i.input["files"]) > 1 for i in items)
        audit = shortcut_audit(items)
        assert audit["best_rule_accuracy"] < 0.3, audit
