"""Terraform expressions evaluated the way Terraform would, as far as the module's own files determine them.

Why: the policy engines read attribute values. Written as expressions (``!false``, ``"${"x"}"``, a conditional
on a constant, ``var.x`` with a default) a value means to Terraform exactly what its literal means, but an
engine that compares the raw parse with ``true`` does not see it. A patch could then "fix" a finding by
re-spelling the insecure value. Every engine therefore reads the *evaluated* document: what Terraform would
compute from the files, with anything it cannot know left as it was written.

What is evaluated: literals, string templates (escapes, interpolation), heredocs, operators with HCL's
precedence (the parser we share with Checkov builds right-nested chains without precedence; they are
re-associated here), conditionals, ``for`` expressions, splats, the pure built-in functions of
:mod:`terraform_functions`, ``var.*`` through their defaults and ``local.*``, and references to literal
attributes of resources declared in the module. What stays unknown (an :class:`Unknown`): variables without
a default, computed attributes (``aws_kms_key.k.arn``), data sources, module outputs, ``count``/``each``/
``self``, functions that read the host or the clock, template directives.

What is an error (:class:`Problem`, which makes the file invalid): a reference to a variable, local,
resource, data source or module the module does not declare, and whatever Terraform itself rejects when
evaluating a known value (``tobool("TRUE")``, ``1 + "a"``, ``null`` in a template).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from lark import Token, Tree
from lark.visitors import v_args

from security_verifiers.engines.canonical import terraform_document
from security_verifiers.engines.canonical_unions import terraform_unions
from security_verifiers.engines.terraform_functions import (
    FUNCTIONS,
    TerraformError,
    describe,
    normalise_number,
    to_bool,
    to_number,
    to_string,
)

#: Roots of references that are valid only in some contexts and never known from the files.
CONTEXTUAL_ROOTS = ("count", "each", "self", "path", "terraform")
#: Blocks whose attributes the engines read and the evaluated document rewrites.
_LABELLED = {"resource": 2, "data": 2, "module": 1, "provider": 1, "variable": 1, "output": 1}
_PRECEDENCE = {"||": 1, "&&": 2, "==": 3, "!=": 3, "<": 4, ">": 4, "<=": 4, ">=": 4, "+": 5, "-": 5,
               "*": 6, "/": 6, "%": 6}
#: Evaluation depth (nested calls, locals referring to locals): deeper expressions are left unknown.
MAX_DEPTH = 64
#: Evaluation steps for one file, and the size (elements, characters / 64) of one attribute's value: beyond them
#: values are left unknown. Real files need a tiny fraction; ``for`` expressions over ``range()`` or locals that
#: repeat other locals could otherwise make one file cost minutes and gigabytes in every engine.
MAX_STEPS = 200_000
MAX_VALUE_SIZE = 100_000
#: What the engines read in place of an expression refused for its size or cost (an unknown to every rule).
TOO_LARGE = "(not evaluated: too large)"
_REFUSED = ("a value expands past", "the value expands past", "the file needs more than")



@dataclass(frozen=True)
class Unknown:
    """A value the files alone do not determine. ``reference``: a computed attribute of something the module
    declares (an ARN, an id): a real value, known only when Terraform applies the plan."""

    why: str
    reference: bool = False


@dataclass(frozen=True)
class Problem:
    """Why Terraform would reject the file: ``key`` identifies the problem independently of line numbers, so
    a patched file can be compared with its original."""

    key: tuple[str, ...]
    message: str


@dataclass(frozen=True)
class Attribute:
    """One attribute of a block of the file under evaluation: where it is, what it says, what it evaluates to."""

    address: str  # the block's address (aws_s3_bucket.logs, provider.aws, ...)
    path: str  # dotted path inside the block: "acl", "metadata_options.0.http_tokens"
    source: str  # the expression as written
    start: int  # character offsets of the expression in the file
    end: int
    value: Any  # a Python value, an Unknown, or a container holding some
    line_start: int = 0  # offset of the attribute's name: text[line_start:end] is "name = expression"
    #: The expression reads another resource, data source or module (``aws_s3_bucket.b.id``): engines that link
    #: resources (Checkov's graph) read such an expression as written, so it is never replaced by its value.
    references: bool = False
    #: Inside a ``dynamic`` block (expanded: once per element, with the path of the block it generates; else as
    #: written, the iterator unknown). Fail-closed credit judges such a value for the whole resource.
    dynamic: bool = False


class _Error(Exception):
    """An evaluation error carried up to the attribute being evaluated."""


def is_known(value: Any) -> bool:
    """Whether ``value`` holds no :class:`Unknown` anywhere."""
    if isinstance(value, Unknown):
        return False
    if isinstance(value, list):
        return all(is_known(v) for v in value)
    if isinstance(value, dict):
        return all(is_known(v) for v in value.values())
    return True


def first_unknown(value: Any) -> Unknown | None:
    if isinstance(value, Unknown):
        return value
    items = value if isinstance(value, list) else value.values() if isinstance(value, dict) else ()
    for item in items:
        found = first_unknown(item)
        if found is not None:
            return found
    return None


# ------------------------------------------------------------------------------------------------ parsing
def _text(node: Any) -> str:
    if isinstance(node, Token):
        return str(node)
    if isinstance(node, Tree) and node.data == "identifier":
        return str(node.children[0])
    raise _Error(f"unexpected syntax node {getattr(node, 'data', node)!r}")


@lru_cache(maxsize=4096)
def parse_expression(source: str) -> Any:
    """The syntax tree of one expression (an interpolation's content), parsed by the grammar the engines share."""
    from hcl2.parser import Hcl2

    try:
        tree = Hcl2.lark_parser.parse(f"v = {source}\n")
    except Exception as err:  # noqa: BLE001 - lark raises many error types
        raise TerraformError(f"invalid expression in template: {source[:60]!r}") from err
    return tree.children[0].children[0].children[1]


def _match_brace(text: str, start: int) -> int:
    """Index of the ``}`` that closes the interpolation whose content starts at ``start``."""
    depth, i = 1, start
    while i < len(text):
        char = text[i]
        if char == '"':
            i += 1
            while i < len(text) and text[i] != '"':
                if text[i] == "\\":
                    i += 1
                elif text.startswith("${", i):
                    i = _match_brace(text, i + 2)
                i += 1
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise TerraformError("unterminated template interpolation")


_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", '"': '"', "\\": "\\"}


def template_parts(raw: str, quoted: bool) -> list[str | Tree | Token]:
    """A template's literal text (escapes decoded when ``quoted``) and its interpolated expressions, in order.

    >>> template_parts('AKIA${""}XY\\\\u0041', quoted=True)[0], template_parts('a$${b}', quoted=True)
    ('AKIA', ['a${b}'])
    """
    parts: list[str | Tree | Token] = []
    buffer: list[str] = []
    i = 0
    while i < len(raw):
        char = raw[i]
        if quoted and char == "\\":
            code = raw[i + 1: i + 2]
            if code in _ESCAPES:
                buffer.append(_ESCAPES[code])
                i += 2
                continue
            size = {"u": 4, "U": 8}.get(code)
            digits = raw[i + 2: i + 2 + size] if size else ""
            if size and len(digits) == size and all(c in "0123456789abcdefABCDEF" for c in digits):
                try:
                    buffer.append(chr(int(digits, 16)))
                except (ValueError, OverflowError) as err:
                    raise TerraformError(f"invalid escape \\{code}{digits}") from err
                i += 2 + size
                continue
            raise TerraformError(f"invalid escape sequence \\{code} in a string")
        if raw.startswith("$${", i) or raw.startswith("%%{", i):
            buffer.append(raw[i + 1: i + 3])
            i += 3
            continue
        if raw.startswith("%{", i):
            raise _Unsupported("template directives (%{...}) are not evaluated")
        if raw.startswith("${", i):
            end = _match_brace(raw, i + 2)
            content = raw[i + 2: end].strip()
            content = content.removeprefix("~").removesuffix("~").strip()
            if buffer:
                parts.append("".join(buffer))
                buffer = []
            parts.append(parse_expression(content))
            i = end + 1
            continue
        buffer.append(char)
        i += 1
    if buffer or not parts:
        parts.append("".join(buffer))
    return parts


class _Unsupported(Exception):
    """A construct the evaluator does not evaluate: its value is unknown, never guessed."""


def _heredoc_body(token: str) -> str:
    """The content of ``<<EOT`` / ``<<-EOT`` heredocs (``<<-`` strips the common leading indentation)."""
    header, _, rest = token.partition("\n")
    marker = header.lstrip("<-")
    body = rest.rstrip()
    if body.endswith(marker):
        body = body[: -len(marker)]
    lines = body.split("\n")
    if lines and not lines[-1].strip():
        lines = lines[:-1]
    if header.startswith("<<-"):
        indents = [len(line) - len(line.lstrip(" \t")) for line in lines if line.strip()]
        cut = min(indents, default=0)
        lines = [line[cut:] for line in lines]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------------ the module
@dataclass
class _Resource:
    address: str
    body: Tree | None
    counted: bool  # has count or for_each: its attributes are per instance


@dataclass
class Module:
    """The declarations of a Terraform module (the file under evaluation and the other files of its module)."""

    variables: dict[str, Tree | Token | None] = field(default_factory=dict)  # name -> default expression
    variable_types: dict[str, str] = field(default_factory=dict)
    locals: dict[str, Tree | Token] = field(default_factory=dict)
    resources: dict[str, _Resource] = field(default_factory=dict)  # "type.name" / "data.type.name"
    modules: set[str] = field(default_factory=set)
    #: ids of the function calls that expand their last argument (``f(xs...)``): the parser drops the ``...``.
    expanding_calls: set[int] = field(default_factory=set)

    def declare(self, tree: Tree, text: str) -> None:
        _mark_expansions(tree, text, self.expanding_calls)
        for block in _blocks(tree):
            kind, labels, body = block
            if kind == "variable" and labels:
                self.variables[labels[0]] = _attribute(body, "default")
                type_expr = _attribute(body, "type")
                if type_expr is not None:
                    self.variable_types[labels[0]] = _source_text(type_expr)
            elif kind == "locals":
                for name, expr in _attributes(body):
                    self.locals[name] = expr
            elif kind in ("resource", "data") and len(labels) == 2:
                prefix = "data." if kind == "data" else ""
                counted = _attribute(body, "count") is not None or _attribute(body, "for_each") is not None
                self.resources[f"{prefix}{labels[0]}.{labels[1]}"] = _Resource(f"{prefix}{labels[0]}.{labels[1]}",
                                                                              body, counted)
            elif kind == "module" and labels:
                self.modules.add(labels[0])


def _blocks(tree: Tree) -> Iterator[tuple[str, list[str], Tree]]:
    """(kind, labels, body) of the top-level blocks of a parsed file."""
    body = tree.children[0] if tree.data == "start" else tree
    for child in body.children:
        if isinstance(child, Tree) and child.data == "block":
            yield _block_parts(child)


def _block_parts(block: Tree) -> tuple[str, list[str], Tree]:
    kind = _text(block.children[0])
    labels = [_label(c) for c in block.children[1:-1]]
    return kind, labels, block.children[-1]


def _label(node: Any) -> str:
    text = _text(node)
    return text[1:-1] if text.startswith('"') and text.endswith('"') else text


def _attributes(body: Tree) -> Iterator[tuple[str, Any]]:
    for child in body.children:
        if isinstance(child, Tree) and child.data == "attribute":
            yield _label(child.children[0]), child.children[1]


def _attribute(body: Tree, name: str) -> Any:
    for key, expr in _attributes(body):
        if key == name:
            return expr
    return None


def _source_text(node: Any) -> str:
    return _reconstruct(node)


def _mark_expansions(tree: Tree, text: str, into: set[int]) -> None:
    """Record the calls that end with ``...)``: the innermost call whose span holds the ellipsis."""
    positions = [m.start() for m in re.finditer(r"\.\.\.\s*\)", text)]
    if not positions:
        return
    calls = [(node.meta.start_pos, node.meta.end_pos, id(node)) for node in tree.iter_subtrees()
             if node.data == "function_call" and not node.meta.empty]
    for pos in positions:
        holding = [c for c in calls if c[0] <= pos < c[1]]
        if holding:
            into.add(min(holding, key=lambda c: c[1] - c[0])[2])


def _reconstruct(node: Any) -> str:
    if isinstance(node, Token):
        return str(node)
    return " ".join(_reconstruct(c) for c in node.children)


# ------------------------------------------------------------------------------------------------ evaluation
class Evaluator:
    """Evaluates expressions of one module; records the problems Terraform would report."""

    def __init__(self, module: Module) -> None:
        self.module = module
        self.problems: list[Problem] = []
        self._where: tuple[str, ...] = ()
        self._locals_done: dict[str, Any] = {}
        self._locals_busy: set[str] = set()
        self._depth = 0
        self._steps = 0
        self.referenced = False  # the last attribute evaluated read a resource, data source or module
        #: Elements the evaluated values of the whole file may still hold: a file spells out far fewer.
        self.document_budget = MAX_VALUE_SIZE

    # -- entry points ------------------------------------------------------------------------------
    def attribute(self, where: tuple[str, ...], expr: Any, scope: dict[str, Any] | None = None) -> Any:
        """The value of one attribute's expression; a Terraform error is recorded and the value is unknown."""
        self._where = where
        self.referenced = False
        try:
            return self.eval(expr, scope or {})
        except TerraformError as err:
            self.problems.append(Problem(("invalid-value", *where, str(err)), f"{'.'.join(where)}: {err}"))
            return Unknown(f"invalid: {err}")
        except (_Unsupported, RecursionError) as err:
            return Unknown(str(err) or "too deeply nested")

    # -- expressions -------------------------------------------------------------------------------
    def eval(self, node: Any, scope: dict[str, Any]) -> Any:
        self._depth += 1
        self._steps += 1
        try:
            if self._depth > MAX_DEPTH:
                raise _Unsupported("expression nested too deeply")
            if self._steps > MAX_STEPS:
                raise _Unsupported(f"the file needs more than {MAX_STEPS:,} evaluation steps")
            return self._eval(node, scope)
        finally:
            self._depth -= 1

    def _eval(self, node: Any, scope: dict[str, Any]) -> Any:
        if isinstance(node, Token):
            return self._token(node, scope)
        kind = node.data
        if kind in ("binary_op", "conditional"):
            return self._eval_chain(_associate(_flatten_chain(node)), scope)
        if kind == "expr_term":
            return self._expr_term(node, scope)
        if kind == "unary_op":
            op, operand = str(node.children[0]), self.eval(node.children[1], scope)
            if isinstance(operand, Unknown):
                return operand
            return (not to_bool(operand)) if op == "!" else normalise_number(-to_number(operand))
        if kind == "int_lit":
            return int("".join(str(c) for c in node.children))
        if kind == "float_lit":
            return normalise_number(float("".join(str(c) for c in node.children)))
        if kind in ("heredoc_template", "heredoc_template_trim"):
            return self._template(template_parts(_heredoc_body(str(node.children[0])), quoted=False), scope)
        if kind == "tuple":
            return _bounded([self.eval(c, scope) for c in node.children])
        if kind == "object":
            return _bounded(self._object(node, scope))
        if kind == "function_call":
            return self._call(node, scope)
        if kind in ("get_attr_expr_term", "index_expr_term", "attr_splat_expr_term", "full_splat_expr_term",
                    "identifier"):
            return self._traversal(node, scope)
        if kind == "for_tuple_expr":
            return self._for(node, scope, tuple_result=True)
        if kind == "for_object_expr":
            return self._for(node, scope, tuple_result=False)
        if kind == "provider_function_call":
            return Unknown("provider-defined functions are not evaluated")
        raise _Unsupported(f"{kind} is not evaluated")

    def _token(self, token: Token, scope: dict[str, Any]) -> Any:
        if token.type == "STRING_LIT":
            return self._template(template_parts(str(token)[1:-1], quoted=True), scope)
        raise _Unsupported(f"token {token.type}")

    def _expr_term(self, node: Tree, scope: dict[str, Any]) -> Any:
        children = node.children
        if len(children) == 1 and isinstance(children[0], Tree) and children[0].data == "identifier":
            name = _text(children[0])
            if name in ("true", "false", "null") and name not in scope:
                return {"true": True, "false": False, "null": None}[name]
        if len(children) != 1:
            raise _Unsupported("unexpected expression shape")
        return self.eval(children[0], scope)

    def _template(self, parts: list[Any], scope: dict[str, Any]) -> Any:
        if len(parts) == 1 and not isinstance(parts[0], str):  # "${x}" is x itself, of any type
            return self.eval(parts[0], scope)
        out: list[str] = []
        for part in parts:
            if isinstance(part, str):
                out.append(part)
                continue
            value = self.eval(part, scope)
            if isinstance(value, Unknown):
                return value
            if value is None:
                raise TerraformError("a template cannot interpolate null")
            if isinstance(value, list | dict):
                raise TerraformError(f"a template cannot interpolate {describe(value)}")
            out.append(to_string(value))
        return _bounded("".join(out))

    def _object(self, node: Tree, scope: dict[str, Any]) -> Any:
        out: dict[str, Any] = {}
        for elem in node.children:
            key_node, value_node = elem.children[0], elem.children[-1]
            if isinstance(key_node, Tree) and key_node.data == "identifier":
                key: Any = _text(key_node)
            else:
                key = self.eval(key_node, scope)
                if isinstance(key, Unknown):
                    return key
                key = to_string(key)
            out[key] = self.eval(value_node, scope)
        return out

    def _call(self, node: Tree, scope: dict[str, Any]) -> Any:
        name = _text(node.children[0])
        args_node = node.children[1] if len(node.children) > 1 else None
        if id(node) in self.module.expanding_calls:
            return Unknown(f"{name}(...) with argument expansion is not evaluated")
        arg_nodes = list(args_node.children) if args_node is not None else []
        if name in ("try", "can"):
            return self._try(name, arg_nodes, scope)
        function = FUNCTIONS.get(name)
        if function is None:
            return Unknown(f"function {name}() is not evaluated")
        args = [_bounded(self.eval(a, scope)) for a in arg_nodes]
        for arg in args:
            missing = first_unknown(arg)
            if missing is not None:
                return missing
        try:
            result = function(*args)
        except TypeError as err:
            raise TerraformError(f"{name}(): wrong number or type of arguments") from err
        except (ValueError, OverflowError, IndexError, KeyError) as err:
            raise TerraformError(f"{name}(): {err}") from err
        return normalise_number(result) if isinstance(result, int | float) and not isinstance(result, bool) \
            else _bounded(result)

    def _try(self, name: str, arg_nodes: list[Any], scope: dict[str, Any]) -> Any:
        for arg in arg_nodes:
            problems = len(self.problems)
            try:
                value = self.eval(arg, scope)
            except (TerraformError, _Error):
                del self.problems[problems:]
                continue
            if len(self.problems) > problems:  # an undeclared reference inside try() is still an error
                return Unknown("try() over an invalid reference")
            if isinstance(value, Unknown):
                return value
            return True if name == "can" else value
        if name == "can":
            return False
        raise TerraformError("try(): no argument evaluated without an error")

    def _for(self, node: Tree, scope: dict[str, Any], tuple_result: bool) -> Any:
        children = [c for c in node.children if isinstance(c, Tree)]
        intro = children[0]
        names = [_text(c) for c in intro.children if isinstance(c, Tree) and c.data == "identifier"]
        source_node = [c for c in intro.children if isinstance(c, Tree) and c.data != "identifier"][0]
        rest = children[1:]
        condition = rest[-1] if rest and rest[-1].data == "for_cond" else None
        values = rest[:-1] if condition is not None else rest
        collection = self.eval(source_node, scope)
        if isinstance(collection, Unknown):
            return collection
        if isinstance(collection, list):
            pairs: list[tuple[Any, Any]] = list(enumerate(collection))
        elif isinstance(collection, dict):
            pairs = list(collection.items())
        else:
            raise TerraformError(f"a for expression needs a collection, got {describe(collection)}")
        out_list: list[Any] = []
        out_map: dict[str, Any] = {}
        for key, value in pairs:
            inner = dict(scope)
            if len(names) == 2:
                inner[names[0]], inner[names[1]] = key, value
            else:
                inner[names[0]] = value
            if condition is not None:
                keep = self.eval(condition.children[-1], inner)
                if isinstance(keep, Unknown):
                    return keep
                if not to_bool(keep):
                    continue
            if tuple_result:
                out_list.append(self.eval(values[0], inner))
            else:
                item_key = self.eval(values[0], inner)
                if isinstance(item_key, Unknown):
                    return item_key
                out_map[to_string(item_key)] = self.eval(values[1], inner)
        return _bounded(out_list if tuple_result else out_map)

    # -- operators -----------------------------------------------------------------------------------
    def _eval_chain(self, tree: Any, scope: dict[str, Any]) -> Any:
        if tree[0] == "node":
            return self.eval(tree[1], scope)
        if tree[0] == "cond":
            condition = self._eval_chain(tree[1], scope)
            if isinstance(condition, Unknown):
                return condition
            return self.eval(tree[2], scope) if to_bool(condition) else self._eval_chain(tree[3], scope)
        op, left, right = tree[1], self._eval_chain(tree[2], scope), self._eval_chain(tree[3], scope)
        for side in (left, right):
            if isinstance(side, Unknown):
                return side
        return binary(op, left, right)

    # -- references ----------------------------------------------------------------------------------
    def _traversal(self, node: Tree, scope: dict[str, Any]) -> Any:
        root, steps = _traversal_steps(node)
        if root in scope:
            return self._apply_steps(scope[root], steps, scope)
        if not steps:
            if root in ("true", "false", "null"):
                return {"true": True, "false": False, "null": None}[root]
            return self._undeclared((root,), f"unknown name {root!r}")
        first = steps[0]
        if root in CONTEXTUAL_ROOTS:
            return Unknown(f"{root}.* is known only inside a resource instance", reference=True)
        if first[0] != "attr":
            return self._undeclared((root,), f"unknown name {root!r}")
        name = first[1]
        if root == "var":
            if name not in self.module.variables:
                return self._undeclared(("var", name), f"variable {name!r} is not declared")
            default = self.module.variables[name]
            if default is None:
                return Unknown(f"var.{name} has no default")
            return self._apply_steps(self._variable(name, default), steps[1:], scope)
        if root == "local":
            if name not in self.module.locals:
                return self._undeclared(("local", name), f"local value {name!r} is not declared")
            return self._apply_steps(self._local(name), steps[1:], scope)
        if root in ("module", "data") or root not in ("var", "local"):
            self.referenced = True
        if root == "module":
            if name not in self.module.modules:
                return self._undeclared(("module", name), f"module {name!r} is not declared")
            return Unknown(f"module.{name} outputs are computed", reference=True)
        if root == "data":
            if len(steps) < 2 or steps[1][0] != "attr":
                return self._undeclared(("data", name), "incomplete data source reference")
            address = f"data.{name}.{steps[1][1]}"
            if address not in self.module.resources:
                return self._undeclared(("data", name, steps[1][1]), f"data source {address} is not declared")
            return Unknown(f"{address} is read at plan time", reference=True)
        address = f"{root}.{name}"
        resource = self.module.resources.get(address)
        if resource is None:
            return self._undeclared(("resource", root, name), f"resource {address} is not declared")
        return self._resource_attribute(resource, steps[1:], scope)

    def _undeclared(self, key: tuple[str, ...], message: str) -> Unknown:
        self.problems.append(Problem(("undeclared", *key), f"{'.'.join(self._where)}: {message}"))
        return Unknown(message)

    def _variable(self, name: str, default: Any) -> Any:
        value = _bounded(self.eval(default, {}))
        declared = self.module.variable_types.get(name, "")
        if is_known(value) and declared in ("bool", "number", "string"):
            convert = {"bool": to_bool, "number": to_number, "string": to_string}[declared]
            value = None if value is None else convert(value)
        return value

    def _local(self, name: str) -> Any:
        if name in self._locals_done:
            return self._locals_done[name]
        if name in self._locals_busy:
            raise TerraformError(f"local.{name} refers to itself")
        self._locals_busy.add(name)
        try:
            value = _bounded(self.eval(self.module.locals[name], {}))
        finally:
            self._locals_busy.discard(name)
        self._locals_done[name] = value
        return value

    def _resource_attribute(self, resource: _Resource, steps: list[tuple[str, Any]], scope: dict[str, Any]) -> Any:
        """A literal argument of a declared resource is its value; anything else is computed at apply time."""
        if resource.counted or not steps or steps[0][0] != "attr" or resource.body is None:
            return Unknown(f"{resource.address} is computed", reference=True)
        expr = _attribute(resource.body, steps[0][1])
        if expr is None:
            return Unknown(f"{resource.address}.{steps[0][1]} is computed", reference=True)
        value = self.eval(expr, {})
        if isinstance(value, Unknown):
            return Unknown(f"{resource.address}.{steps[0][1]} is not known", reference=True)
        return self._apply_steps(value, steps[1:], scope)

    def _apply_steps(self, value: Any, steps: list[tuple[str, Any]], scope: dict[str, Any]) -> Any:
        for kind, arg in steps:
            if isinstance(value, Unknown):
                return value
            if kind == "splat":
                items = value if isinstance(value, list) else [] if value is None else [value]
                return [self._apply_steps(item, arg, scope) for item in items]
            key = arg if kind == "attr" else self.eval(arg, scope)
            if isinstance(key, Unknown):
                return key
            if isinstance(value, dict):
                name = to_string(key)
                if name not in value:
                    raise TerraformError(f"no attribute or key {name!r}")
                value = value[name]
            elif isinstance(value, list):
                index = to_number(key)
                if not isinstance(index, int) or not 0 <= index < len(value):
                    raise TerraformError(f"index {key!r} out of range")
                value = value[index]
            else:
                raise TerraformError(f"cannot index {describe(value)}")
        return value


def _traversal_steps(node: Tree) -> tuple[str, list[tuple[str, Any]]]:
    """``a.b[0].c`` -> ("a", [("attr", "b"), ("index", <expr>), ("attr", "c")]); splats as ("splat", steps)."""
    if node.data == "identifier":
        return _text(node), []
    if node.data == "expr_term":
        if len(node.children) != 1 or not isinstance(node.children[0], Tree):
            raise _Unsupported("a reference to a non-name")
        return _traversal_steps(node.children[0])
    base, suffix = node.children[0], node.children[1]
    root, steps = _traversal_steps(base)
    if node.data == "get_attr_expr_term":
        steps.append(("attr", _text(suffix.children[0])))
    elif node.data == "index_expr_term":
        inner = suffix.children[0]
        steps.append(("index", int(str(inner)) if isinstance(inner, Token) else inner))
    else:  # attr_splat / full_splat: the steps after the splat apply to every element
        after: list[tuple[str, Any]] = []
        for part in suffix.children:
            if part.data == "get_attr":
                after.append(("attr", _text(part.children[0])))
            else:
                inner = part.children[0]
                after.append(("index", int(str(inner)) if isinstance(inner, Token) else inner))
        steps.append(("splat", after))
    return root, steps


# ------------------------------------------------------------------------------------------------ operators
def _flatten_chain(node: Any) -> list[tuple[str, Any]]:
    """The operands, operators and ``?`` branches of a chain the parser nested without precedence."""
    if isinstance(node, Tree) and node.data == "binary_op":
        left, term = node.children
        op = str(term.children[0].children[0])
        return [*_flatten_chain(left), ("op", op), *_flatten_chain(term.children[1])]
    if isinstance(node, Tree) and node.data == "conditional":
        condition, then, otherwise = node.children
        return [*_flatten_chain(condition), ("?", then), *_flatten_chain(otherwise)]
    return [("node", node)]


def _associate(items: list[tuple[str, Any]]) -> Any:
    """Re-associate a flattened chain with HCL's precedence (binary operators left-associative, ``?:`` lowest
    and right-associative): ``var.env == "prod" ? 1 : 2`` is ``(var.env == "prod") ? 1 : 2``."""
    pos = 0

    def operand() -> Any:
        nonlocal pos
        kind, value = items[pos]
        if kind != "node":
            raise _Unsupported("malformed operator chain")
        pos += 1
        return ("node", value)

    def binary_chain(min_level: int) -> Any:
        nonlocal pos
        left = operand()
        while pos < len(items) and items[pos][0] == "op" and _PRECEDENCE[items[pos][1]] >= min_level:
            op = items[pos][1]
            pos += 1
            right = binary_chain(_PRECEDENCE[op] + 1)
            left = ("bin", op, left, right)
        return left

    def conditional() -> Any:
        nonlocal pos
        condition = binary_chain(1)
        if pos < len(items) and items[pos][0] == "?":
            then = items[pos][1]
            pos += 1
            return ("cond", condition, then, conditional())
        return condition

    result = conditional()
    if pos != len(items):
        raise _Unsupported("malformed operator chain")
    return result


def binary(op: str, left: Any, right: Any) -> Any:
    """One HCL binary operation on known values, with Terraform's conversions and errors."""
    if op in ("==", "!="):
        equal = _equal(left, right)
        return equal if op == "==" else not equal
    if op in ("&&", "||"):
        a, b = to_bool(left), to_bool(right)
        return (a and b) if op == "&&" else (a or b)
    x, y = to_number(left), to_number(right)
    if op in ("<", ">", "<=", ">="):
        return {"<": x < y, ">": x > y, "<=": x <= y, ">=": x >= y}[op]
    if op in ("/", "%") and y == 0:
        raise TerraformError("division by zero")
    result = {"+": lambda: x + y, "-": lambda: x - y, "*": lambda: x * y, "/": lambda: x / y,
              "%": lambda: x % y}[op]()
    return normalise_number(result)


def _equal(a: Any, b: Any) -> bool:
    """Terraform's equality: no conversion between types (``1 == "1"`` is false)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if type(a) is not type(b):
        return False
    return bool(a == b)



# ------------------------------------------------------------------------------------------------ whole files
#: Arguments that name things instead of computing values (never evaluated as expressions).
_META_ARGUMENTS = {"depends_on", "provider", "providers", "iterator", "source", "version"}
#: Nested blocks whose arguments are references or settings of Terraform itself.
_META_BLOCKS = {"lifecycle", "precondition", "postcondition"}


@dataclass(frozen=True)
class EvaluatedFile:
    """One file evaluated within its module: the engines' document, its attributes, and its problems."""

    document: dict[str, Any]  # the parse in hcl2's shape, every known value replaced by its evaluation
    attributes: tuple[Attribute, ...]
    problems: tuple[Problem, ...]

    def unresolved(self) -> list[Attribute]:
        """Attributes whose value the files do not determine, except computed references to declared things
        (an ARN, an id): those are real values, only known at apply time."""
        out = []
        for attribute in self.attributes:
            missing = first_unknown(attribute.value)
            if missing is not None and not missing.reference:
                out.append(attribute)
        return out


def evaluate_file(text: str, tree: Tree, context: tuple[tuple[str, Tree], ...] = ()) -> EvaluatedFile:
    """Evaluate every attribute of the file ``text`` (parsed as ``tree``) in the module made of it and the
    files of ``context`` ((text, tree) pairs; their declarations only: variables, locals, resources)."""
    module = Module()
    module.declare(tree, text)
    for other_text, other_tree in context:
        module.declare(other_tree, other_text)
    evaluator = Evaluator(module)
    known: dict[Any, Any] = {}
    attributes: list[Attribute] = []
    for kind, labels, body in _blocks(tree):
        if kind not in _LABELLED and kind not in ("locals",):
            continue
        address = _address(kind, labels)
        if kind == "variable":
            default = _attribute(body, "default")
            if default is not None:
                _record(evaluator, text, known, attributes, address, "default", _attribute_node(body, "default"), {})
            continue
        _walk_body(evaluator, text, known, attributes, address, "", body, {})
    document = _transformer_class()(known).transform(tree)
    terraform_document(document)  # meaning, canonically spelled: see canonical.py
    terraform_unions(document)  # and across blocks: see canonical_unions.py
    return EvaluatedFile(document=document, attributes=tuple(attributes), problems=tuple(evaluator.problems))


class _Expanded(dict):  # type: ignore[type-arg]
    """The blocks a ``dynamic`` block generates, ``{label: [body, ...]}``, as the transformer's value for it."""


@lru_cache(maxsize=1)
def _transformer_class() -> type:
    """hcl2's DictTransformer giving the evaluated document (built once: hcl2 is imported only with Terraform)."""
    from hcl2.transformer import DictTransformer

    class EvaluatedTransformer(DictTransformer):  # type: ignore[misc, valid-type]
        """hcl2's own dict, with the attributes whose values are known replaced by those values, and each
        ``dynamic`` block whose ``for_each`` is known replaced by the blocks it generates (each element's body
        evaluated with its own ``known`` map)."""

        def __init__(self, known: dict[Any, Any]) -> None:
            super().__init__()
            self.known = known

        @v_args(tree=True)
        def attribute(self, node: Tree) -> dict[str, Any]:
            raw: dict[str, Any] = super().attribute(node.children)
            if id(node.meta) in self.known:
                return {key: _merge_known(value, self.known[id(node.meta)]) for key, value in raw.items()}
            return raw

        @v_args(meta=True)
        def block(self, meta: Any, args: list[Any]) -> dict[str, Any]:
            expansion = self.known.get(("dynamic", id(meta)))
            if expansion is None:
                return super().block(meta, args)  # type: ignore[no-any-return]
            label, content, iterations = expansion
            return _Expanded({label: [type(self)(each).transform(content) for each in iterations]})

        def body(self, args: list[Any]) -> dict[str, Any]:
            expanded = [a for a in args if isinstance(a, _Expanded)]
            result: dict[str, Any] = super().body([a for a in args if not isinstance(a, _Expanded)])
            for generated in expanded:
                for label, bodies in generated.items():
                    if bodies:
                        result.setdefault(label, []).extend(bodies)
            return result

    return EvaluatedTransformer


def _address(kind: str, labels: list[str]) -> str:
    if kind == "resource" and len(labels) == 2:
        return f"{labels[0]}.{labels[1]}"
    if kind == "data" and len(labels) == 2:
        return f"data.{labels[0]}.{labels[1]}"
    return ".".join([kind, *labels])


def _attribute_node(body: Tree, name: str) -> Tree:
    for child in body.children:
        if isinstance(child, Tree) and child.data == "attribute" and _label(child.children[0]) == name:
            return child
    raise KeyError(name)


def _walk_body(evaluator: Evaluator, text: str, known: dict[Any, Any], attributes: list[Attribute], address: str,
               prefix: str, body: Tree, scope: dict[str, Any], dynamic: bool = False,
               skip: tuple[str, ...] = ()) -> None:
    """Record the attributes of ``body`` and its nested blocks; ``dynamic`` blocks after the static ones, so the
    blocks they generate take the next indices of their label (as the document lists them)."""
    counts: dict[str, int] = {}
    dynamics: list[tuple[Tree, str, Tree]] = []
    for child in body.children:
        if not isinstance(child, Tree):
            continue
        if child.data == "attribute":
            name = _label(child.children[0])
            if name in _META_ARGUMENTS or name in skip:
                continue
            _record(evaluator, text, known, attributes, address, prefix + name, child, scope, dynamic)
        elif child.data == "block":
            kind, labels, inner = _block_parts(child)
            if kind in _META_BLOCKS:
                continue
            if kind == "dynamic" and labels:
                dynamics.append((child, labels[0], inner))
                continue
            index = counts.get(kind, 0)
            counts[kind] = index + 1
            path = ".".join([kind, *labels, str(index)])
            _walk_body(evaluator, text, known, attributes, address, f"{prefix}{path}.", inner, scope, dynamic)
    for order, (node, label, inner) in enumerate(dynamics):
        _walk_dynamic(evaluator, text, known, attributes, address, prefix, (node, label, inner, order), scope, counts)


def _walk_dynamic(evaluator: Evaluator, text: str, known: dict[Any, Any], attributes: list[Attribute], address: str,
                  prefix: str, block: tuple[Tree, str, Tree, int], scope: dict[str, Any],
                  counts: dict[str, int]) -> None:
    """A ``dynamic "label"`` block: when its ``for_each`` is known, the blocks it generates (``content`` evaluated
    per element with the iterator's ``key`` and ``value``), recorded and put in the document as static ``label``
    blocks; otherwise the block as written, the iterator unknown (every engine misses what it would generate, so
    fail-closed credit judges the resource as the original had it, see ``fail_closed``)."""
    node, label, inner, order = block
    where = f"{prefix}dynamic.{label}.{order}."
    iterator = _attribute(inner, "iterator")
    name = _text(iterator.children[0]) if isinstance(iterator, Tree) and iterator.data == "expr_term" else label
    contents = [b for b in inner.children if isinstance(b, Tree) and b.data == "block"
                and _block_parts(b)[0] == "content"]
    pairs: list[tuple[Any, Any]] | None = None
    try:
        for_each = _attribute_node(inner, "for_each")
    except KeyError:
        for_each = None
    if for_each is not None and len(contents) == 1:
        _record(evaluator, text, known, attributes, address, where + "for_each", for_each, scope, True)
        pairs = _iterations(attributes[-1].value)
        if pairs is not None and len(pairs) > min(evaluator.document_budget, MAX_STEPS - evaluator._steps):
            pairs = None  # past the budgets: left as written (unknown to every rule)
    if pairs is None:
        unknown_scope = {**scope, name: Unknown(f"the iterator of dynamic block {label!r}")}
        done = ("for_each",) if for_each is not None and len(contents) == 1 else ()
        _walk_body(evaluator, text, known, attributes, address, where, inner, unknown_scope, True, skip=done)
        return
    content = _block_parts(contents[0])[2]
    iterations: list[dict[Any, Any]] = []
    for key, value in pairs:
        evaluator._steps += 1
        evaluator.document_budget -= 1
        index = counts.get(label, 0)
        counts[label] = index + 1
        each: dict[Any, Any] = {}
        _walk_body(evaluator, text, each, attributes, address, f"{prefix}{label}.{index}.", content,
                   {**scope, name: {"key": key, "value": value}}, True)
        iterations.append(each)
    known[("dynamic", id(node.meta))] = (label, content, iterations)


def _iterations(collection: Any) -> list[tuple[Any, Any]] | None:
    """(key, value) of each element of a known ``for_each`` value (a list's or set's keys are its indices: rules
    read ``.value``); None when it is not a known collection."""
    if not is_known(collection):
        return None
    if isinstance(collection, list):
        return list(enumerate(collection))
    if isinstance(collection, dict):
        return list(collection.items())
    return None


def _record(evaluator: Evaluator, text: str, known: dict[Any, Any], attributes: list[Attribute], address: str,
            path: str, node: Tree, scope: dict[str, Any], dynamic: bool = False) -> None:
    expr = node.children[1]
    value = evaluator.attribute((address, path), expr, scope)
    size = _size(value, evaluator.document_budget)
    if size > evaluator.document_budget:
        value = Unknown(f"the value expands past {MAX_VALUE_SIZE:,} elements (what the file spells out, at most)")
    else:
        evaluator.document_budget -= size
    start, end = _span(expr, text)
    name_start = node.meta.start_pos if not node.meta.empty else start
    attributes.append(Attribute(address=address, path=path, source=text[start:end], start=start, end=end,
                                value=value, line_start=name_start, references=evaluator.referenced,
                                dynamic=dynamic))
    if isinstance(value, Unknown) and value.why.startswith(_REFUSED):
        known[id(node.meta)] = TOO_LARGE  # as written, every engine would expand it again, at the same cost
    elif not evaluator.referenced and (is_known(value) or isinstance(value, list | dict)):
        known[id(node.meta)] = value


def _bounded(value: Any) -> Any:
    """``value``, or an unknown when it expands past :data:`MAX_VALUE_SIZE` (checked where values are made, so no
    walk over a value, such as looking for unknowns inside it, can ever be longer than that)."""
    if isinstance(value, list | dict | str) and _too_large(value):
        raise _Unsupported(f"a value expands past {MAX_VALUE_SIZE:,} elements")
    return value


def _too_large(value: Any) -> bool:
    """Whether ``value`` expands (shared parts counted as often as they occur) past :data:`MAX_VALUE_SIZE`."""
    return _size(value, MAX_VALUE_SIZE) > MAX_VALUE_SIZE


def _size(value: Any, limit: int) -> int:
    """Elements of ``value`` with shared parts counted as often as they occur (strings count 1 per 64 characters);
    stops counting past ``limit``."""
    total = 0
    stack = [value]
    while stack:
        current = stack.pop()
        total += 1 + (len(current) // 64 if isinstance(current, str) else 0)
        if total > limit:
            return total
        if isinstance(current, list):
            stack.extend(current)
        elif isinstance(current, dict):
            stack.extend(current.values())
    return total


def _merge_known(raw: Any, value: Any) -> Any:
    """The evaluated value where it is known, hcl2's raw form (``"${...}"``) where it is not: a list or object
    with one unknown element keeps its known elements evaluated."""
    if isinstance(value, Unknown):
        return raw
    if isinstance(value, list) and isinstance(raw, list) and len(raw) == len(value):
        return [_merge_known(r, v) for r, v in zip(raw, value, strict=True)]
    if isinstance(value, dict) and isinstance(raw, dict) and set(raw) == set(value):
        return {k: _merge_known(raw[k], v) for k, v in value.items()}
    return value if is_known(value) else raw


def _span(node: Any, text: str) -> tuple[int, int]:
    """Offsets of an expression in ``text``, without the newlines and comments the grammar attaches to its end."""
    if isinstance(node, Token):
        return node.start_pos or 0, node.end_pos or 0
    meta = node.meta
    if getattr(meta, "empty", True):
        return 0, 0
    start, end = meta.start_pos, meta.end_pos
    while True:
        source = text[start:end].rstrip()
        last_line_at = source.rfind("\n") + 1
        cut = _comment_start(source[last_line_at:])
        if cut is not None and (cut > 0 or last_line_at > 0):
            source = source[: last_line_at + cut].rstrip()
        if len(source) == end - start:
            return start, end
        end = start + len(source)


def _comment_start(line: str) -> int | None:
    """Where a ``#`` or ``//`` comment starts in a line, outside strings; None when there is none."""
    quoted = False
    i = 0
    while i < len(line):
        char = line[i]
        if char == "\\" and quoted:
            i += 2
            continue
        if char == '"':
            quoted = not quoted
        elif not quoted and (char == "#" or line.startswith("//", i)):
            return i
        i += 1
    return None
