"""E3's label-preserving rewrites (the ``robust`` split, :mod:`..kits.robust`): the same program, written otherwise.

- ``identifier_renaming``: function parameters, local variables and private module-level functions (``_name``)
  renamed, by one map per program. Kept as they are: every name the hidden tests, the probes (a taint entry's
  parameter), the fixtures or a string of the program spell (the tests call the public functions, set module globals
  and pass keywords; ``getattr`` and ``__all__`` name things by string), attribute and keyword names, other
  module-level and class-level names, imported names, builtins, ``self``/``cls``, the names of a module that reads
  its namespace (``locals()``, ``eval``...), and names the analysers read (bandit's hard-coded password tests and our
  timing rule key on ``password``, ``token``...: renaming those would change the static signal the scorer reads).
  Docstrings and comments are left as written.
- ``dead_code``: an unused private helper before a function, an ``if False:`` block at the top of a function's body
  (CPython compiles it away) and an unused module-level constant after the imports, each under a fresh name (an
  assignment to a name the function reads would make it local).
- ``formatting``: every module re-laid out from its syntax tree (``ast.unparse``: its quotes, one line per statement,
  no comments; two blank lines around top-level definitions): the same AST.
- ``move_functions``: a top-level function moved to the end of another module of the program that does not import its
  module (else to a new module beside it, when the program has fewer than three), with the imports it reads, and
  imported back where its module's imports end (an import only it read goes with it), so the tests still call it where
  they did. Only a function that reads no module-level name but imports and builtins moves: the tests set module
  globals (``avatars.AVATAR_DIR = ...``), which a function reads from the module it is defined in, so one reading them
  would no longer see what a test sets; nor one reading what the tests set on a module, one the probes name (a taint
  entry), or one whose move bandit would see (a flagged import now in two modules). Where no function can move (56 of
  the 100 test programs: their functions read module constants), the item has no rewrite of this kind.

Each rewrites the reference fix alike (the same map, the same dead code before the same functions, the same function
moved) and moves the weakness's location with its code, since the target points into the source
(:attr:`.kits.robust.Rewrite.apply_item`).

The check (:func:`rewrite_problems`) is the generator's self-check (:mod:`.selfcheck`) of the rewritten program, in
the sandbox: its vulnerable version is exploited by every exploit probe and passes its functional ones, its reference
fix passes them all and blocks every exploit, bandit flags the weakness at its moved location and not in the fix,
the semgrep rules that signal it and the functional probes a degenerate version passes are those the item records.
Before that, without running anything: the rewritten item meets the item contract and keeps every target field but
the fix and the location, its reference patch reaches for no harness internals, the statements at its location are
of the same kinds, and bandit's and our semgrep rules' findings (test and severity) on both versions are the same
as on the original's. A check that passed is remembered on disk (:func:`_cache_file`), keyed by the content of
both items and of the code that checks them, as the sandbox takes about a second a program.
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import io
import json
import keyword
import random
import symtable
import tokenize
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from security_verifiers.core.fingerprint import files_digest, library_versions
from security_verifiers.core.paths import cache_dir
from security_verifiers.core.types import Item
from security_verifiers.envs.code_repair.items import CodeRepairContract, is_program, program_of
from security_verifiers.envs.code_repair.scoring import harness_probes
from security_verifiers.envs.code_repair.selfcheck import self_check
from security_verifiers.envs.code_repair.static import StaticFinding, scan, semgrep_scan_many
from security_verifiers.envs.kits.patching import files_diff
from security_verifiers.envs.kits.robust import Rewrite

Files = dict[str, str]
#: Maps a line of a vulnerable file to its line in the rewritten file.
LineMap = Callable[[str, int], int]

#: Parts of names that bandit's B105-B107 (``pas+wo?r?d|pass(phrase)?|pwd|token|secrete?``) or our timing rule
#: (``semgrep_rules/python.yaml``) read: a name holding one keeps it.
_SIGNAL_PARTS = ("pass", "pwd", "token", "secret", "signature", "digest", "hmac", "api_key", "apikey", "csrf", "sig",
                 "mac")
#: Calls that read a module's namespace by name: a module making one keeps all of its names.
_DYNAMIC = frozenset({"locals", "globals", "vars", "eval", "exec", "dir", "__import__"})
_KEPT = frozenset({"self", "cls"})
_LOCAL_STEMS = ("value", "item", "entry", "part", "field", "arg", "elem", "obj", "unit", "piece", "datum", "node")
_HELPER_STEMS = ("apply", "run", "step", "handle", "process", "compute", "resolve", "convert")


# -- shared ------------------------------------------------------------------------------------------------------
def _words(text: str) -> set[str]:
    """The identifier-like words of ``text`` (a name spelled in a string or a test is kept)."""
    out, word = set(), []
    for ch in text + " ":
        if ch.isalnum() or ch == "_":
            word.append(ch)
        elif word:
            out.add("".join(word))
            word = []
    return out


def _value_words(value: Any) -> set[str]:
    """The words of every key and string inside a JSON value (an item's target, its probes)."""
    if isinstance(value, dict):
        return {w for k, v in value.items() for w in _words(str(k)) | _value_words(v)}
    if isinstance(value, list):
        return {w for v in value for w in _value_words(v)}
    return _words(value) if isinstance(value, str) else set()


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring constants of a module, its classes and functions."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                out.add(id(first.value))
    return out


def _versions(item_input: dict[str, Any], target: dict[str, Any]) -> list[Files]:
    """The program's versions: the vulnerable files, and the reference fix where the item has one."""
    return [item_input["files"], *([target["fixed"]] if target.get("fixed") is not None else [])]


def _taken(item_input: dict[str, Any], target: dict[str, Any]) -> set[str]:
    """Every word of the program, its fix, its tests and the rest of its target: a fresh name is none of them."""
    return _value_words([item_input, target]) | set(dir(builtins)) | set(keyword.kwlist)


def _fresh(taken: set[str], rng: random.Random, stems: Sequence[str], pattern: str) -> str:
    while True:
        name = pattern.format(stem=rng.choice(stems), n=rng.randrange(2, 100))
        if name not in taken:
            taken.add(name)
            return name


def _moved(target: dict[str, Any], line_map: LineMap) -> dict[str, Any]:
    """``target`` with its location's lines mapped into the rewritten file."""
    loc = target["location"]
    start, end = line_map(loc["file"], loc["start"]), line_map(loc["file"], loc["end"])
    return {**target, "location": {**loc, "start": start, "end": max(start, end)}}


def edit_lines(text: str, edits: Iterable[tuple[int, int, list[str]]]) -> tuple[str, dict[int, int]]:
    """``text`` with lines ``start..end`` (1-based, inclusive; ``end = start - 1`` inserts before ``start``) replaced by
    the new lines of each edit (edits do not overlap), and where each line that stays went."""
    lines = text.split("\n")
    out: list[str] = []
    where: dict[int, int] = {}
    cursor = 1
    for start, end, new in sorted(edits, key=lambda e: (e[0], e[1])):
        for line in range(cursor, start):
            out.append(lines[line - 1])
            where[line] = len(out)
        out += new
        cursor = max(cursor, end + 1)
    for line in range(cursor, len(lines) + 1):
        out.append(lines[line - 1])
        where[line] = len(out)
    return "\n".join(out), where


# -- identifier renaming -------------------------------------------------------------------------------------------
def _private_defs(tree: ast.Module) -> set[str]:
    """The module's private functions whose name no other module-level statement binds."""
    defs = {node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and node.name.startswith("_") and not node.name.startswith("__")}
    others = set()
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            others |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            others |= {a.asname or a.name.split(".")[0] for n in ast.walk(node)
                       if isinstance(n, ast.Import | ast.ImportFrom) for a in n.names}
    return defs - others


def _scopes(text: str) -> tuple[set[str], set[str]]:
    """(names this module binds only in function scopes or as private module-level functions, names it keeps)."""
    tree = ast.parse(text)
    private = _private_defs(tree)
    bound, kept = set(private), set()

    def visit(table: symtable.SymbolTable) -> None:
        kind = str(table.get_type()).lower().rsplit(".", 1)[-1]
        for sym in table.get_symbols():
            name = sym.get_name()
            if kind != "function":  # module-level names but private functions; class-level names are attributes
                if kind != "module" or name not in private:
                    kept.add(name)
            elif sym.is_declared_global() or sym.is_nonlocal() or sym.is_imported():
                kept.add(name)
            elif sym.is_global() and name not in private:
                kept.add(name)
            elif sym.is_local() and (sym.is_parameter() or sym.is_assigned()):
                bound.add(name)
        for child in table.get_children():
            visit(child)

    visit(symtable.symtable(text, "<program>", "exec"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            kept.add(node.attr)
        elif isinstance(node, ast.keyword) and node.arg:
            kept.add(node.arg)
        elif isinstance(node, ast.alias):
            kept |= {node.asname or "", *node.name.split(".")}
        elif isinstance(node, ast.ClassDef):
            kept.add(node.name)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            kept.update(node.names)
        elif isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:
            kept.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            kept.add(node.rest)
    strings = _docstrings(tree)
    strings |= {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}  # f-string text
    kept |= {w for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
             and id(n) not in strings for w in _words(n.value)}
    dynamic = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _DYNAMIC
                  for n in ast.walk(tree)) or any(isinstance(n, ast.Attribute) and n.attr == "__dict__"
                                                  for n in ast.walk(tree))
    if dynamic:
        kept |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | bound
    return bound, kept


def _signal(name: str) -> bool:
    lowered = name.lower()
    return any(part in lowered for part in _SIGNAL_PARTS)


def renaming_map(item_input: dict[str, Any], target: dict[str, Any], rng: random.Random) -> dict[str, str]:
    """Old name -> fresh name, for the names safe to rename in every version of the program (see the module doc)."""
    bound: set[str] = set()
    kept = _value_words({k: v for k, v in target.items() if k != "fixed"})  # the tests' words among them
    for files in _versions(item_input, target):
        for text in files.values():
            found, keep = _scopes(text)
            bound |= found
            kept |= keep
    names = sorted(n for n in bound - kept - _KEPT if not n.startswith("__") and not _signal(n)
                   and not hasattr(builtins, n))
    taken = _taken(item_input, target)
    return {n: _fresh(taken, rng, _HELPER_STEMS, "_{stem}_{n}") if n.startswith("_")
            else _fresh(taken, rng, _LOCAL_STEMS, "{stem}_{n}") for n in names}


def _spots(text: str, names: dict[str, str]) -> list[tuple[int, int, str]]:
    """(line, character column, name) of every occurrence of a renamed name in ``text``'s code."""
    tree = ast.parse(text)
    lines = text.split("\n")
    tokens = [t for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type == tokenize.NAME]

    def char_col(line: int, byte_col: int) -> int:
        return len(lines[line - 1].encode()[:byte_col].decode())

    def name_after(line: int, col: int, word: str) -> tuple[int, int]:
        """The position of the name that follows the keyword ``word`` at or after (line, col)."""
        rest = [t for t in tokens if t.start >= (line, col)]
        at = next(i for i, t in enumerate(rest) if t.string == word)
        return rest[at + 1].start

    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in names:
            out.append((node.lineno, char_col(node.lineno, node.col_offset), node.id))
        elif isinstance(node, ast.arg) and node.arg in names:
            out.append((node.lineno, char_col(node.lineno, node.col_offset), node.arg))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in names:
            out.append((*name_after(node.lineno, char_col(node.lineno, node.col_offset), "def"), node.name))
        elif isinstance(node, ast.ExceptHandler) and node.name in names:
            out.append((*name_after(node.lineno, char_col(node.lineno, node.col_offset), "as"), node.name))
    return out


class _Renamer(ast.NodeTransformer):
    """The syntax tree a renamed source must parse to: what :func:`rename` is checked against."""

    def __init__(self, names: dict[str, str]) -> None:
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.AST:
        node.id = self.names.get(node.id, node.id)
        return node

    def visit_arg(self, node: ast.arg) -> ast.AST:
        self.generic_visit(node)
        node.arg = self.names.get(node.arg, node.arg)
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        self.generic_visit(node)
        node.name = self.names.get(node.name, node.name)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> ast.AST:
        self.generic_visit(node)
        node.name = self.names.get(node.name, node.name) if node.name else node.name
        return node


def renamed_tree(text: str, names: dict[str, str]) -> ast.Module:
    return _Renamer(names).visit(ast.parse(text))


def rename(text: str, names: dict[str, str]) -> str:
    """``text`` with every occurrence of a renamed name replaced where the syntax tree puts it (comments, strings and
    docstrings untouched); raises ValueError where a position does not hold the name (never silently wrong)."""
    lines = text.split("\n")
    for line, col, name in sorted(_spots(text, names), reverse=True):
        if lines[line - 1][col:col + len(name)] != name:
            raise ValueError(f"line {line} column {col} does not hold {name!r}")
        lines[line - 1] = lines[line - 1][:col] + names[name] + lines[line - 1][col + len(name):]
    out = "\n".join(lines)
    if ast.dump(ast.parse(out)) != ast.dump(renamed_tree(text, names)):
        raise ValueError("the renamed source does not parse to the renamed tree")
    return out


def rename_identifiers(item_input: dict[str, Any], target: dict[str, Any],
                       rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    names = renaming_map(item_input, target, rng)
    while True:  # a name whose position the parser misreports (inside an f-string) is kept
        try:
            renamed = [{p: rename(t, names) for p, t in files.items()} for files in _versions(item_input, target)]
            break
        except ValueError as err:
            culprit = next((n for n in names if repr(n) in str(err)), None)
            if culprit is None:
                raise
            del names[culprit]
    item_input["files"] = renamed[0]
    if len(renamed) > 1:
        target["fixed"] = renamed[1]
    return item_input, target


# -- dead code -----------------------------------------------------------------------------------------------------
_HELPERS = (
    "def {name}(value, default=None):\n    if value is None:\n        return default\n    return value",
    "def {name}(items):\n    return [item for item in items if item]",
    "def {name}(text):\n    return ' '.join(text.split())",
)
_CONSTANTS = ("None", "()", "0", "''", "frozenset()")


def _first_line(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)])


def _functions(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """The module's functions and its classes' methods, by qualified name."""
    out: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            out[node.name] = node
        elif isinstance(node, ast.ClassDef):
            out |= {f"{node.name}.{m.name}": m for m in node.body
                    if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef)}
    return out


def _body_start(node: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]) -> tuple[int, str] | None:
    """(line, indentation) of a function's first statement after its docstring, when that statement starts a line of
    its own (None for a one-line function, or one with nothing but a docstring)."""
    body = node.body
    docstring = isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
        and isinstance(body[0].value.value, str)
    if docstring and len(body) == 1:
        return None
    first = body[1] if docstring else body[0]
    after = (body[0].end_lineno or body[0].lineno) if docstring else node.lineno
    line = lines[first.lineno - 1]
    indent = line[:len(line) - len(line.lstrip())]
    if first.lineno <= after or len(indent.encode()) != first.col_offset:
        return None
    return first.lineno, indent


