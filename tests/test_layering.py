"""The package's layers, as DESIGN.md draws them: an environment's modules never import the layers that run or
report on environments (harness, cli, report, train, adapters, bench). What an environment needs from them (the
episode loop, for its data card's baseline table) is handed to it (``build_public_sets(env, out, rewards)``).

Imports inside functions count too: a function-local import hides a circle from the interpreter at load time, not
from the reader."""

from __future__ import annotations

import ast
from pathlib import Path

import security_verifiers

PACKAGE = Path(security_verifiers.__file__).parent
UPPER_LAYERS = ("harness", "cli", "report", "train", "adapters", "bench")


def imported_modules(source: str, package: str = "") -> set[str]:
    """Every module name an ``import`` or ``from ... import`` in ``source`` names, wherever it stands, except under
    ``if TYPE_CHECKING:`` (read by type checkers only); a relative import is read from ``package``, the package the
    source's module is in (``from ..harness import x`` in ``security_verifiers.envs.m`` names
    ``security_verifiers.harness``)."""
    tree = ast.parse(source)
    typing_only = {id(node) for branch in ast.walk(tree)
                   if isinstance(branch, ast.If) and "TYPE_CHECKING" in ast.unparse(branch.test)
                   for stmt in branch.body for node in ast.walk(stmt)}
    names: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            parts = package.split(".") if node.level else []
            if node.level > len(parts):
                continue  # beyond the top package: Python refuses it too
            base = ".".join([*parts[:len(parts) - node.level + 1], *([node.module] if node.module else [])])
            if node.module:
                names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def upper_layer_imports(source: str, package: str = "") -> set[str]:
    return {name for name in imported_modules(source, package)
            if any(name == f"security_verifiers.{layer}" or name.startswith(f"security_verifiers.{layer}.")
                   for layer in UPPER_LAYERS)}


def test_the_checker_sees_local_imports_and_skips_typing_only_ones() -> None:
    source = '''
from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from security_verifiers.harness.runner import run_eval
def figures():
    from security_verifiers.harness.conformance import mean_rewards
import security_verifiers.report.metrics
from ...cli import common
from . import baselines
'''
    assert upper_layer_imports(source, "security_verifiers.envs.phishing") == {
        "security_verifiers.harness.conformance", "security_verifiers.harness.conformance.mean_rewards",
        "security_verifiers.report.metrics", "security_verifiers.cli", "security_verifiers.cli.common"}


def test_no_environment_module_imports_an_upper_layer() -> None:
    found = {}
    for path in sorted((PACKAGE / "envs").rglob("*.py")):
        hits = upper_layer_imports(path.read_text(encoding="utf-8"), _package_of(path))
        if hits:
            found[str(path.relative_to(PACKAGE))] = sorted(hits)
    assert not found, f"environment modules importing the layers above them: {found}"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package_of(path: Path) -> str:
    """The package a file's module is in (a package's ``__init__`` is in the package itself)."""
    return ".".join(path.parent.relative_to(PACKAGE.parent).parts)


def import_pairs_both_ways() -> set[tuple[str, str]]:
    """Pairs of modules of the package that import each other (``a`` before ``b``), a function-local import
    counting as an import, a name that is a submodule read as that submodule."""
    paths = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    edges: set[tuple[str, str]] = set()
    for name, path in paths.items():
        for target in imported_modules(path.read_text(encoding="utf-8"), _package_of(path)):
            while target and target not in paths:
                target = target.rpartition(".")[0]
            if target and target != name:
                edges.add((name, target))
    # "from pkg import sub" names both pkg and pkg.sub: the package edge is the import system's, not a dependency
    edges = {(a, b) for a, b in edges if not any(c.startswith(b + ".") for x, c in edges if x == a)}
    return {(a, b) for a, b in edges if (b, a) in edges and a < b}


#: The circles left, each with why it stays (none now: a new one fails the test; one that is gone must leave the
#: list).
KNOWN_CIRCLES: dict[tuple[str, str], str] = {}


def test_no_new_import_circles() -> None:
    assert import_pairs_both_ways() == set(KNOWN_CIRCLES)
