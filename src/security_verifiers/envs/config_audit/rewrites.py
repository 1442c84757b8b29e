"""E2's label-preserving rewrites (the ``robust`` split, :mod:`..kits.robust`): the same configuration written
another way, one that Kubernetes or Terraform reads as the same.

For both platforms:

- ``key_order``: the keys of every YAML mapping, the attributes of every Terraform block, in another order
  (list items, nested blocks and documents stay where they are: their order can mean something).
- ``comments``: comment lines and trailing comments of neutral text (YAML ``#``; HCL ``#``, ``//``, ``/* */``).
- ``layout``: YAML re-emitted with 4-space indentation, block sequences indented or not, short lists of scalars in
  flow style (``[a, b]``); HCL with 4-space indentation, ``=`` aligned as ``terraform fmt`` aligns it, blank lines
  between entries and short lists written one element a line.

For one platform (:attr:`~..kits.robust.Rewrite.applies`):

- ``quoting`` (Kubernetes): string scalars re-quoted (plain, single, double), only those that every YAML schema
  (1.1 and 1.2: PyYAML and Kubernetes' go-yaml alike) reads as the same string in every style, so never ``on``,
  ``yes``, ``null``, ``0777``, ``1e3`` or anything else that starts with a digit, sign or dot; numbers and
  booleans are left as they are.
- ``anchors`` (Kubernetes, where a document repeats a mapping or a list): every later copy of a repeated mapping
  or list written as an alias of the first (``&ref1`` ... ``*ref1``; an anchor holds within its document).
- ``equivalent_expressions`` (Terraform): literal values of resource and data attributes spelled as expressions
  Terraform evaluates to the same value: ``!false`` for ``true``, ``"${"x"}"`` for ``"x"``, ``N + 0`` for ``N``,
  or a ``locals`` value referenced as ``local.NAME``. Never meta-arguments, ``lifecycle``, provisioners, or a
  string a secret rule reads (a scanner of the raw text places that finding where the string is written).

YAML is rewritten on PyYAML's node graph (composed, edited, serialized): a scalar keeps its tag, so the
serializer quotes whatever would otherwise read as another type. HCL is rewritten on its lines, split into
blocks and attributes with the bracket scanner the autofix edits with (:func:`..autofix.hcl_text.scan`);
heredoc bodies are never touched.

The check (:func:`rewrite_problems`): the oracle (Rego, Checkov, semgrep, the secret values) finds on the
rewritten file exactly the (rule id, resource) pairs of the target, which is what the scorer compares; the file
is valid (as every public item is); and the reference answer (the target's findings and its fixed file, sent as a diff
against the rewritten text) earns the same reward and parts on both, so the patch is judged as before. All texts
go to the oracle in one batch (semgrep starts once).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import yaml

from security_verifiers.core.types import Item, Message, Transcript
from security_verifiers.engines.terraform_eval import _META_ARGUMENTS, _META_BLOCKS
from security_verifiers.envs.config_audit.autofix.hcl_text import HEADER_RE, scan
from security_verifiers.envs.kits.robust import Rewrite

if TYPE_CHECKING:
    from security_verifiers.envs.base import Environment

#: Comment texts: what people write in configuration files; none about security, none a scanner reads.
NOTES = ("managed by the platform team", "kept in sync with the staging overlay", "see docs/runbook.md",
         "values from the capacity sheet", "reviewed in the last release", "do not edit by hand",
         "changed for the migration", "owned by the service team", "as agreed in the design review",
         "rollout notes in the changelog")
_STR = "tag:yaml.org,2002:str"
_QUOTES = (None, "'", '"')  # plain, single, double (libyaml's composer gives a plain scalar the style "")

Input = dict[str, Any]
Apply = Callable[[Input, random.Random], Input]


def _is(platform: str) -> Callable[[Input], bool]:
    return lambda item_input: item_input["platform"] == platform


def _shuffled(values: list[Any], rng: random.Random) -> list[Any]:
    """A permutation of ``values``, not the identity when there are two or more."""
    order = list(range(len(values)))
    rng.shuffle(order)
    if order == sorted(order) and len(order) > 1:
        order = order[1:] + order[:1]
    return [values[i] for i in order]


# -- YAML -------------------------------------------------------------------------------------------------------
class _Emitter(yaml.SafeDumper):
    """The generator's style (block sequences indented under their key), anchors named ``ref1``, ``ref2``..."""

    ANCHOR_TEMPLATE = "ref%d"
    indentless_sequences = False

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, indentless and self.indentless_sequences)


