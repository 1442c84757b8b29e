"""A minimal Terraform syntax tree and its canonical renderer.

Bases are built as :class:`Block` trees rather than text so the mutation operators can set, remove
or replace one attribute or one nested block without regular expressions, and the renderer writes
every file in the same canonical style: two-space indent, one ``key = value`` per line, nested blocks
``name {`` ... ``}``, a blank line between top-level blocks. The same tree always renders to the same
bytes.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

INDENT = "  "


@dataclass(frozen=True)
class Raw:
    """An expression written verbatim: a reference (``aws_kms_key.main.arn``), a call, a heredoc."""

    text: str


def ref(text: str) -> Raw:
    return Raw(text)


@dataclass(frozen=True)
class Call:
    """A function call over one structured argument, rendered like any value: ``jsonencode({ ... })`` (an inline
    IAM policy whose objects and lists the mutation operators can still edit)."""

    name: str
    arg: Any


@dataclass
class Block:
    """``type "label" ... { body }``; ``body`` holds ``(key, value)`` attributes and nested blocks, in order."""

    type: str
    labels: tuple[str, ...] = ()
    body: list[tuple[str, Any] | Block] = field(default_factory=list)

    # --- reading -----------------------------------------------------------------------------------
    @property
    def address(self) -> str:
        """The Terraform address of a top-level resource or data block (``type.name``, ``data.type.name``)."""
        if self.type == "resource":
            return f"{self.labels[0]}.{self.labels[1]}"
        if self.type == "data":
            return f"data.{self.labels[0]}.{self.labels[1]}"
        return ".".join((self.type, *self.labels))

    @property
    def rtype(self) -> str:
        """The resource type of a resource/data block (``aws_s3_bucket``)."""
        return self.labels[0] if self.labels else ""

    def get(self, key: str, default: Any = None) -> Any:
        for entry in self.body:
            if isinstance(entry, tuple) and entry[0] == key:
                return entry[1]
        return default

    def has(self, key: str) -> bool:
        return any(isinstance(e, tuple) and e[0] == key for e in self.body)

    def blocks(self, type_: str | None = None) -> list[Block]:
        return [e for e in self.body if isinstance(e, Block) and (type_ is None or e.type == type_)]

    # --- editing -----------------------------------------------------------------------------------
    def set(self, key: str, value: Any, after: str | None = None) -> None:
        """Replace the attribute in place, or insert it (after ``after`` when given, else after the last attribute)."""
        for i, entry in enumerate(self.body):
            if isinstance(entry, tuple) and entry[0] == key:
                self.body[i] = (key, value)
                return
        index = self._insert_index(after)
        self.body.insert(index, (key, value))

    def _insert_index(self, after: str | None) -> int:
        if after is not None:
            for i, entry in enumerate(self.body):
                if isinstance(entry, tuple) and entry[0] == after:
                    return i + 1
        last = -1
        for i, entry in enumerate(self.body):
            if isinstance(entry, tuple):
                last = i
        return last + 1

    def remove(self, key: str) -> bool:
        before = len(self.body)
        self.body = [e for e in self.body if not (isinstance(e, tuple) and e[0] == key)]
        return len(self.body) != before

    def remove_block(self, block: Block) -> None:
        self.body = [e for e in self.body if e is not block]

    def copy(self) -> Block:
        return copy.deepcopy(self)


def _literal(value: Any) -> str:
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    raise TypeError(f"cannot render {type(value).__name__} inline")


def _key(key: str) -> str:
    return key if key.replace("_", "").replace("-", "").isalnum() and not key[0].isdigit() else json.dumps(key)


def _render_value(value: Any, depth: int) -> str:
    if isinstance(value, Call):
        return f"{value.name}({_render_value(value.arg, depth)})"
    if isinstance(value, list | tuple) and any(isinstance(v, dict | list | tuple | Call) for v in value):
        pad = INDENT * (depth + 1)
        inner = "".join(f"{pad}{_render_value(v, depth + 1)},\n" for v in value)
        return "[\n" + inner + INDENT * depth + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        pad = INDENT * (depth + 1)
        inner = "\n".join(f"{pad}{_key(k)} = {_render_value(v, depth + 1)}" for k, v in value.items())
        return "{\n" + inner + "\n" + INDENT * depth + "}"
    return _literal(value)


def _render_block(block: Block, depth: int) -> list[str]:
    pad = INDENT * depth
    head = " ".join([block.type, *(json.dumps(label) for label in block.labels)])
    if not block.body:
        return [f"{pad}{head} {{}}"]
    lines = [f"{pad}{head} {{"]
    for entry in block.body:
        if isinstance(entry, Block):
            lines.extend(_render_block(entry, depth + 1))
        else:
            key, value = entry
            lines.append(f"{pad}{INDENT}{key} = {_render_value(value, depth + 1)}")
    lines.append(f"{pad}}}")
    return lines


def render_hcl(blocks: list[Block]) -> str:
    """The canonical text of a file: top-level blocks separated by one blank line, trailing newline."""
    return "\n\n".join("\n".join(_render_block(b, 0)) for b in blocks) + "\n"


def heredoc(text: str, marker: str = "EOT") -> Raw:
    """A ``<<-EOT`` heredoc (the indented form, so its closing marker may sit at any indent)."""
    body = text if text.endswith("\n") else text + "\n"
    return Raw(f"<<-{marker}\n{body}{marker}")
