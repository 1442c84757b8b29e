"""``baseline:fixer``: a rule-based repairer for the weaknesses a static reading pinpoints (the non-LLM anchor).

Each rule finds one code pattern in the syntax tree and rewrites that expression with the textbook remediation:

- a ``subprocess`` call with ``shell=True`` and a command built by an f-string or ``+``: an argument list split as
  the shell would split the literal parts, without a shell (CWE-78);
- ``execute``/``executemany`` with an f-string or ``%``-formatted SQL: ``?`` placeholders and a parameter tuple
  (values only; an identifier position such as ORDER BY is left alone: no generic fix exists) (CWE-89);
- ``pickle``/``marshal`` ``loads``: ``json.loads`` (CWE-502);
- ``eval`` of a string: ``ast.literal_eval`` (CWE-94);
- f-strings that build HTML: every interpolated value through ``html.escape`` (CWE-79);
- ``tarfile``'s ``extractall``/``extract`` without a filter: ``filter="data"`` (CWE-22);
- ``setFeature(feature_external_ges, True)``: ``False`` (CWE-611);
- the ``random`` module's functions: a ``random.SystemRandom()`` instance (CWE-330);
- ``==``/``!=`` between secret-looking names (token, signature, digest, mac, key, password): ``hmac.compare_digest``
  (CWE-208).

It reads only the task's files. Where no rule applies it answers like ``noop`` (bandit's gravest finding, no
patch); where a rewrite breaks the program or misses the weakness, the sandbox says so: that is its score.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
from dataclasses import dataclass

from security_verifiers.core.types import Item, Message
from security_verifiers.envs.code_repair.static import answer, detection
from security_verifiers.envs.kits.patching import files_diff
from security_verifiers.models.base import Baseline

_SECRETISH = re.compile(r"token|signature|sig\b|digest|hmac|\bmac\b|secret|api_?key|password|passwd|csrf",
                        re.IGNORECASE)
_SQL = re.compile(r"^\s*(SELECT|INSERT|UPDATE|DELETE|REPLACE|WITH)\b", re.IGNORECASE)
_RANDOM_FUNCS = {"random", "randint", "randrange", "choice", "choices", "sample", "shuffle", "getrandbits",
                 "uniform"}


@dataclass(frozen=True)
class Edit:
    """Replace the source span of one node (1-based lines, 0-based columns, as ``ast`` gives them)."""

    line: int
    col: int
    end_line: int
    end_col: int
    text: str
    cwe: str
    needs: tuple[str, ...] = ()  # modules to import


def _span(node: ast.AST, text: str, cwe: str, needs: tuple[str, ...] = ()) -> Edit:
    return Edit(node.lineno, node.col_offset, node.end_lineno or node.lineno, node.end_col_offset or 0,  # type: ignore[attr-defined]
                text, cwe, needs)


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _template(node: ast.AST) -> tuple[str, list[ast.expr]] | None:
    """A command or query built by an f-string or ``+`` as a template with ``\\x00N\\x00`` placeholders."""
    exprs: list[ast.expr] = []

    def walk(part: ast.AST) -> str | None:
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            return part.value
        if isinstance(part, ast.JoinedStr):
            out = ""
            for piece in part.values:
                if isinstance(piece, ast.Constant):
                    out += str(piece.value)
                elif isinstance(piece, ast.FormattedValue) and piece.format_spec is None:
                    exprs.append(piece.value)
                    out += f"\x00{len(exprs) - 1}\x00"
                else:
                    return None
            return out
        if isinstance(part, ast.BinOp) and isinstance(part.op, ast.Add):
            left, right = walk(part.left), walk(part.right)
            return None if left is None or right is None else left + right
        if isinstance(part, ast.expr) and not isinstance(part, ast.Constant):
            exprs.append(part)
            return f"\x00{len(exprs) - 1}\x00"
        return None

    text = walk(node)
    return None if text is None or not exprs else (text, exprs)


def _token_source(token: str, exprs: list[ast.expr]) -> str:
    parts = re.split(r"\x00(\d+)\x00", token)
    if len(parts) == 3 and parts[0] == parts[2] == "":
        return f"str({ast.unparse(exprs[int(parts[1])])})"
    pieces = []
    for k, part in enumerate(parts):
        if k % 2:
            pieces.append("{" + ast.unparse(exprs[int(part)]) + "}")
        else:
            pieces.append(part.replace("{", "{{").replace("}", "}}"))
    return "f" + json.dumps("".join(pieces))


def _shell_call(node: ast.Call) -> Edit | None:
    name = _dotted(node.func)
    if not name.startswith("subprocess.") or not node.args:
        return None
    shell = [k for k in node.keywords if k.arg == "shell" and isinstance(k.value, ast.Constant) and k.value.value]
    if not shell:
        return None
    built = _template(node.args[0])
    if built is None:
        return None
    text, exprs = built
    if any(ch in text for ch in "|&;<>`$()"):
        return None  # shell syntax of its own: no argument list means the same
    try:
        tokens = shlex.split(text)
    except ValueError:
        return None
    argv = "[" + ", ".join(_token_source(t, exprs) for t in tokens) + "]"
    keywords = [k for k in node.keywords if k is not shell[0]]
    rest = [ast.unparse(a) for a in node.args[1:]] + [
        (f"{k.arg}={ast.unparse(k.value)}" if k.arg else f"**{ast.unparse(k.value)}") for k in keywords]
    return _span(node, f"{name}({', '.join([argv, *rest])})", "CWE-78")


def _sql_parts(query: ast.AST) -> tuple[str, list[str]] | None:
    """A query built by an f-string, ``+`` or ``%`` as SQL with ``?`` placeholders and the parameters' source; a
    quoted literal around a value (``'%{term}%'``) becomes one parameter. None when it is not such a query, or
    when a value stands where SQL allows no parameter (ORDER BY, a table name)."""
    params: list[str] = []
    if isinstance(query, ast.BinOp) and isinstance(query.op, ast.Mod) and isinstance(query.left, ast.Constant) \
            and isinstance(query.left.value, str):
        values = query.right.elts if isinstance(query.right, ast.Tuple) else [query.right]
        pieces = re.split(r"'?%[sd]'?", query.left.value)
        if len(pieces) != len(values) + 1:
            return None
        sql = "?".join(pieces)
        params = [ast.unparse(v) for v in values]
    else:
        built = _template(query)
        if built is None:
            return None
        text, exprs = built

        def placeholder(match: re.Match[str]) -> str:
            if match.group(2) is None:  # a bare value
                params.append(ast.unparse(exprs[int(match.group(4))]))
                return "?"
            before, inner, after = match.group(1), ast.unparse(exprs[int(match.group(2))]), match.group(3)
            if before or after:  # a value inside a quoted literal: the literal is the parameter
                params.append("f" + json.dumps(before.replace("{", "{{").replace("}", "}}") + "{" + inner + "}"
                                               + after.replace("{", "{{").replace("}", "}}")))
            else:
                params.append(inner)
            return "?"

        sql = re.sub(r"'([^'\x00]*)\x00(\d+)\x00([^'\x00]*)'|\x00(\d+)\x00", placeholder, text)
    if not _SQL.match(sql) or re.search(r"ORDER\s+BY\s+\?|\bFROM\s+\?|\bJOIN\s+\?|\bINTO\s+\?|\bUPDATE\s+\?",
                                        sql, re.IGNORECASE):
        return None
    return sql, params


def _params_source(params: list[str]) -> str:
    return "(" + ", ".join(params) + ("," if len(params) == 1 else "") + ")"


def _sql_call(node: ast.Call) -> Edit | None:
    if not isinstance(node.func, ast.Attribute) or node.func.attr not in ("execute", "executemany") \
            or len(node.args) != 1:
        return None
    parts = _sql_parts(node.args[0])
    if parts is None:
        return None
    sql, params = parts
    return _span(node, f"{ast.unparse(node.func)}({json.dumps(sql)}, {_params_source(params)})", "CWE-89")


def _sql_through_a_name(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[Edit]:
    """``query = f"SELECT ... {x}"`` then ``cursor.execute(query)`` in one function: both rewritten."""
    built: dict[str, tuple[ast.Assign, str, list[str]]] = {}
    out: list[Edit] = []
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            parts = _sql_parts(node.value)
            if parts is not None:
                built[node.targets[0].id] = (node, *parts)
    for node in ast.walk(function):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("execute", "executemany") and len(node.args) == 1 \
                and isinstance(node.args[0], ast.Name) and node.args[0].id in built:
            assign, sql, params = built.pop(node.args[0].id)
            out.append(_span(assign.value, json.dumps(sql), "CWE-89"))
            out.append(_span(node, f"{ast.unparse(node.func)}({node.args[0].id}, {_params_source(params)})",
                             "CWE-89"))
    return out


def _path_guards(function: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]) -> list[Edit]:
    """``path = os.path.join(BASE, name)`` or ``path = BASE / name`` with a parameter of the function in it: a check
    right after it that the resolved path stays under the resolved base (CWE-22)."""
    params = {a.arg for a in (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs)}
    out = []
    for node in ast.walk(function):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        value = node.value
        if isinstance(value, ast.Call) and _dotted(value.func) in ("os.path.join", "posixpath.join") \
                and len(value.args) >= 2:
            base, rest = value.args[0], value.args[1:]
        elif isinstance(value, ast.BinOp) and isinstance(value.op, ast.Div):
            base, rest = value.left, [value.right]
        else:
            continue
        if not any(isinstance(n, ast.Name) and n.id in params for r in rest for n in ast.walk(r)):
            continue
        name = node.targets[0].id
        pad = " " * node.col_offset
        guard = (f"{ast.unparse(node)}\n{pad}if not os.path.realpath(str({name})).startswith("
                 f"os.path.realpath(str({ast.unparse(base)})) + os.sep):\n"
                 f"{pad}    raise ValueError(\"path outside the allowed directory\")")
        out.append(_span(node, guard, "CWE-22", ("os",)))
    return out


def _simple_swaps(node: ast.Call) -> Edit | None:
    name = _dotted(node.func)
    if name in ("pickle.loads", "marshal.loads", "cPickle.loads") and len(node.args) == 1:
        return _span(node, f"json.loads({ast.unparse(node.args[0])})", "CWE-502", ("json",))
    if name in ("pickle.dumps", "marshal.dumps", "cPickle.dumps") and node.args:
        return _span(node, f"json.dumps({ast.unparse(node.args[0])}).encode()", "CWE-502", ("json",))
    if name == "eval" and node.args:
        return _span(node, f"ast.literal_eval({ast.unparse(node.args[0])})", "CWE-94", ("ast",))
    if isinstance(node.func, ast.Attribute) and node.func.attr in ("extractall", "extract") \
            and not any(k.arg == "filter" for k in node.keywords) and "tar" in ast.unparse(node.func.value).lower():
        call = ast.unparse(node)
        return _span(node, call[:-1] + (", " if node.args or node.keywords else "") + 'filter="data")', "CWE-22")
    if isinstance(node.func, ast.Attribute) and node.func.attr == "setFeature" and len(node.args) == 2 \
            and "external" in ast.unparse(node.args[0]) and isinstance(node.args[1], ast.Constant) \
            and node.args[1].value is True:
        return _span(node, f"{ast.unparse(node.func)}({ast.unparse(node.args[0])}, False)", "CWE-611")
    if name.startswith("random.") and name.split(".", 1)[1] in _RANDOM_FUNCS:
        return _span(node, "random.SystemRandom()." + ast.unparse(node)[len("random."):], "CWE-330")
    return None


def _html_fstring(node: ast.JoinedStr) -> Edit | None:
    literal = "".join(str(p.value) for p in node.values if isinstance(p, ast.Constant))
    if not re.search(r"<[a-zA-Z/!]", literal):
        return None
    pieces = []
    changed = False
    for piece in node.values:
        if isinstance(piece, ast.Constant):
            pieces.append(str(piece.value).replace("{", "{{").replace("}", "}}"))
        elif isinstance(piece, ast.FormattedValue):
            inner = ast.unparse(piece.value)
            if not inner.startswith(("html.escape", "escape(")):
                inner = f"html.escape(str({inner}))"
                changed = True
            pieces.append("{" + inner + "}")
    if not changed:
        return None
    return _span(node, "f" + json.dumps("".join(pieces)), "CWE-79", ("html",))


def _secret_compare(node: ast.Compare) -> Edit | None:
    if len(node.ops) != 1 or not isinstance(node.ops[0], ast.Eq | ast.NotEq):
        return None
    left, right = node.left, node.comparators[0]
    if isinstance(left, ast.Constant) or isinstance(right, ast.Constant):
        return None
    if not (_SECRETISH.search(ast.unparse(left)) or _SECRETISH.search(ast.unparse(right))):
        return None
    call = f"hmac.compare_digest({ast.unparse(left)}, {ast.unparse(right)})"
    return _span(node, call if isinstance(node.ops[0], ast.Eq) else f"not {call}", "CWE-208", ("hmac",))




def edits(text: str) -> list[Edit]:
    """The rewrites the rules find in one module, outermost first, none overlapping."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    found: list[Edit] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found += _sql_through_a_name(node) + _path_guards(node, text.splitlines())
        edit = None
        if isinstance(node, ast.Call):
            edit = _shell_call(node) or _sql_call(node) or _simple_swaps(node)
        elif isinstance(node, ast.JoinedStr):
            edit = _html_fstring(node)
        elif isinstance(node, ast.Compare):
            edit = _secret_compare(node)
        if edit is not None:
            found.append(edit)
    kept: list[Edit] = []
    for edit in sorted(found, key=lambda e: (e.line, e.col, -(e.end_line - e.line), -e.end_col)):
        if kept and (edit.line, edit.col) < (kept[-1].end_line, kept[-1].end_col):
            continue  # inside an edit already kept
        kept.append(edit)
    return kept