class _IndentlessEmitter(_Emitter):
    """PyYAML's own style: a block sequence at its key's indentation."""

    indentless_sequences = True


def _compose(text: str) -> list[yaml.Node]:
    from security_verifiers.engines.configs import FAST_LOADER

    return [doc for doc in yaml.compose_all(text, Loader=FAST_LOADER) if doc is not None]


def _emit(docs: list[yaml.Node], indent: int = 2, indentless: bool = False) -> str:
    """The documents serialized (an unedited graph comes back as the generator wrote it, byte for byte)."""
    return yaml.serialize_all(docs, Dumper=_IndentlessEmitter if indentless else _Emitter, indent=indent,
                              width=4096, allow_unicode=True)


def _nodes(doc: yaml.Node) -> Iterator[yaml.Node]:
    """Every node of ``doc`` once, in document order (a key before its value)."""
    stack, seen = [doc], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        if isinstance(node, yaml.MappingNode):
            stack.extend(n for pair in reversed(node.value) for n in reversed(pair))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(reversed(node.value))


def _on_nodes(edit: Callable[[list[yaml.Node], random.Random], dict[str, Any]]) -> Apply:
    """A rewrite of a manifest by ``edit``, which changes the composed documents and returns the emitter's options."""

    def apply(item_input: Input, rng: random.Random) -> Input:
        docs = _compose(item_input["text"])
        item_input["text"] = _emit(docs, **edit(docs, rng))
        return item_input

    return apply


def _yaml_key_order(docs: list[yaml.Node], rng: random.Random) -> dict[str, Any]:
    for doc in docs:
        for node in _nodes(doc):
            if isinstance(node, yaml.MappingNode):
                node.value = _shuffled(node.value, rng)
    return {}


#: Plain scalars that some YAML schema reads as other than a string (1.1 booleans and nulls, numbers in any base,
#: timestamps, ``.inf``, merge and value keys) or that must be quoted anyway: their quoting is never touched.
_NOT_ALWAYS_STR = re.compile(r"(?i)(y|n|yes|no|on|off|true|false|null|~|<<|=)?|[-+.]?\d.*|[-+]?\.(inf|nan)")


def _string_in_every_style(node: yaml.Node) -> bool:
    """A one-line string scalar that reads as the same string plain, single- or double-quoted in every schema."""
    from yaml.resolver import Resolver

    return (isinstance(node, yaml.ScalarNode) and node.tag == _STR and (node.style or None) in _QUOTES
            and "\n" not in node.value and _NOT_ALWAYS_STR.fullmatch(node.value) is None
            and Resolver().resolve(yaml.ScalarNode, node.value, (True, False)) == _STR)


def _yaml_quoting(docs: list[yaml.Node], rng: random.Random) -> dict[str, Any]:
    """Values re-quoted more often than keys (a quoted key is rare in real manifests, and legal)."""
    keys = {id(k) for doc in docs for node in _nodes(doc) if isinstance(node, yaml.MappingNode) for k, _ in node.value}
    eligible = [node for doc in docs for node in _nodes(doc) if _string_in_every_style(node)]
    chosen = [node for node in eligible if rng.random() < (0.15 if id(node) in keys else 0.6)] or eligible[:1]
    for node in chosen:
        node.style = rng.choice([s for s in _QUOTES if s != (node.style or None)])
    return {}


def _yaml_layout(docs: list[yaml.Node], rng: random.Random) -> dict[str, Any]:
    for doc in docs:
        for node in _nodes(doc):
            if isinstance(node, yaml.SequenceNode) and 0 < len(node.value) <= 4 and rng.random() < 0.6 and all(
                    isinstance(v, yaml.ScalarNode) and (v.style or None) in _QUOTES and len(v.value) <= 40
                    for v in node.value):
                node.flow_style = True
    return {"indent": 4, "indentless": rng.random() < 0.5}


