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


def imported_modules(source: str) -> set[str]:
    """Every absolute module name an ``import`` or ``from ... import`` in ``source`` names, wherever it stands,
    except under ``if TYPE_CHECKING:`` (read by type checkers only)."""
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
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def upper_layer_imports(source: str) -> set[str]:
    return {name for name in imported_modules(source)
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
'''
    assert upper_layer_imports(source) == {"security_verifiers.harness.conformance",
                                           "security_verifiers.harness.conformance.mean_rewards",
                                           "security_verifiers.report.metrics"}


def test_no_environment_module_imports_an_upper_layer() -> None:
    found = {}
    for path in sorted((PACKAGE / "envs").rglob("*.py")):
        hits = upper_layer_imports(path.read_text(encoding="utf-8"))
        if hits:
            found[str(path.relative_to(PACKAGE))] = sorted(hits)
    assert not found, f"environment modules importing the layers above them: {found}"
