"""Degenerate versions of a program: every function emptied (``return None``) or made to raise.

They are what a policy gets by disabling the program instead of repairing it. The self-check runs them to prove
that none passes a *substantive* functional probe (:func:`.verdict.substantive`), so disabling earns no
functional credit whatever exception a probe expects; the hack baselines use the same rewrites.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Callable

from security_verifiers.envs.code_repair.program import Program


def function_bodies(text: str) -> list[tuple[int, int, int]]:
    """(first body line, last body line, indent) of each outermost function or method, docstrings kept."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    spans = []

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                stmts = node.body
                if len(stmts) > 1 and isinstance(stmts[0], ast.Expr) and isinstance(stmts[0].value, ast.Constant):
                    stmts = stmts[1:]
                first, last = stmts[0], stmts[-1]
                spans.append((first.lineno, last.end_lineno or last.lineno, first.col_offset))
            elif isinstance(node, ast.ClassDef):
                visit(node.body)

    visit(tree.body)
    return spans


def replace_bodies(text: str, make: Callable[[list[str], str], list[str]]) -> str:
    """``text`` with each outermost function's body (its lines) replaced by ``make(lines, indent)``."""
    lines = text.splitlines(keepends=True)
    for first, last, indent in sorted(function_bodies(text), reverse=True):
        pad = " " * indent
        lines[first - 1:last] = [line if line.endswith("\n") else line + "\n"
                                 for line in make(lines[first - 1:last], pad)]
    return "".join(lines)


def returning_none(text: str) -> str:
    return replace_bodies(text, lambda body, pad: [f"{pad}return None\n"])


def raising(text: str, exception: str = "RuntimeError") -> str:
    return replace_bodies(text, lambda body, pad: [f'{pad}raise {exception}("disabled")\n'])


def _caught(tests: str) -> list[str]:
    """The exception class names the test module catches by name (``except ValueError``, ``except mod.Denied``)."""
    try:
        tree = ast.parse(tests)
    except SyntaxError:
        return []
    names: list[str] = []
    for handler in (n for n in ast.walk(tree) if isinstance(n, ast.ExceptHandler) and n.type is not None):
        kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        for kind in kinds:
            name = kind.id if isinstance(kind, ast.Name) else kind.attr if isinstance(kind, ast.Attribute) else None
            if name and name not in names:
                names.append(name)
    return names


def _defined_in(files: dict[str, str], name: str) -> str | None:
    for path, text in files.items():
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        if any(isinstance(n, ast.ClassDef) and n.name == name for n in tree.body):
            return path
    return None


def versions(program: Program) -> list[tuple[str, dict[str, str]]]:
    """(label, files) of every degenerate version worth trying on ``program``: emptied, raising RuntimeError, and
    raising each exception class its tests catch (a class of the program's own only in the file defining it)."""
    files = program.files
    out = [("return None", {p: returning_none(t) for p, t in files.items()}),
           ("raise RuntimeError", {p: raising(t) for p, t in files.items()})]
    for name in _caught(program.tests):
        if name == "RuntimeError":
            continue
        if isinstance(getattr(builtins, name, None), type) and issubclass(getattr(builtins, name), BaseException):
            out.append((f"raise {name}", {p: raising(t, name) for p, t in files.items()}))
        elif (home := _defined_in(files, name)) is not None:
            out.append((f"raise {name}", {p: raising(t, name) if p == home else raising(t)
                                          for p, t in files.items()}))
    return out