def _identity(node: yaml.Node) -> Any:
    """What a node means (its tags and values, not its style): equal identities load as equal values."""
    if isinstance(node, yaml.ScalarNode):
        return (node.tag, node.value)
    if isinstance(node, yaml.MappingNode):
        return (node.tag, tuple((_identity(k), _identity(v)) for k, v in node.value))
    return (node.tag, tuple(_identity(v) for v in node.value))


def _share_repeats(doc: yaml.Node) -> int:
    """Replace every later copy of a non-empty mapping or list of ``doc`` by the first (document order): the
    serializer writes the first with an anchor and the copies as aliases. Returns how many were replaced."""
    first: dict[Any, yaml.Node] = {}
    replaced = 0

    def shared(node: yaml.Node) -> yaml.Node:
        nonlocal replaced
        if isinstance(node, yaml.ScalarNode):
            return node
        if node.value:
            identity = _identity(node)
            if identity in first:
                replaced += 1
                return first[identity]
            first[identity] = node
        if isinstance(node, yaml.MappingNode):
            node.value = [(shared(k), shared(v)) for k, v in node.value]
        else:
            node.value = [shared(v) for v in node.value]
        return node

    shared(doc)
    return replaced


def _yaml_anchors(docs: list[yaml.Node], rng: random.Random) -> dict[str, Any]:
    """Every repeat shared (nothing to draw: a file has one anchored form)."""
    for doc in docs:
        _share_repeats(doc)
    return {}


def has_repeats(item_input: Input) -> bool:
    """Whether a document of a manifest repeats a non-empty mapping or list (what ``anchors`` can share)."""
    return item_input["platform"] == "kubernetes" and any(_share_repeats(d) for d in _compose(item_input["text"]))


def _yaml_comments(text: str, rng: random.Random) -> str:
    """Comment lines before some lines and trailing comments after others, never inside or beside a scalar that
    spans lines (a ``#`` in a block scalar is text)."""
    lines = text.splitlines(keepends=True)
    spanned: set[int] = set()  # lines on which a multi-line scalar starts, continues or ends
    for token in yaml.scan(text, Loader=yaml.SafeLoader):
        if isinstance(token, yaml.ScalarToken) and token.end_mark.line > token.start_mark.line:
            spanned.update(range(token.start_mark.line, token.end_mark.line + 1))
    candidates = [i for i, line in enumerate(lines) if line.strip() and i not in spanned]
    trailing = [i for i in candidates if lines[i].strip() != "---"]
    above = {i for i in candidates if rng.random() < 0.12} or {rng.choice(candidates)}
    after = {i for i in trailing if rng.random() < 0.12} or {rng.choice(trailing)}
    out: list[str] = []
    for index, line in enumerate(lines):
        if index in above:
            out.append(f"{' ' * (len(line) - len(line.lstrip(' ')))}# {rng.choice(NOTES)}\n")
        out.append(f"{line.rstrip()}  # {rng.choice(NOTES)}\n" if index in after else line)
    return "".join(out)


# -- HCL --------------------------------------------------------------------------------------------------------
_ATTRIBUTE = re.compile(r"^([ \t]*)([A-Za-z_][\w-]*)[ \t]*=(?![=>])(.*)$", re.S)
#: A one-line list of literals: strings without escapes or templates, numbers, booleans, references.
_ATOM = r'"[^"\\$%]*"|[-\w.]+'
_SIMPLE_LIST = re.compile(rf"\[\s*(?:{_ATOM})(?:\s*,\s*(?:{_ATOM}))+\s*,?\s*\]")
_STRING = re.compile(r'"[^"\\$%]*"')
_NUMBER = re.compile(r"-?\d+")
#: Blocks whose values are never re-spelled: Terraform reads some before evaluating anything (``lifecycle``), the
#: engines do not evaluate them (:data:`..terraform_eval._META_BLOCKS`), or they are evaluated per element.
_LITERAL_BLOCKS = frozenset({*_META_BLOCKS, "provisioner", "connection", "dynamic"})
#: Attributes never re-spelled: meta-arguments, and the names the engines read as written, not evaluated.
_NAMES = frozenset({*_META_ARGUMENTS, "count", "for_each", "lifecycle"})


