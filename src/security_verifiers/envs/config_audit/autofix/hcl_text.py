"""Line-level editing of Terraform text: set an attribute, replace a literal, append a block.

No HCL writer is available (``hcl2`` only reads), so fixes edit the text. Block line ranges come from
``parse_terraform``; inside a block, a small scanner tracks bracket depth (ignoring strings, comments and
heredocs) so that a fix can tell a block's own ``enabled = false`` from one in a nested block. Every edit
re-parses lazily; :class:`HclText` keeps the current text and its parsed blocks together.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from security_verifiers.engines.configs import TFBlock, parse_terraform

HEREDOC_RE = re.compile(r"<<-?([A-Za-z_][A-Za-z0-9_]*)\s*$")
HEADER_RE = re.compile(r'^\s*([A-Za-z_][\w-]*)((?:\s+"[^"]*"|\s+[A-Za-z_][\w-]*)*)\s*\{')


@dataclass(frozen=True)
class LineInfo:
    depth: int  # bracket depth ({, [, () at the start of the line
    heredoc: bool  # the line is heredoc body or terminator: opaque text


def scan(lines: list[str]) -> list[LineInfo]:
    """The bracket depth at the start of every line, skipping strings (with ``${}`` interpolation), comments
    and heredoc bodies.

    >>> [i.depth for i in scan(['a {\\n', '  b = "{"\\n', '  c = [1,\\n', '  2]\\n', '}\\n'])]
    [0, 1, 1, 2, 1]
    """
    infos: list[LineInfo] = []
    depth = 0
    stack: list[str | int] = []  # "str" = inside a string; an int = brace count inside ${ }
    heredoc_end: str | None = None
    in_comment = False
    for line in lines:
        if heredoc_end is not None:
            infos.append(LineInfo(depth, True))
            if line.strip() == heredoc_end:
                heredoc_end = None
            continue
        infos.append(LineInfo(depth, False))
        i = 0
        while i < len(line):
            char, top = line[i], stack[-1] if stack else None
            if in_comment:
                if line.startswith("*/", i):
                    in_comment, i = False, i + 1
            elif top == "str":
                if char == "\\":
                    i += 1
                elif char == '"':
                    stack.pop()
                elif line.startswith(("${", "%{"), i):
                    stack.append(0)
                    i += 1
            elif char == '"':
                stack.append("str")
            elif char == "#" or line.startswith("//", i):
                break
            elif line.startswith("/*", i):
                in_comment, i = True, i + 1
            elif line.startswith("<<", i) and (match := HEREDOC_RE.match(line[i:])):
                heredoc_end = match.group(1)
                break
            elif char in "{[(":
                if isinstance(top, int):
                    stack[-1] = top + 1
                else:
                    depth += 1
            elif char in "}])":
                if isinstance(top, int):
                    if top == 0:
                        stack.pop()
                    else:
                        stack[-1] = top - 1
                else:
                    depth -= 1
            i += 1
    return infos


def _span_end(infos: list[LineInfo], start: int, hi: int, depth: int) -> int:
    """The index after the construct starting on line ``start``: the next line back at ``depth`` (or ``hi``)."""
    for k in range(start + 1, hi):
        if infos[k].depth <= depth and not infos[k].heredoc:
            return k
    return hi


@dataclass(frozen=True)
class Span:
    """Lines ``lo`` (inclusive) to ``hi`` (exclusive), 0-based; ``depth`` is the depth of the lines directly
    inside (a block's attributes)."""

    lo: int
    hi: int
    depth: int


class HclText:
    """A Terraform file under edit: the text, its lines, and the parsed blocks of the current text."""

    def __init__(self, text: str) -> None:
        self.text = text if text.endswith("\n") or not text else text + "\n"
        self._blocks: list[TFBlock] | None = None
        self._scanned_text: str | None = None
        self._scanned: tuple[list[str], list[LineInfo]] = ([], [])

    # -- reading --

    @property
    def lines(self) -> list[str]:
        """The lines of the current text (a fresh list: callers edit it)."""
        return list(self._lines_and_infos()[0])

    def _lines_and_infos(self) -> tuple[list[str], list[LineInfo]]:
        """The lines of the current text and their :func:`scan`, computed once per text (every reading method
        asks for them; the scan is pure Python over the whole file). The lists are shared: read them only."""
        if self._scanned_text is not self.text:  # a str is immutable: the same object is the same text
            lines = self.text.splitlines(keepends=True)
            self._scanned_text, self._scanned = self.text, (lines, scan(lines))
        return self._scanned

    def blocks(self) -> list[TFBlock]:
        if self._blocks is None:
            self._blocks = parse_terraform(self.text).blocks
        return self._blocks

    def block(self, address: str) -> TFBlock | None:
        return next((b for b in self.blocks() if b.address == address), None)

    def body(self, block: TFBlock) -> Span:
        """The lines inside a block (the header line is included so that one-line blocks are covered)."""
        infos = self._lines_and_infos()[1]
        return Span(block.start_line - 1, block.end_line, infos[block.start_line - 1].depth + 1)

    def block_text(self, block: TFBlock) -> str:
        return "".join(self._lines_and_infos()[0][block.start_line - 1:block.end_line])

    def sub_blocks(self, span: Span, name: str) -> list[Span]:
        """Nested blocks ``name { ... }`` directly inside ``span``."""
        lines, infos = self._lines_and_infos()
        header = re.compile(rf"^\s*{re.escape(name)}\s*\{{")
        return [Span(i, _span_end(infos, i, span.hi, span.depth), span.depth + 1) for i in range(span.lo + 1, span.hi)
                if infos[i].depth == span.depth and not infos[i].heredoc and header.match(lines[i])]

    def find_attr(self, span: Span, key: str) -> tuple[int, int] | None:
        """The line range of attribute ``key`` directly inside ``span`` (multi-line values included)."""
        lines, infos = self._lines_and_infos()
        pattern = re.compile(rf"^\s*{re.escape(key)}\s*=(?!=)")
        for i in range(span.lo + 1, span.hi):
            if infos[i].depth == span.depth and not infos[i].heredoc and pattern.match(lines[i]):
                return i, _span_end(infos, i, span.hi, span.depth)
        return None

    def enclosing_block(self, index: int) -> tuple[str, list[str]] | None:
        """The top-level block around line ``index``: its keyword and labels (``resource``, [type, name])."""
        lines, infos = self._lines_and_infos()
        for k in range(index, -1, -1):
            if infos[k].depth == 0 and not infos[k].heredoc and (match := HEADER_RE.match(lines[k])):
                return match.group(1), [label.strip('"') for label in match.group(2).split()]
        return None

    # -- writing --

    def restore(self, text: str) -> None:
        """Go back to an earlier text (a fix that broke the parse is undone)."""
        self.text, self._blocks = text, None

    def replace_lines(self, lo: int, hi: int, new: list[str]) -> None:
        lines = self.lines
        lines[lo:hi] = new
        self.text = "".join(lines)
        self._blocks = None

    def set_attr(self, span: Span, key: str, value: str) -> bool:
        """``key = value`` directly inside ``span``: the existing value replaced, else a new line before the ``}``."""
        lines = self.lines
        found = self.find_attr(span, key)
        if found is not None:
            lo, hi = found
            prefix = re.match(rf"^(\s*{re.escape(key)}\s*=\s*)", lines[lo])
            assert prefix is not None
            new = f"{prefix.group(1)}{value}\n"
            if "".join(lines[lo:hi]) == new:
                return False
            self.replace_lines(lo, hi, [new])
            return True
        last = span.hi - 1
        if last == span.lo:  # a one-line block: `x "a" "b" { }` -> open it up
            head, _, tail = lines[last].rpartition("}")
            indent = re.match(r"\s*", lines[last]).group(0)  # type: ignore[union-attr]
            inner = head.rstrip()[head.rstrip().index("{") + 1:].strip() if "{" in head else ""
            opening = head.rstrip()[:head.rstrip().index("{") + 1] if "{" in head else head.rstrip()
            body = [f"{indent}  {inner}\n"] if inner else []
            self.replace_lines(last, last + 1, [opening + "\n", *body, f"{indent}  {key} = {value}\n",
                                                f"{indent}}}{tail.rstrip()}\n"])
            return True
        indent = self._indent(span)
        self.replace_lines(last, last, [f"{indent}{self._aligned(span, key)}= {value}\n"])
        return True

    def _aligned(self, span: Span, key: str) -> str:
        """``key`` padded to the ``=`` column of the attribute just above, as ``terraform fmt`` aligns a run of
        attributes (only when the key fits: a longer key would make fmt re-align the others)."""
        lines, infos = self._lines_and_infos()
        for i in range(span.hi - 2, span.lo, -1):
            if infos[i].heredoc or infos[i].depth != span.depth or not lines[i].strip():
                break
            match = re.match(r"^\s*([\w-]+\s*)=(?!=)", lines[i])
            if match:
                return key.ljust(len(match.group(1))) if len(key) < len(match.group(1)) else key + " "
            break
        return key + " "

    def _indent(self, span: Span) -> str:
        lines, infos = self._lines_and_infos()
        for i in range(span.lo + 1, span.hi - 1):
            if infos[i].depth == span.depth and lines[i].strip() and not infos[i].heredoc:
                return re.match(r"\s*", lines[i]).group(0)  # type: ignore[union-attr]
        closing = re.match(r"\s*", lines[span.hi - 1]).group(0)  # type: ignore[union-attr]
        return closing + "  "

    def sub(self, span: Span, pattern: str | re.Pattern[str], repl: str, skip: list[Span] | None = None) -> bool:
        """``re.sub`` on each line of ``span`` (except the ``skip`` sub-spans); whether anything changed."""
        lines = self.lines
        skipped = {i for s in skip or [] for i in range(s.lo, s.hi)}
        changed = False
        for i in range(span.lo, span.hi):
            if i not in skipped:
                new = re.sub(pattern, repl, lines[i])
                changed = changed or new != lines[i]
                lines[i] = new
        if changed:
            self.text = "".join(lines)
            self._blocks = None
        return changed

    def append(self, snippet: str) -> None:
        """Add a top-level block at the end of the file, after a blank line."""
        base = self.text if self.text.endswith("\n") or not self.text else self.text + "\n"
        self.text = base + ("\n" if base.strip() else "") + snippet.rstrip("\n") + "\n"
        self._blocks = None

    def variable_names(self) -> set[str]:
        return set(re.findall(r'(?m)^\s*variable\s+"([^"]+)"', self.text))

    def add_variable(self, wanted: str, description: str, type_: str = "string") -> str:
        """Append an input ``variable "<name>"`` (no default: the caller must supply it) under a free name."""
        name, taken, n = wanted, self.variable_names(), 2
        while name in taken:
            name, n = f"{wanted}_{n}", n + 1
        self.append(f'variable "{name}" {{\n  description = "{description}"\n  type        = {type_}\n}}\n')
        return name

    def ensure_data(self, type_: str, name: str = "current") -> str:
        """``data.<type_>.<name>``, appending an empty data block when the file has none."""
        if not re.search(rf'(?m)^\s*data\s+"{re.escape(type_)}"\s+"{re.escape(name)}"', self.text):
            self.append(f'data "{type_}" "{name}" {{}}\n')
        return f"data.{type_}.{name}"

    def add_sensitive_variable(self, wanted: str, description: str) -> str:
        """Append ``variable "<name>" { sensitive = true }`` under a free name; the name."""
        name, taken, n = wanted, self.variable_names(), 2
        while name in taken:
            name, n = f"{wanted}_{n}", n + 1
        self.append(f'variable "{name}" {{\n  description = "{description}"\n  type        = string\n'
                    f"  sensitive   = true\n}}\n")
        return name