def _apply(text: str, found: list[Edit]) -> str:
    lines = text.splitlines(keepends=True)
    for edit in sorted(found, key=lambda e: (e.line, e.col), reverse=True):
        head = lines[edit.line - 1][:edit.col]
        tail = lines[edit.end_line - 1][edit.end_col:]
        lines[edit.line - 1:edit.end_line] = [head + edit.text + tail]
    out = "".join(lines)
    needed = sorted({m for e in found for m in e.needs if not re.search(rf"^import {m}\b", out, re.MULTILINE)})
    if needed:
        out = _insert_imports(out, needed)
    return out


def _insert_imports(text: str, modules: list[str]) -> str:
    """``import m`` lines after the module's docstring and ``__future__`` imports."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return "".join(f"import {m}\n" for m in modules) + text
    at = 0
    for node in tree.body:
        is_doc = isinstance(node, ast.Expr) and isinstance(getattr(node, "value", None), ast.Constant)
        if (is_doc and at == 0) or (isinstance(node, ast.ImportFrom) and node.module == "__future__"):
            at = node.end_lineno or node.lineno
        else:
            break
    lines = text.splitlines(keepends=True)
    lines[at:at] = [f"import {m}\n" for m in modules]
    return "".join(lines)


def fix(files: dict[str, str]) -> dict[str, str]:
    """The files the rules change, rewritten (a file no rule applies to is left out)."""
    out = {}
    for path, text in files.items():
        found = edits(text)
        if found:
            patched = _apply(text, found)
            try:
                ast.parse(patched)
            except SyntaxError:
                continue
            out[path] = patched
    return out


class FixerBaseline(Baseline):
    name = "fixer"

    def answer(self, item: Item, messages: list[Message]) -> str:
        files: dict[str, str] = item.input["files"]
        for path, text in files.items():
            found = edits(text)
            if found:
                patched = fix(files)
                first = found[0]
                return answer(first.cwe, path, first.line, files_diff(files, patched) if patched else "")
        return answer(*detection(files))