@dataclass
class _Entry:
    """One entry of a Terraform body: an attribute (its lines, a multi-line value included), a nested block (its
    header line, its entries and its closing line) or anything else (a blank line, a comment, a one-line block)."""

    kind: str
    lines: list[str]
    body: list[_Entry] = field(default_factory=list)
    closing: str = ""

    @property
    def name(self) -> str:
        match = _ATTRIBUTE.match(self.lines[0]) if self.kind == "attribute" else HEADER_RE.match(self.lines[0])
        return match.group(2 if self.kind == "attribute" else 1) if match else ""

    @property
    def indent(self) -> str:
        return self.lines[0][:len(self.lines[0]) - len(self.lines[0].lstrip(" \t"))]


def _parse_hcl(text: str) -> list[_Entry]:
    lines = text.splitlines(keepends=True)
    infos = scan(lines)

    def entries(lo: int, hi: int, depth: int) -> list[_Entry]:
        out: list[_Entry] = []
        i = lo
        while i < hi:
            end = i + 1
            while end < hi and (infos[end].depth > depth or infos[end].heredoc):
                end += 1
            first = lines[i]
            if _ATTRIBUTE.match(first):
                out.append(_Entry("attribute", lines[i:end]))
            elif end - i >= 2 and HEADER_RE.match(first) and first.rstrip().endswith("{") \
                    and lines[end - 1].strip() == "}":
                out.append(_Entry("block", [first], entries(i + 1, end - 1, depth + 1), lines[end - 1]))
            else:
                out.append(_Entry("other", lines[i:end]))
            i = end
        return out

    return entries(0, len(lines), 0)


def _render_hcl(entries: list[_Entry]) -> str:
    def lines(body: list[_Entry]) -> Iterator[str]:
        for entry in body:
            yield from entry.lines
            if entry.kind == "block":
                yield from lines(entry.body)
                yield entry.closing

    return "".join(lines(entries))


def _bodies(entries: list[_Entry], path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], list[_Entry]]]:
    """Every block body of the file, with the names of the blocks around it (outermost first)."""
    for entry in entries:
        if entry.kind == "block":
            inner = (*path, entry.name)
            yield inner, entry.body
            yield from _bodies(entry.body, inner)


def _on_hcl(edit: Callable[[list[_Entry], random.Random], None]) -> Apply:
    def apply(item_input: Input, rng: random.Random) -> Input:
        entries = _parse_hcl(item_input["text"])
        edit(entries, rng)
        item_input["text"] = _render_hcl(entries)
        return item_input

    return apply


def _hcl_key_order(entries: list[_Entry], rng: random.Random) -> None:
    for _, body in _bodies(entries):
        slots = [i for i, entry in enumerate(body) if entry.kind == "attribute"]
        for slot, entry in zip(slots, _shuffled([body[i] for i in slots], rng), strict=True):
            body[slot] = entry


_COMMENT_STYLES = ("# {}", "// {}", "/* {} */")


def _hcl_comments(entries: list[_Entry], rng: random.Random) -> None:
    def note() -> str:
        return rng.choice(_COMMENT_STYLES).format(rng.choice(NOTES))

    bodies = [entries, *(body for _, body in _bodies(entries))]
    commentable = [entry for body in bodies for entry in body if entry.kind != "other"]
    one_line = [entry for entry in commentable if entry.kind == "attribute" and len(entry.lines) == 1]
    above = {id(e) for e in commentable if rng.random() < 0.15} or {id(rng.choice(commentable))}
    for entry in [e for e in one_line if rng.random() < 0.15] or one_line[:1]:
        entry.lines = [f"{entry.lines[0].rstrip()} {note()}\n"]
    for body in bodies:
        body[:] = [new for entry in body for new in (
            [_Entry("other", [f"{entry.indent}{note()}\n"]), entry] if id(entry) in above else [entry])]


