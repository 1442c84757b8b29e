"""E2's robustness split: rewrites of each public test file that Kubernetes or Terraform reads as the same
configuration, each checked by the oracle and the reference answer, paired by `sv robust`."""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from security_verifiers.cli import main
from security_verifiers.core.errors import DatasetError
from security_verifiers.core.types import Item
from security_verifiers.engines.configs import hcl_document, parse_terraform
from security_verifiers.envs.config_audit.env import ConfigAudit
from security_verifiers.envs.config_audit.rewrites import NOTES, REWRITES, has_repeats
from security_verifiers.envs.kits.robust import Rewrite, clean_id, rewrite_item, robust_items

# Building the split scans ~660 rewritten files with every engine (about 1.5 minutes on a free core, several on
# a busy one); the module builds it once.
pytestmark = pytest.mark.timeout(1800)
ENV = ConfigAudit()
KINDS = {"key_order", "comments", "layout", "quoting", "anchors", "equivalent_expressions"}


@cache
def _clean() -> dict[str, Item]:
    return {item.id: item for item in ENV.dataset("test").items}


@cache
def _robust() -> tuple[Item, ...]:
    return tuple(ENV.dataset("robust").items)


def _loaded(item: Item) -> Any:
    """What the platform reads: the YAML documents, or the evaluated Terraform resources and data sources."""
    text = item.input["text"]
    if item.input["platform"] == "kubernetes":
        return list(yaml.safe_load_all(text))
    return {block.address: block.attributes for block in parse_terraform(text).blocks}


def _key_orders(value: Any) -> list[list[str]]:
    if isinstance(value, dict):
        return [list(value), *(o for v in value.values() for o in _key_orders(v))]
    return [o for v in value for o in _key_orders(v)] if isinstance(value, list) else []


def _scalars(text: str) -> list[tuple[str, str, str | None]]:
    """(tag, value, style) of every scalar in document order, aliases expanded as the loader sees them."""
    out: list[tuple[str, str, str | None]] = []

    def walk(node: yaml.Node) -> None:
        if isinstance(node, yaml.ScalarNode):
            out.append((node.tag, node.value, node.style or None))
        else:
            for child in node.value:
                for n in (child if isinstance(child, tuple) else (child,)):
                    walk(n)

    for doc in yaml.compose_all(text, Loader=yaml.SafeLoader):
        walk(doc)
    return out


_NOTE = "|".join(re.escape(n) for n in NOTES)


def _uncommented(text: str) -> str:
    """``text`` without the comment lines and trailing comments the ``comments`` rewrite adds."""
    text = re.sub(rf"(?m)^[ \t]*(#|//|/\*) ({_NOTE})( \*/)?\n", "", text)
    return re.sub(rf"(?m)[ \t]+(#|//|/\*) ({_NOTE})( \*/)?$", "", text)


def test_every_rewrite_of_every_test_item_keeps_its_findings_and_the_reference_score() -> None:
    """Built at all means every rewrite passed the check; here: ids, targets, meta, which items each kind applies
    to, and that the set is the same when built again."""
    clean, robust = _clean(), _robust()
    kinds = Counter(item.meta["rewrite"] for item in robust)
    platforms = Counter(item.input["platform"] for item in clean.values())
    repeats = sum(has_repeats(item.input) for item in clean.values())
    assert kinds == {"key_order": 150, "comments": 150, "layout": 150, "quoting": platforms["kubernetes"],
                     "equivalent_expressions": platforms["terraform"], "anchors": repeats}
    assert repeats >= 0.7 * platforms["kubernetes"]  # most manifests repeat their labels
    for item in robust:
        of, kind = clean_id(item.id)
        original = clean[of]
        assert item.split == "robust" and item.meta == {**original.meta, "rewrite": kind, "of": of}
        assert item.target == original.target and kind in KINDS
        assert {k: v for k, v in item.input.items() if k != "text"} == \
            {k: v for k, v in original.input.items() if k != "text"}
    again = ENV.dataset("robust").items
    assert [(i.id, i.input) for i in again] == [(i.id, i.input) for i in robust]  # deterministic