def _after_imports(tree: ast.Module) -> int:
    """The line after the module's leading docstring and imports (where a module constant goes)."""
    end = 0
    for index, node in enumerate(tree.body):
        docstring = index == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        if not (docstring or isinstance(node, ast.Import | ast.ImportFrom)):
            break
        end = node.end_lineno or node.lineno
    return end + 1


def add_dead_code(item_input: dict[str, Any], target: dict[str, Any],
                  rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    versions = _versions(item_input, target)
    functions = [{p: _functions(ast.parse(t)) for p, t in files.items()} for files in versions]
    taken = _taken(item_input, target)
    loc = target["location"]

    def clear(path: str, line: int) -> bool:
        """Whether code inserted before this line of the vulnerable file leaves the location's statements whole."""
        return path != loc["file"] or not loc["start"] < line <= loc["end"]

    # per version, per file: (line, line - 1, new lines) inserts before that line; each piece goes before a function of
    # the same name in every version
    edits: list[dict[str, list[tuple[int, int, list[str]]]]] = [{p: [] for p in files} for files in versions]
    paths = sorted(item_input["files"])
    anchors = [(p, name) for p in paths for name in functions[0][p] if "." not in name
               and all(name in f[p] for f in functions) and clear(p, _first_line(functions[0][p][name]))]
    if anchors:
        path, name = rng.choice(anchors)
        helper = rng.choice(_HELPERS).format(name=_fresh(taken, rng, _HELPER_STEMS, "_{stem}_{n}"))
        for version, f in enumerate(functions):
            at = _first_line(f[path][name])
            edits[version][path].append((at, at - 1, [*helper.split("\n"), "", ""]))
    starts = [(p, [_body_start(f[p][name], versions[v][p].split("\n")) for v, f in enumerate(functions)])
              for p in paths for name in functions[0][p] if all(name in f[p] for f in functions)]
    bodies = [(p, s) for p, s in starts if all(s) and clear(p, s[0][0])]  # type: ignore[index]
    if bodies:
        path, lines = rng.choice(bodies)
        local = _fresh(taken, rng, _LOCAL_STEMS, "{stem}_{n}")
        value = rng.choice(_CONSTANTS)
        for version, (line, indent) in enumerate(lines):  # type: ignore[misc]
            edits[version][path].append((line, line - 1, [f"{indent}if False:", f"{indent}    {local} = {value}"]))
    path = rng.choice(paths)
    constant = f"{_fresh(taken, rng, [s.upper() for s in _LOCAL_STEMS], '_{stem}_{n}')} = {rng.choice(_CONSTANTS)}"
    if clear(path, _after_imports(ast.parse(item_input["files"][path]))):
        for version, files in enumerate(versions):
            at = _after_imports(ast.parse(files[path]))
            edits[version][path].append((at, at - 1, ["", constant]))

    maps: dict[str, dict[int, int]] = {}
    for version, files in enumerate(versions):
        for p in files:
            files[p], where = edit_lines(files[p], edits[version][p])
            maps[p] = maps.get(p, where)  # the vulnerable version's
    return item_input, _moved(target, lambda path, line: maps[path][line])


# -- formatting ----------------------------------------------------------------------------------------------------
def relaid(text: str) -> str:
    """``text`` unparsed from its syntax tree, with two blank lines around top-level definitions and one after the
    imports."""
    lines = ast.unparse(ast.parse(text)).split("\n")
    tree = ast.parse("\n".join(lines))
    out: list[str] = []
    previous: ast.stmt | None = None
    for node in tree.body:
        if previous is not None:
            definitions = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
            if isinstance(node, definitions) or isinstance(previous, definitions):
                out += ["", ""]
            elif isinstance(previous, ast.Import | ast.ImportFrom) != isinstance(node, ast.Import | ast.ImportFrom) \
                    or isinstance(previous, ast.Expr):
                out.append("")
        out += lines[_first_line(node) - 1:node.end_lineno]
        previous = node
    return "\n".join(out) + "\n"


def tree_line_map(old: ast.AST, new: ast.AST) -> Callable[[int], int]:
    """Each line of the old source to the line of the same code in the new one (the trees have one shape): the new
    line of the outermost node that starts on it, else of the innermost node that spans it."""
    pairs = [(a, b) for a, b in zip(ast.walk(old), ast.walk(new), strict=True)
             if isinstance(a, ast.stmt | ast.expr) and isinstance(b, ast.stmt | ast.expr)]

    def mapped(line: int) -> int:
        starting = [b for a, b in pairs if a.lineno == line]
        if starting:
            return starting[0].lineno
        spanning = [(a.end_lineno - a.lineno, -i, b) for i, (a, b) in enumerate(pairs)  # type: ignore[operator]
                    if a.lineno <= line <= (a.end_lineno or a.lineno)]
        return min(spanning, key=lambda s: s[:2])[2].lineno if spanning else 1

    return mapped


def reformat(item_input: dict[str, Any], target: dict[str, Any],
             rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    maps: dict[str, Callable[[int], int]] = {}
    for files in _versions(item_input, target):
        for p, text in list(files.items()):
            files[p] = relaid(text)
            if files is item_input["files"]:
                maps[p] = tree_line_map(ast.parse(text), ast.parse(files[p]))
    return item_input, _moved(target, lambda path, line: maps[path](line))




# -- moving a function ----------------------------------------------------------------------------------------------
#: Names of a module made to take a moved function when no module of the program can.
_NEW_MODULES = ("helpers", "util", "common", "support", "shared", "tools")


def _module(path: str) -> str:
    return path.removesuffix(".py").replace("/", ".")


def _imported_modules(tree: ast.Module) -> set[str]:
    """The dotted names a module's imports name (``import a.b``: a.b; ``from a import b``: a and a.b)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            out |= {node.module or "", *(f"{node.module}.{a.name}" for a in node.names)}
    return out


def _depends(files: Files, source: str, on: str) -> bool:
    """Whether module ``source`` imports module ``on``, directly or through the program's other modules."""
    seen, todo = set(), [source]
    while todo:
        path = todo.pop()
        seen.add(path)
        named = _imported_modules(ast.parse(files[path]))
        for other in files:
            if other not in seen and (_module(other) in named or any(n.startswith(_module(other) + ".")
                                                                      for n in named)):
                if other == on:
                    return True
                todo.append(other)
    return False


def _import_lines(tree: ast.Module) -> dict[str, tuple[str, ast.stmt]]:
    """Each name the module binds by an absolute import at its top level: (that import alone, as a line; its
    statement)."""
    out: dict[str, tuple[str, ast.stmt]] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            out |= {a.asname or a.name.split(".")[0]: (ast.unparse(ast.Import(names=[a])), node) for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level:
            out |= {a.asname or a.name: (ast.unparse(ast.ImportFrom(module=node.module, names=[a], level=0)), node)
                    for a in node.names}
    return out


def _module_reads(node: ast.FunctionDef | ast.AsyncFunctionDef, table: symtable.SymbolTable) -> set[str] | None:
    """The module-level names a top-level function reads (in its body, and in its decorators, defaults and
    annotations, which run in the module); None when it writes one (``global``)."""
    def globals_of(t: symtable.SymbolTable) -> set[str] | None:
        found = set()
        for sym in t.get_symbols():
            if sym.is_declared_global():
                return None
            if sym.is_global():
                found.add(sym.get_name())
        for child in t.get_children():
            inner = globals_of(child)
            if inner is None:
                return None
            found |= inner
        return found

    body = globals_of(table)
    if body is None:
        return None
    args = node.args
    outside = [*node.decorator_list, *args.defaults, *(d for d in args.kw_defaults if d is not None),
               *(a.annotation for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
                 if a is not None and a.annotation is not None), *([node.returns] if node.returns else [])]
    return body | {n.id for part in outside for n in ast.walk(part) if isinstance(n, ast.Name)}


def _import_names(line: str) -> str:
    """The name an import line of :func:`_import_lines` binds."""
    return line.rsplit(" ", 1)[-1]


def _move(files: Files, source: str, name: str, dest: str,
          kept: set[str]) -> tuple[Files, int, dict[str, dict[int, int]]] | None:
    """``files`` with function ``name`` of module ``source`` moved to the end of module ``dest`` (made when it is not
    a file yet) with the imports it reads, imported back where the imports of ``source`` end, and the imports that
    only it read removed from ``source``: (files, the line where it starts in ``dest``, where each line of ``source``
    and ``dest`` that stays went). None when it cannot move: it reads a module-level name that is not an import (a
    test may set it on its module) or that the tests reach as an attribute (``kept``), or ``dest`` binds a name it
    brings."""
    tree = ast.parse(files[source])
    table = symtable.symtable(files[source], source, "exec")
    nodes = [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == name]
    tables = [t for t in table.get_children() if t.get_name() == name]
    if len(nodes) != 1 or len(tables) != 1:
        return None
    node = nodes[0]
    reads = _module_reads(node, tables[0])
    imports = _import_lines(tree)
    bound = {s.get_name() for s in table.get_symbols() if s.is_assigned() or s.is_imported()}
    if reads is None or reads & kept or any(r not in imports and (r in bound or not hasattr(builtins, r))
                                            for r in reads):
        return None
    needed = sorted({imports[r][0] for r in reads if r in imports})
    lines = files[source].split("\n")
    first, last = _first_line(node), node.end_lineno or node.lineno
    blank = last
    while blank < len(lines) and not lines[blank].strip() and blank - last < 2:  # the blank lines after it go too
        blank += 1
    edits: list[tuple[int, int, list[str]]] = [(first, blank, [])]
    rest = ast.parse(edit_lines(files[source], edits)[0])
    still = {n.id for n in ast.walk(rest) if isinstance(n, ast.Name)} \
        | {w for n in ast.walk(rest) if isinstance(n, ast.Constant) and isinstance(n.value, str)
           for w in _words(n.value)}
    for read in sorted(reads & set(imports) - still):
        statement = imports[read][1]
        if len(statement.names) == 1:  # type: ignore[attr-defined]
            edits.append((statement.lineno, statement.end_lineno or statement.lineno, []))
    at = _after_imports(tree)
    edits.append((at, at - 1, [f"from {_module(dest)} import {name}"]))
    new_source, source_lines = edit_lines(files[source], edits)
    dest_lines: dict[int, int] = {}
    text = "\n".join(needed)
    if dest in files:
        theirs = _import_lines(ast.parse(files[dest]))
        have = {s.get_name() for s in symtable.symtable(files[dest], dest, "exec").get_symbols()}
        if name in have or any(_import_names(line) in have and theirs.get(_import_names(line), ("",))[0] != line
                               for line in needed):
            return None
        at = _after_imports(ast.parse(files[dest]))
        text, dest_lines = edit_lines(files[dest], [(at, at - 1, [line for line in needed
                                                                  if _import_names(line) not in theirs])])
        text = text.rstrip("\n")
    before = f"{text}\n\n\n" if text else ""
    moved = "\n".join(lines[first - 1:last])
    return ({**files, source: new_source, dest: f"{before}{moved}\n"}, len(before.split("\n")),
            {source: source_lines, dest: dest_lines})


def _new_module(source: str, taken: set[str]) -> str:
    """A module beside ``source`` that the program does not have, for a function moved out of it."""
    folder, _, stem = source.removesuffix(".py").rpartition("/")
    paths = [f"{folder}/{word}.py" if folder else f"{stem}_{word}.py" for word in _NEW_MODULES]
    return next(p for p in paths if p.removesuffix(".py") not in taken)


def move_function(item_input: dict[str, Any], target: dict[str, Any],
                  rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The item with one function moved (see the module doc), or None where none can move."""
    versions = _versions(item_input, target)
    files, loc = item_input["files"], target["location"]
    # a function the probes name (a taint check's entry) stays where it is; so does one reading a name the tests set
    # on a module (``mod.NAME = ...``, ``setattr(mod, "NAME", ...)``, ``ref(mod, "NAME")``), which it would no longer
    # see; the tests still call a moved function where it was
    named = _value_words(target.get("probes") or [])
    tests = ast.parse(target.get("tests") or "")
    kept = named | {n.attr for n in ast.walk(tests) if isinstance(n, ast.Attribute)
                    and isinstance(n.ctx, ast.Store | ast.Del)} \
        | {str(n.args[1].value) for n in ast.walk(tests) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
           and n.func.id in ("setattr", "delattr", "ref") and len(n.args) > 1 and isinstance(n.args[1], ast.Constant)}
    taken = {p.removesuffix(".py") for p in files} | {p.split("/")[0].removesuffix(".py")
                                                       for p in [*files, *target.get("fixtures", {})]}
    options = []
    for source in sorted(files):
        dests = [d for d in sorted(files) if d != source and not _depends(files, d, source)]
        dests += [_new_module(source, taken)] if len(files) < 3 else []
        names = [n.name for n in ast.parse(files[source]).body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
        options += [(source, name, dest) for name in names if name not in named for dest in dests]
    rng.shuffle(options)
    for source, name, dest in sorted(options, key=lambda o: o[2] not in files):  # a module of the program first
        moved = [_move(version, source, name, dest, kept) for version in versions]
        if any(m is None for m in moved):
            continue
        new_versions = [m[0] for m in moved if m is not None]
        if any(_kinds(scan(old)) != _kinds(scan(new)) for old, new in zip(versions, new_versions, strict=True)):
            continue  # bandit would see it otherwise (an import it flags, now in two modules)
        node = next(n for n in ast.parse(files[source]).body
                    if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == name)
        first, last = _first_line(node), node.end_lineno or node.lineno
        if loc["file"] == source and loc["start"] <= last and first <= loc["end"]:
            if not first <= loc["start"] <= loc["end"] <= last:
                continue  # the location spans the function and what is around it
            start = moved[0][1]  # type: ignore[index]
            location = {"file": dest, "start": start + loc["start"] - first, "end": start + loc["end"] - first}
        else:
            where = moved[0][2][loc["file"]] if loc["file"] in (source, dest) else {}  # type: ignore[index]
            location = {**loc, "start": where.get(loc["start"], loc["start"]), "end": where.get(loc["end"], loc["end"])}
        item_input["files"] = new_versions[0]
        if target.get("fixed") is not None:
            target["fixed"] = new_versions[1]
        return item_input, {**target, "location": location}
    return None


REWRITES = (
    Rewrite("identifier_renaming", "parameters, local variables and private functions renamed by one map in the "
            "program and its fix (never a name the tests, probes, strings or analysers read)",
            apply_item=rename_identifiers),
    Rewrite("dead_code", "an unused private helper, an `if False:` block and an unused module constant added, the "
            "same in the fix", apply_item=add_dead_code),
    Rewrite("move_functions", "a function that reads no module-level name but imports moved to another module of "
            "the program (or a new one beside it) and imported back, the same in the fix", apply_item=move_function),
    Rewrite("formatting", "every module re-laid out from its syntax tree (ast.unparse: quotes, joined lines, blank "
            "lines, no comments): the same AST", apply_item=reformat),
)


# -- the check -----------------------------------------------------------------------------------------------------
#: Target fields a rewrite may change: the source it rewrites and the lines it moves.
_REWRITTEN = frozenset({"fixed", "location"})


def _located(files: Files, location: dict[str, Any]) -> list[str]:
    """The kinds of the statements that start on the location's lines (else of the one that spans its first)."""
    tree = ast.parse(files[location["file"]])
    statements = [n for n in ast.walk(tree) if isinstance(n, ast.stmt)]
    inside = [type(n).__name__ for n in statements if location["start"] <= n.lineno <= location["end"]]
    if inside:
        return inside
    spanning = [n for n in statements if n.lineno <= location["start"] <= (n.end_lineno or n.lineno)]
    return [type(min(spanning, key=lambda n: (n.end_lineno or n.lineno) - n.lineno)).__name__] if spanning else []


def _kinds(findings: list[StaticFinding]) -> Counter[tuple[str, str]]:
    return Counter((f.test_id, f.severity) for f in findings)


def _static_problem(before: list[list[StaticFinding]], after: list[list[StaticFinding]]) -> str | None:
    """Whether the analysers' findings (test, severity) differ on the vulnerable program or on its fix."""
    for version, old, new in zip(("program", "reference fix"), before, after, strict=False):
        if _kinds(old) != _kinds(new):
            lost, gained = _kinds(old) - _kinds(new), _kinds(new) - _kinds(old)
            return (f"the analysers' findings on the {version} change (lost {sorted(lost.elements())}, gained "
                    f"{sorted(gained.elements())})")
    return None


def _cheap_problem(original: Item, rewritten: Item, contract: CodeRepairContract) -> str | None:
    """What the check finds without running or scanning anything."""
    problem = contract.problem(rewritten)
    if problem is not None:
        return f"breaks the item contract: {problem}"
    changed = sorted(k for k in {*original.target, *rewritten.target} - _REWRITTEN
                     if original.target.get(k) != rewritten.target.get(k))
    if changed:
        return f"changes the target's {', '.join(changed)}"
    before = _located(original.input["files"], original.target["location"])
    after = _located(rewritten.input["files"], rewritten.target["location"])
    if before != after:
        return f"the statements at the location change ({before} -> {after})"
    if is_program(rewritten.target):
        probes = harness_probes(files_diff(rewritten.input["files"], rewritten.target["fixed"]))
        if probes:
            return f"the reference patch reaches for the harness: {probes[:2]}"
    return None


@cache
def _code_digest() -> str:
    """What a remembered check depends on: this environment's code, judge and rules, the sandbox, the analysers."""
    root = Path(__file__).parents[2]
    files = [p for folder in (root / "envs" / "code_repair", root / "engines" / "sandbox") for p in folder.rglob("*")
             if p.is_file() and p.suffix in (".py", ".yaml") and "__pycache__" not in p.parts]
    versions = json.dumps(library_versions(("bandit", "semgrep")), sort_keys=True)
    return hashlib.sha256(f"{files_digest(root, files)}{versions}".encode()).hexdigest()


def _cache_file(original: Item, rewritten: Item) -> Path:
    """Where a check of this pair that passed is remembered: keyed by both items and :func:`_code_digest`."""
    content = json.dumps([_code_digest(), [(i.input, i.target) for i in (original, rewritten)]], sort_keys=True)
    return cache_dir() / "code-repair-rewrites" / f"{hashlib.sha256(content.encode()).hexdigest()}.ok"


def _remember(path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
    except OSError:  # a cache that cannot be written only costs the next build its time
        pass


def rewrite_problems(pairs: Sequence[tuple[Item, Item]], contract: CodeRepairContract) -> list[str | None]:
    """Why each rewritten item may not keep its original's label (None: it does); see the module doc."""
    out: list[str | None] = [None] * len(pairs)
    to_check = []
    for index, (original, rewritten) in enumerate(pairs):
        if _cache_file(original, rewritten).exists():
            continue
        out[index] = _cheap_problem(original, rewritten, contract)
        if out[index] is None:
            to_check.append(index)
    if not to_check:
        return out
    versions = [files for i in to_check for item in pairs[i] for files in _versions(item.input, item.target)]
    semgrep = iter(semgrep_scan_many(versions))
    # checked as the generator checked it, before its trivial probes were known (a probe already counted trivial is
    # not looked for again)
    programs = {i: program_of(pairs[i][1].input, pairs[i][1].target).model_copy(update={"trivial": []})
                for i in to_check if is_program(pairs[i][1].target)}
    results = dict(zip(programs, self_check(list(programs.values())), strict=True))
    for index in to_check:
        original, rewritten = pairs[index]
        found = [[scan(files) + next(semgrep) for files in _versions(item.input, item.target)]
                 for item in (original, rewritten)]
        problem = _static_problem(*found)
        result = results.get(index)
        if problem is None and result is not None:
            recorded = sorted(test for test in original.target["static_ids"] if not test.startswith("B"))
            if not result.ok:
                problem = f"fails the self-check: {'; '.join(result.problems)}"
            elif sorted(result.semgrep_rules) != recorded:
                problem = f"the semgrep rules that signal the weakness change ({recorded} -> {result.semgrep_rules})"
            elif sorted(result.trivial) != sorted(original.target["trivial"]):
                problem = (f"the functional probes a degenerate version passes change ({original.target['trivial']} "
                           f"-> {sorted(result.trivial)})")
        out[index] = problem
        if problem is None:
            _remember(_cache_file(original, rewritten))
    return out