def _hcl_layout(entries: list[_Entry], rng: random.Random) -> None:
    for _, body in _bodies(entries):
        for entry in body:  # a short list one element a line
            match = _ATTRIBUTE.match(entry.lines[0]) if entry.kind == "attribute" and len(entry.lines) == 1 else None
            value = match.group(3).strip() if match else ""
            if match and _SIMPLE_LIST.fullmatch(value) and rng.random() < 0.5:
                items = re.findall(_ATOM, value[1:-1])
                entry.lines = [f"{entry.indent}{entry.name} = [\n", *(f"{entry.indent}  {v},\n" for v in items),
                               f"{entry.indent}]\n"]
        run: list[_Entry] = []  # consecutive attributes, their "=" aligned
        for entry in [*body, _Entry("other", ["\n"])]:
            if entry.kind == "attribute":
                run.append(entry)
                continue
            width = max((len(e.name) for e in run), default=0)
            for e in run:
                rest = _ATTRIBUTE.match(e.lines[0]).group(3)  # type: ignore[union-attr]
                e.lines[0] = f"{e.indent}{e.name.ljust(width)} ={rest}"
            run = []
        body[:] = [new for index, entry in enumerate(body) for new in (
            [_Entry("other", ["\n"]), entry] if index and entry.kind != "other" and rng.random() < 0.25 else [entry])]
    entries[:] = [new for entry in entries for new in (
        [entry, _Entry("other", ["\n"])] if entry.kind == "other" and not entry.lines[0].strip()
        and rng.random() < 0.3 else [entry])]


def _hcl_reindent(text: str) -> str:
    """Every line's indentation doubled (2 -> 4 spaces), except heredoc bodies, whose text it is."""
    lines = text.splitlines(keepends=True)
    return "".join(line if info.heredoc else " " * (2 * (len(line) - len(line.lstrip(" ")))) + line.lstrip(" ")
                   for line, info in zip(lines, scan(lines), strict=True))


def _is_secret(literal: str) -> bool:
    from security_verifiers.engines.secret_values import AWS_KEY, PRIVATE_KEY

    return bool(AWS_KEY.search(literal) or PRIVATE_KEY.search(literal))


def _literal(entry: _Entry) -> str | None:
    """The value of a one-line attribute when it is a literal that may be re-spelled (a boolean, an integer, a
    string without escapes or templates that no secret rule reads), else None."""
    match = _ATTRIBUTE.match(entry.lines[0]) if entry.kind == "attribute" and len(entry.lines) == 1 else None
    if match is None or entry.name in _NAMES:
        return None
    value = match.group(3).strip()
    if value in ("true", "false") or _NUMBER.fullmatch(value) or (_STRING.fullmatch(value) and not _is_secret(value)):
        return value
    return None


def _hcl_expressions(entries: list[_Entry], rng: random.Random) -> None:
    """Some literal attribute values of resources and data sources re-spelled, a few moved into ``locals``."""
    taken = {e.name for path, body in _bodies(entries) if path == ("locals",) for e in body}
    eligible: list[tuple[_Entry, str, str]] = []  # (attribute, its literal, the name of its resource)
    for top in entries:
        if top.kind == "block" and top.name in ("resource", "data"):
            label = re.sub(r"\W", "_", top.lines[0].rsplit('"', 2)[-2])  # resource "type" "NAME" {
            eligible.extend((entry, value, label) for path, body in _bodies([top])
                            if not _LITERAL_BLOCKS.intersection(path)
                            for entry in body if (value := _literal(entry)) is not None)
    locals_: list[_Entry] = []
    for entry, value, label in [e for e in eligible if rng.random() < 0.4] or eligible[:1]:
        if rng.random() < 0.3:
            name, n = f"{label}_{entry.name}", 1
            while name in taken:
                n += 1
                name = f"{label}_{entry.name}_{n}"
            taken.add(name)
            locals_.append(_Entry("attribute", [f"  {name} = {value}\n"]))
            new = f"local.{name}"
        elif value in ("true", "false"):
            new = "!false" if value == "true" else "!true"
        elif _NUMBER.fullmatch(value):
            new = f"{value} + 0"
        else:
            new = '"${' + value + '}"'
        entry.lines = [f"{entry.indent}{entry.name} = {new}\n"]
    if locals_:
        entries.extend([_Entry("other", ["\n"]), _Entry("block", ["locals {\n"], locals_, "}\n")])


