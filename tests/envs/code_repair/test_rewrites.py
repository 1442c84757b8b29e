"""E3's robustness split: the same programs renamed, padded with dead code, re-laid out and with a function moved,
each checked in the sandbox to keep its label, and paired by `sv robust`.

The whole split (344 rewrites) takes about seven minutes to check on two cores, so the sandboxed check runs here on
the first 27 rewrites (the first eight test items, three of them with a moved function); the source-level properties
of each kind are tested on the rewrites of all 100 test items, which are made without running anything."""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from security_verifiers.cli import main
from security_verifiers.core.errors import DatasetError
from security_verifiers.core.types import Item
from security_verifiers.envs.code_repair import rewrites
from security_verifiers.envs.code_repair.env import CodeRepair
from security_verifiers.envs.kits.robust import Rewrite, clean_id, rewrite_item, rewrites_of

ENV = CodeRepair()
KINDS = ("identifier_renaming", "dead_code", "move_functions", "formatting")
#: The first 27 rewrites are those of the first eight test items (four of each, but five without a movable function).
CHECKED = 27


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh cache of passed checks for this module, so that the checks below really run."""
    folder = tmp_path_factory.mktemp("rewrite-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(rewrites, "cache_dir", lambda: folder)
        yield folder


@pytest.fixture(scope="module")
def checked(cache: Path) -> list[Item]:
    """The first rewrites of the robust split, built as `sv eval --split robust --limit 27` builds them."""
    return list(ENV.dataset("robust", n=CHECKED).items)


@pytest.fixture(scope="module")
def every() -> list[tuple[Item, Item]]:
    """(clean, rewritten) for every rewrite of every test item, unchecked."""
    return list(rewrites_of(ENV, ENV.dataset("test").items))


def _of(pairs: list[tuple[Item, Item]], kind: str) -> list[tuple[Item, Item]]:
    return [(a, b) for a, b in pairs if b.meta["rewrite"] == kind]


def _sources(item: Item) -> list[dict[str, str]]:
    return [item.input["files"], item.target["fixed"]]


def test_the_checked_rewrites_keep_ids_targets_and_meta_as_the_kit_says(checked: list[Item]) -> None:
    clean = {i.id: i for i in ENV.dataset("test").items}
    assert len(checked) == CHECKED and len({i.id for i in checked}) == CHECKED
    assert {i.meta["rewrite"] for i in checked} == set(KINDS)
    for item in checked:
        of, kind = clean_id(item.id)
        original = clean[of]
        assert item.split == "robust" and item.meta == {**original.meta, "rewrite": kind, "of": of}
        # the label stays; only the source and the lines that point into it are rewritten
        assert {k: v for k, v in item.target.items() if k not in ("fixed", "location")} \
            == {k: v for k, v in original.target.items() if k not in ("fixed", "location")}
        assert item.input["description"] == original.input["description"]
        assert ENV.item_contract.problem(item) is None
    # the first n of the split are the rewrites of the first test items, item by item, and the same every time
    order = [list(clean).index(clean_id(i.id)[0]) for i in checked]
    assert order == sorted(order) and set(order) == set(range(order[-1] + 1))
    assert [i.id for i in ENV.dataset("robust", n=CHECKED).items] == [i.id for i in checked]  # from the cache
    assert [i.input for i in ENV.dataset("robust", n=CHECKED).items] == [i.input for i in checked]


def test_a_passed_check_is_remembered(checked: list[Item], cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert len(list((cache / "code-repair-rewrites").iterdir())) == CHECKED
    monkeypatch.setattr(rewrites, "self_check", lambda *a, **k: pytest.fail("a remembered check ran again"))
    assert [i.id for i in ENV.dataset("robust", n=CHECKED).items] == [i.id for i in checked]


def test_the_first_n_are_made_and_checked_without_the_others(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []

    def unchecked(self: CodeRepair, pairs: list[tuple[Item, Item]]) -> list[str | None]:
        seen.append(len(pairs))
        return [None] * len(pairs)

    monkeypatch.setattr(CodeRepair, "rewrite_problems", unchecked)
    first = ENV.dataset("robust", n=10)
    more = ENV.dataset("robust", n=17)
    assert seen == [10, 17] and [i.id for i in more.items[:10]] == [i.id for i in first.items]
    assert first.id.endswith("[:10]") and first.id.startswith("code-repair/robust@")
    with pytest.raises(DatasetError, match="must be positive"):
        ENV.dataset("robust", n=0)


class _Blank(ast.NodeTransformer):
    """Every name a renaming may change, blanked: two sources that differ only in those names dump alike."""

    def generic_visit(self, node: ast.AST) -> ast.AST:
        for field in ("id", "arg", "name"):
            if isinstance(node, ast.Name | ast.arg | ast.FunctionDef | ast.ExceptHandler) \
                    and isinstance(getattr(node, field, None), str):
                setattr(node, field, "_")
        return super().generic_visit(node)


def _names(before: str, after: str) -> dict[str, str]:
    """Old name -> new name, node by node."""
    out: dict[str, str] = {}
    for a, b in zip(ast.walk(ast.parse(before)), ast.walk(ast.parse(after)), strict=True):
        for field in ("id", "arg", "name"):
            if isinstance(a, ast.Name | ast.arg | ast.FunctionDef | ast.ExceptHandler) \
                    and isinstance(getattr(a, field, None), str):
                assert out.setdefault(getattr(a, field), getattr(b, field)) == getattr(b, field)  # one map
    return out


def test_renaming_changes_only_names_by_one_map_and_never_a_name_the_tests_use(
        every: list[tuple[Item, Item]]) -> None:
    pairs = _of(every, "identifier_renaming")
    assert len(pairs) == 100
    renamed = 0
    for original, item in pairs:
        names: dict[str, str] = {}
        for before, after in zip(_sources(original), _sources(item), strict=True):
            for path in before:
                # the same tree but for names: strings, attributes, keywords and imports as they were
                blank = [ast.dump(_Blank().visit(ast.parse(text))) for text in (before[path], after[path])]
                assert blank[0] == blank[1]
                for old, new in _names(before[path], after[path]).items():
                    assert names.setdefault(old, new) == new  # the same map in every file and in the fix
        changed = {old: new for old, new in names.items() if old != new}
        assert len(set(changed.values())) == len(changed)  # a bijection...
        assert not set(changed.values()) & set(names)  # ...onto fresh names
        tests = ast.parse(original.target["tests"])
        assert not set(changed) & {n.attr for n in ast.walk(tests) if isinstance(n, ast.Attribute)}
        assert item.target["location"] == original.target["location"]  # names change, lines do not
        renamed += bool(changed)
    assert renamed >= 95


def _without_dead_code(text: str, known: set[str]) -> str:
    tree = ast.parse(text)
    tree.body = [n for n in tree.body if not (isinstance(n, ast.FunctionDef) and n.name not in known)
                 and not (isinstance(n, ast.Assign) and all(isinstance(t, ast.Name) and t.id not in known
                                                             for t in n.targets))]
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            node.body = [n for n in body if not (isinstance(n, ast.If) and isinstance(n.test, ast.Constant)  # type: ignore[attr-defined]
                                                 and n.test.value is False)]
    return ast.dump(tree)


def test_dead_code_adds_only_what_never_runs_and_moves_the_location_with_its_lines(
        every: list[tuple[Item, Item]]) -> None:
    added = {"helper": 0, "if False": 0, "constant": 0}
    for original, item in _of(every, "dead_code"):
        for before, after in zip(_sources(original), _sources(item), strict=True):
            for path in before:
                tree = ast.parse(before[path])
                known = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} \
                    | {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
                assert _without_dead_code(after[path], known) == ast.dump(tree)
        new = [ast.parse(text) for text in item.input["files"].values()]
        old = [ast.parse(text) for text in original.input["files"].values()]
        added["helper"] += sum(isinstance(n, ast.FunctionDef) for t in new for n in t.body) \
            > sum(isinstance(n, ast.FunctionDef) for t in old for n in t.body)
        added["if False"] += any(isinstance(n, ast.If) and isinstance(n.test, ast.Constant) for t in new
                                 for n in ast.walk(t))
        added["constant"] += sum(isinstance(n, ast.Assign) for t in new for n in t.body) \
            > sum(isinstance(n, ast.Assign) for t in old for n in t.body)
        loc, was = item.target["location"], original.target["location"]
        assert item.input["files"][loc["file"]].split("\n")[loc["start"] - 1:loc["end"]] \
            == original.input["files"][was["file"]].split("\n")[was["start"] - 1:was["end"]]
    assert all(count >= 90 for count in added.values()), added


def test_formatting_keeps_the_syntax_tree_and_the_statements_at_the_location(every: list[tuple[Item, Item]]) -> None:
    for original, item in _of(every, "formatting"):
        for before, after in zip(_sources(original), _sources(item), strict=True):
            for path in before:
                assert ast.dump(ast.parse(after[path])) == ast.dump(ast.parse(before[path]))
        assert item.input["files"] != original.input["files"]

        def located(it: Item) -> list[str]:
            loc = it.target["location"]
            tree = ast.parse(it.input["files"][loc["file"]])
            return [ast.dump(n) for n in ast.walk(tree)
                    if isinstance(n, ast.stmt) and loc["start"] <= n.lineno <= loc["end"]]

        assert located(item) == located(original)


def _functions(files: dict[str, str]) -> dict[str, str]:
    return {n.name: ast.dump(n) for text in files.values() for n in ast.parse(text).body
            if isinstance(n, ast.FunctionDef)}


def test_a_moved_function_is_the_same_function_and_is_still_reached_where_it_was(
        every: list[tuple[Item, Item]]) -> None:
    pairs = _of(every, "move_functions")
    assert 40 <= len(pairs) < 100  # only where a function reads nothing a test sets on its module
    for original, item in pairs:
        for before, after in zip(_sources(original), _sources(item), strict=True):
            assert _functions(after) == _functions(before)  # every function, unchanged, somewhere
            moved = [(path, name) for path, text in before.items() for name in _functions({path: text})
                     if name not in _functions({path: after[path]})]
            assert len(moved) == 1
            path, name = moved[0]
            imports = [n for n in ast.parse(after[path]).body if isinstance(n, ast.ImportFrom)]
            assert any(a.name == name for n in imports for a in n.names)  # imported back under its name
            assert set(after) - set(before) <= {p for p in after if name in _functions({p: after[p]})}
        loc, was = item.target["location"], original.target["location"]
        assert item.input["files"][loc["file"]].split("\n")[loc["start"] - 1:loc["end"]] \
            == original.input["files"][was["file"]].split("\n")[was["start"] - 1:was["end"]]


def test_rewrites_are_deterministic(every: list[tuple[Item, Item]]) -> None:
    for original, item in every[:40]:
        rewrite = next(r for r in ENV.rewrites() if r.kind == item.meta["rewrite"])
        again = rewrite_item(original, rewrite)
        assert again is not None and (again.input, again.target) == (item.input, item.target)


def _rename_public(item_input: dict[str, Any], target: dict[str, Any],
                   rng: object) -> tuple[dict[str, Any], dict[str, Any]]:
    """A public function the tests call renamed: nothing at the location changes, but the tests find nothing."""
    called = {n.attr for n in ast.walk(ast.parse(target["tests"])) if isinstance(n, ast.Attribute)}
    public = next(n.name for text in item_input["files"].values() for n in ast.parse(text).body
                  if isinstance(n, ast.FunctionDef) and n.name in called)
    names = {public: f"{public}_v2"}
    item_input["files"] = {p: rewrites.rename(t, names) for p, t in item_input["files"].items()}
    target["fixed"] = {p: rewrites.rename(t, names) for p, t in target["fixed"].items()}
    return item_input, target


def _import_pickle(item_input: dict[str, Any], target: dict[str, Any],
                   rng: object) -> tuple[dict[str, Any], dict[str, Any]]:
    """An import bandit flags (B403) appended to each module: a finding the scorer would read."""
    item_input["files"] = {p: t + "import pickle\n" for p, t in item_input["files"].items()}
    return item_input, target


def _shift(item_input: dict[str, Any], target: dict[str, Any], rng: object) -> tuple[dict[str, Any], dict[str, Any]]:
    return item_input, {**target, "location": {**target["location"], "start": 1, "end": 1}}


@pytest.mark.parametrize(("rewrite", "why"), [
    (Rewrite("rename_public", "a function the tests call renamed", apply_item=_rename_public),
     "fails the self-check: vulnerable version fails functional probes"),
    (Rewrite("import_pickle", "import pickle appended", apply_item=_import_pickle),
     "analysers' findings on the program change \\(lost \\[\\], gained \\[\\('B403'"),
    (Rewrite("shift", "the location moved to line 1", apply_item=_shift), "statements at the location change"),
])
def test_a_rewrite_that_changes_the_label_is_refused(rewrite: Rewrite, why: str, cache: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(CodeRepair, "rewrites", lambda self: (rewrite,))
    with pytest.raises(DatasetError, match=f"rewrite.*would change what is scored.*{why}"):
        CodeRepair().dataset("robust", n=1)


def test_sv_robust_pairs_each_clean_item_with_its_rewrites(checked: list[Item], tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "runs"
    assert main(["eval", "code-repair", "--model", "baseline:reference", "--split", "test,robust", "--limit", "16",
                 "--out", str(out), "--run-id", "r", "--quiet"]) == 0
    run = out / "evals" / "code-repair--baseline-reference" / "r"
    capsys.readouterr()
    assert main(["robust", str(run), "--json", "--n-boot", "50"]) == 0
    result = json.loads(capsys.readouterr().out)
    # the first 16 rewrites are those of the first five test items (one of them with a function moved), all among
    # the first 16 clean items
    expected = {kind: sum(1 for i in checked[:16] if i.meta["rewrite"] == kind) for kind in KINDS}
    assert {kind: row["items"] for kind, row in result["kinds"].items()} == expected
    assert expected["move_functions"] >= 1
    for row in result["kinds"].values():
        reward = row["metrics"]["reward_mean"]
        assert reward["a"] == reward["b"] == 1.0 and reward["ci"] == [0.0, 0.0]  # the reference stays on top
