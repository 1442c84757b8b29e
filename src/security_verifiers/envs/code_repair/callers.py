"""The two callers of a judged program, disguised per run: the serve loop (``judge/serve.py``) and the value encoder
that a compiled script prints with.

The judge calls the program live through the serve loop, then replays exploits through a plain script; a program
that behaves only when it recognises one of them is caught by the other, and one that recognises both (by the names
they leave in its ``__main__``) must not be able to: every top-level name of both is drawn at random, per run, from
one of :data:`VARIANTS` renamings made per process (parsing and renaming costs a few milliseconds, so a run picks a
ready one; the salt is fresh in each process, so no list of names can be known in advance).
"""

from __future__ import annotations

import ast
import random
import secrets
import threading
from functools import cache
from pathlib import Path
from typing import Any

SERVE = Path(__file__).with_name("judge") / "serve.py"
#: Renamings kept per process.
VARIANTS = 64
_SALT = secrets.randbits(64)
#: What a script needs of the serve loop's code to print values as it does.
_ENCODER_PARTS = ("MAX_REPLY", "_HANDLES", "_Ref", "_new_handle", "encode", "_plain", "_name", "_repr", "_classes",
                  "_reply_text", "_raised_text")


def disguise(source: str, seed: int) -> tuple[str, dict[str, str]]:
    """``source`` with its top-level names (functions, classes, globals) renamed at random; (code, old -> new)."""
    tree = ast.parse(source)
    rng = random.Random(seed)
    names: dict[str, str] = {}
    for node in tree.body:
        targets = [node.name] if isinstance(node, ast.FunctionDef | ast.ClassDef) else \
            [t.id for t in getattr(node, "targets", []) if isinstance(t, ast.Name)]
        for name in targets:
            if not name.startswith("__"):
                names[name] = "_" + "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(5, 9)))

    class Rename(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.Name:
            node.id = names.get(node.id, node.id)
            return node

        def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
            node.name = names.get(node.name, node.name)
            self.generic_visit(node)
            return node

        def visit_ClassDef(self, node: ast.ClassDef) -> ast.ClassDef:
            node.name = names.get(node.name, node.name)
            self.generic_visit(node)
            return node

    return ast.unparse(Rename().visit(tree)), names


def _encoder_source() -> str:
    tree = ast.parse(SERVE.read_text(encoding="utf-8"))
    kept: list[ast.stmt] = [
        node for node in tree.body if isinstance(node, ast.FunctionDef | ast.ClassDef | ast.Assign) and
        (getattr(node, "name", None) in _ENCODER_PARTS or
         any(isinstance(t, ast.Name) and t.id in _ENCODER_PARTS for t in getattr(node, "targets", [])))]
    return ast.unparse(ast.Module(body=kept, type_ignores=[]))


@cache
def _variant(index: int) -> dict[str, Any]:
    serve, _ = disguise(SERVE.read_text(encoding="utf-8"), _SALT + 2 * index)
    encoder, names = disguise(_encoder_source(), _SALT + 2 * index + 1)
    return {"serve": serve, "encoder": {"code": encoder, "names": names}}


#: CPython 3.11's ``ast`` is not safe to use from several threads at once (runs are judged from a thread pool).
_AST_LOCK = threading.Lock()


def callers(seed: int) -> dict[str, Any]:
    """The disguised serve loop and script encoder for the run drawn with ``seed``."""
    with _AST_LOCK:
        return _variant(seed % VARIANTS)