# -- the kinds ----------------------------------------------------------------------------------------------------
def _per_platform(kubernetes: Apply, terraform: Apply) -> Apply:
    return lambda item_input, rng: (kubernetes if item_input["platform"] == "kubernetes" else terraform)(
        item_input, rng)


def _text(edit: Callable[[str, random.Random], str]) -> Apply:
    def apply(item_input: Input, rng: random.Random) -> Input:
        item_input["text"] = edit(item_input["text"], rng)
        return item_input

    return apply


def _hcl_layout_and_indent(item_input: Input, rng: random.Random) -> Input:
    _on_hcl(_hcl_layout)(item_input, rng)
    item_input["text"] = _hcl_reindent(item_input["text"])
    return item_input


REWRITES = (
    Rewrite("key_order", "YAML mapping keys and Terraform block attributes in another order",
            _per_platform(_on_nodes(_yaml_key_order), _on_hcl(_hcl_key_order))),
    Rewrite("comments", "comment lines and trailing comments of neutral text",
            _per_platform(_text(_yaml_comments), _on_hcl(_hcl_comments))),
    Rewrite("layout", "4-space indentation, other list styles; HCL: aligned '=', blank lines",
            _per_platform(_on_nodes(_yaml_layout), _hcl_layout_and_indent)),
    Rewrite("quoting", "YAML string scalars re-quoted where every schema reads the same string",
            _on_nodes(_yaml_quoting), applies=_is("kubernetes")),
    Rewrite("anchors", "repeated YAML mappings and lists written as anchors and aliases", _on_nodes(_yaml_anchors),
            applies=has_repeats),
    Rewrite("equivalent_expressions", "Terraform literals as expressions of the same value (!false, \"${\"x\"}\", "
            "N + 0, local.NAME)", _on_hcl(_hcl_expressions), applies=_is("terraform")),
)


# -- the check ----------------------------------------------------------------------------------------------------
def rewrite_problems(env: Environment, pairs: Sequence[tuple[Item, Item]]) -> list[str | None]:
    """For each (clean item, rewritten item): why the rewrite may not keep the label, or None."""
    from security_verifiers.core.errors import InfraError
    from security_verifiers.engines.oracle import get_oracle
    from security_verifiers.envs.config_audit.baselines import ReferenceBaseline, context_of

    if not pairs:
        return []
    results = get_oracle().scan_many([(new.input["platform"], new.input["text"], context_of(new)) for _, new in pairs])
    clean = {item.id: item for item, _ in pairs}
    reference = ReferenceBaseline()

    def transcript(item: Item) -> Transcript:
        return Transcript(messages=[Message(role="assistant", content=reference.answer(item, []))])

    clean_scores = dict(zip(clean, env.score_many(list(clean.values()), [transcript(i) for i in clean.values()]),
                            strict=True))
    rewritten = [new for _, new in pairs]
    scores = env.score_many(rewritten, [transcript(i) for i in rewritten])
    problems: list[str | None] = []
    for (item, _), result, score in zip(pairs, results, scores, strict=True):
        target = {(f["rule_id"], f["resource"]) for f in item.target["findings"]}
        before = clean_scores[item.id]
        if result.engine_error is not None or result.parse_error is not None:
            problems.append(f"the rewritten file cannot be judged: {result.engine_error or result.parse_error}")
        elif not result.valid:
            problems.append(f"the rewritten file is not valid: {result.validation_errors[:3]}")
        elif result.keys != target:
            more, fewer = sorted(result.keys - target), sorted(target - result.keys)
            problems.append(f"the oracle finds {len(more)} more {more[:3]} and {len(fewer)} fewer {fewer[:3]}")
        elif isinstance(score, InfraError) or isinstance(before, InfraError):
            failure = score if isinstance(score, InfraError) else before
            problems.append(f"the reference answer cannot be scored: {failure}")
        elif (score.reward, score.components) != (before.reward, before.components):
            problems.append(f"the reference answer earns {score.reward:.4f} {score.components} instead of "
                            f"{before.reward:.4f} {before.components}")
        else:
            problems.append(None)
    return problems