def test_each_kind_changes_the_text_as_it_claims_and_not_what_the_platform_reads() -> None:
    clean = _clean()
    changed: Counter[str] = Counter()
    for item in _robust():
        of, kind = clean_id(item.id)
        original, new = clean[of].input["text"], item.input["text"]
        assert new != original, item.id
        assert _loaded(item) == _loaded(clean[of]), item.id
        yaml_file = item.input["platform"] == "kubernetes"
        if kind == "key_order":
            if yaml_file:
                assert _key_orders(_loaded(item)) != _key_orders(_loaded(clean[of]))
            else:  # the same lines, in another order
                assert sorted(new.splitlines()) == sorted(original.splitlines())
        elif kind == "comments":
            assert _uncommented(new) == original
            assert re.search(rf"(?m)^[ \t]*(#|//|/\*) ({_NOTE})", new)  # a comment line
            assert re.search(rf"\S[ \t]+(#|//|/\*) ({_NOTE})", new)  # a trailing comment
        elif kind == "layout":
            if yaml_file:
                assert re.search(r"(?m)^[a-zA-Z]\w*:\n {4}\S", new)
            else:  # whitespace (and a list's trailing comma) only
                assert re.sub(r"\s+|,(?=\s*\])", "", new) == re.sub(r"\s+|,(?=\s*\])", "", original)
                assert re.search(r"(?m)^ {4}\S", new)
        elif kind == "quoting":
            before, after = _scalars(original), _scalars(new)
            assert [s[:2] for s in before] == [s[:2] for s in after]  # every tag and value kept
            assert [s[2] for s in before] != [s[2] for s in after]
        elif kind == "anchors":
            assert re.search(r"&ref\d+\b", new) and re.search(r"\*ref\d+\b", new)
        else:
            assert not yaml_file and hcl_document(new) != hcl_document(original)  # spelled otherwise, read the same
        changed[str(kind)] += 1
    assert set(changed) == KINDS


def test_quoting_never_touches_a_scalar_whose_type_depends_on_its_quotes() -> None:
    risky = ["on", "yes", "no", "off", "y", "null", "~", "0777", "1e3", "1_000", "0x1F", ".5", "+1", "-1", "12:30",
             "2024-01-01", ".inf", "true", "<<", "="]
    manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n" + "".join(
        f"  k{n}: '{value}'\n" for n, value in enumerate(risky)) + "  plain: hello\n"
    quoting = next(r for r in REWRITES if r.kind == "quoting")
    for seed in range(30):
        text = quoting.apply({"platform": "kubernetes", "text": manifest}, random.Random(seed))["text"]
        assert yaml.safe_load(text) == yaml.safe_load(manifest)
        for value in risky:
            assert re.search(rf"""(?m)^  \W?k\d+\W?: (['"]){re.escape(value)}\1$""", text), (seed, value)


def test_a_rewrite_that_changes_the_findings_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    pod = ("---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: extra\nspec:\n  containers:\n    - name: c\n"
           "      image: nginx\n")

    def add_pod(item_input: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        item_input["text"] += pod
        return item_input

    monkeypatch.setattr(ConfigAudit, "rewrites", lambda self: (
        Rewrite("extra_pod", "a Pod added", add_pod, applies=lambda i: i["platform"] == "kubernetes"),))
    with pytest.raises(DatasetError, match=r"rewrite.*would change what is scored.*the oracle finds .*Pod/extra"):
        robust_items(ConfigAudit(), list(_clean().values())[:6])


def test_a_rewrite_that_the_reference_patch_no_longer_fixes_is_refused() -> None:
    """Same findings (a clean resource added), but the reference fix now deletes a resource: the patch part of
    the label changed."""

    def add_resource(item_input: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        item_input["text"] += '\nresource "random_id" "extra" {\n  byte_length = 4\n}\n'
        return item_input

    item = next(i for i in _clean().values() if i.input["platform"] == "terraform")
    new = rewrite_item(item, Rewrite("extra_resource", "a resource added", add_resource))
    problem = ENV.rewrite_problem(item, new)
    assert problem is not None and problem.startswith("the reference answer earns 0.5000")


def test_sv_robust_pairs_each_clean_item_with_its_rewrites(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "runs"
    limit = 9
    assert main(["eval", "config-audit", "--model", "baseline:autofix", "--split", "test,robust", "--limit",
                 str(limit), "--out", str(out), "--run-id", "r", "--quiet"]) == 0
    run = out / "evals" / "config-audit--baseline-autofix" / "r"
    capsys.readouterr()
    assert main(["robust", str(run), "--json", "--n-boot", "50"]) == 0
    result = json.loads(capsys.readouterr().out)
    first = Counter(item.meta["rewrite"] for item in _robust()[:limit])  # the rewrites of the first test items
    assert {kind: row["items"] for kind, row in result["kinds"].items()} == dict(first)
    for row in result["kinds"].values():
        reward = row["metrics"]["reward_mean"]
        assert reward["delta"] == pytest.approx(reward["b"] - reward["a"]) and None not in reward["ci"]
