"""A strict applier of the unified diff a model returns as its patch, over a fixed set of files.

Strict where it matters for scoring: the diff may touch only the given files (a file outside the set, a new, a
deleted or a renamed file is a :class:`PatchError`), each file in one section, its removed and context lines
must match the file exactly, hunks may not overlap, and its size is bounded. Lenient where models are commonly
sloppy but no advantage can be gained: hunk header line counts are recounted from the hunk body, a hunk whose
stated start line is off is searched for nearby (exact content only, no fuzz), as ``git apply --recount`` and
``patch`` do, ``a/``/``b/`` prefixes and header timestamps are optional, and with a single file its headers may
be left out altogether.

The messages of a one-file patch (E2's config) read as they always did; those that only a patch over several
files can meet (E3's modules) name the file.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_NO_NEWLINE = "\\ No newline at end of file"
#: Lines of git's extended headers; they are skipped, except those that would create, delete or rename a file.
_GIT_HEADERS = ("diff ", "index ", "new file", "deleted file", "similarity", "rename ", "old mode", "new mode")
#: The git headers of a patch that would create, delete or rename a file, and what it would do.
_FORBIDDEN = {"deleted file": "delete", "rename ": "rename", "new file": "create"}
#: A diff larger than this (characters) is rejected: no honest fix of a task's files needs more.
MAX_DIFF_CHARS = 200_000
#: ... nor more than this many times the files' length (plus a small allowance).
MAX_DIFF_RATIO = 4.0
MIN_DIFF_ALLOWANCE = 4000


class PatchError(ValueError):
    """The patch cannot be applied; the reason is reported in the score's outcome."""


@dataclass
class Hunk:
    old_start: int
    lines: list[tuple[str, str]] = field(default_factory=list)  # (" " | "-" | "+", text with newline)
    no_newline_old: bool = False
    no_newline_new: bool = False

    @property
    def old_lines(self) -> list[str]:
        return [text for op, text in self.lines if op in " -"]

    @property
    def new_lines(self) -> list[str]:
        return [text for op, text in self.lines if op in " +"]


def _strip_prefix(path: str) -> str:
    path = path.split("\t", 1)[0].strip()
    if path.startswith(("a/", "b/")):
        path = path[2:]
    return path


def _only(files: Mapping[str, str]) -> str:
    return ", ".join(repr(name) for name in files)


class _Sections:
    """The hunks of each file, in the order the diff gives them; which files had a ``---``/``+++`` header."""

    def __init__(self, files: Mapping[str, str]) -> None:
        self.files = files
        self.hunks: dict[str, list[Hunk]] = {}
        self.headed: set[str] = set()
        self.current_file: str | None = next(iter(files)) if len(files) == 1 else None

    def old_header(self, path: str) -> None:
        if path not in self.files and path != "/dev/null":
            raise PatchError(f"the patch touches another file ({path!r}); only {_only(self.files)} may be patched")
        if path == "/dev/null":
            raise PatchError("the patch creates the file anew; patch the given file instead")
        if path in self.headed or (len(self.files) == 1 and self.headed):
            raise PatchError("the patch has more than one file section" if len(self.files) == 1
                             else f"the patch has more than one section for {path!r}")
        self.headed.add(path)
        self.current_file = path

    def new_header(self, path: str) -> None:
        if path not in self.files:
            raise PatchError(f"the patch touches another file ({path!r}); only {_only(self.files)} may be patched")
        if path != self.current_file:
            raise PatchError(f"the patch renames {self.current_file!r} to {path!r}; files may not be renamed")

    def new_hunk(self, old_start: int) -> Hunk:
        if self.current_file is None:
            raise PatchError("a hunk before any file header: say which file it patches (--- a/PATH, +++ b/PATH)")
        hunk = Hunk(old_start=old_start)
        self.hunks.setdefault(self.current_file, []).append(hunk)
        return hunk


def parse_diff(diff: str, files: Mapping[str, str]) -> dict[str, list[Hunk]]:
    """The hunks of ``diff`` by file; it may address only the files named in ``files``."""
    lines = diff.splitlines(keepends=True)
    sections = _Sections(files)
    current: Hunk | None = None
    after_old_header = False
    for index, raw in enumerate(lines):
        line = raw.rstrip("\r\n")
        if after_old_header:
            after_old_header = False
            sections.new_header(_strip_prefix(line[4:]))
            continue
        if line.startswith("--- ") and index + 1 < len(lines) and lines[index + 1].startswith("+++ "):
            after_old_header = True
            sections.old_header(_strip_prefix(line[4:]))
            current = None
            continue
        if line.startswith(_GIT_HEADERS):
            forbidden = next((verb for header, verb in _FORBIDDEN.items() if line.startswith(header)), None)
            if forbidden is not None:
                raise PatchError(f"the patch may not {forbidden} files")
            continue
        match = _HUNK.match(line)
        if match:
            current = sections.new_hunk(int(match.group(1)))
            continue
        if current is None:
            if line.strip():
                raise PatchError(f"unexpected line outside a hunk: {line[:80]!r}")
            continue
        if line == _NO_NEWLINE:
            if current.lines and current.lines[-1][0] in " -":
                current.no_newline_old = True
            if current.lines and current.lines[-1][0] in " +":
                current.no_newline_new = True
            continue
        op = line[:1] if line else " "
        if op not in " -+":
            raise PatchError(f"bad line in hunk: {line[:80]!r}")
        current.lines.append((op, line[1:] + "\n"))  # line endings normalised (CRLF diffs apply too)
    if not sections.hunks:
        raise PatchError("the patch has no hunks")
    return sections.hunks


def _find(haystack: list[str], needle: list[str], hint: int, lower: int) -> int:
    """The position of ``needle`` in ``haystack`` at or after ``lower``, nearest to ``hint``; -1 if absent."""
    if not needle:
        return max(lower, min(hint, len(haystack)))
    candidates = range(lower, len(haystack) - len(needle) + 1)
    best = -1
    for pos in sorted(candidates, key=lambda p: abs(p - hint)):
        if haystack[pos: pos + len(needle)] == needle:
            best = pos
            break
    return best


def _apply_hunks(original: str, hunks: list[Hunk]) -> str:
    """``original`` with its ``hunks`` applied in order, each after the previous one (so none overlaps)."""
    source = [line.rstrip("\r\n") + "\n" for line in original.splitlines(keepends=True)]
    had_final_newline = original.endswith("\n") or not original
    out: list[str] = []
    cursor = 0
    final_no_newline = not had_final_newline
    for hunk in hunks:
        old = hunk.old_lines
        if not old and not hunk.new_lines:
            raise PatchError("an empty hunk")
        hint = max(hunk.old_start - 1, 0) if old else hunk.old_start
        pos = _find(source, old, hint, cursor)
        if pos < 0:
            raise PatchError(f"hunk at line {hunk.old_start} does not match the file")
        out.extend(source[cursor:pos])
        out.extend(hunk.new_lines)
        cursor = pos + len(old)
        if cursor >= len(source):
            final_no_newline = hunk.no_newline_new
    out.extend(source[cursor:])
    text = "".join(out)
    if final_no_newline and text.endswith("\n"):
        text = text[:-1]
    return text


def apply_patch_files(files: Mapping[str, str], diff: str) -> dict[str, str]:
    """Every file of ``files`` (path -> text), with ``diff`` applied to those it addresses; raises
    :class:`PatchError` when it cannot be applied exactly, or touches a file outside ``files``."""
    if not files:
        raise ValueError("a patch needs at least one file to apply to")
    size = sum(len(text) for text in files.values())
    if len(diff) > MAX_DIFF_CHARS or len(diff) > MAX_DIFF_RATIO * size + MIN_DIFF_ALLOWANCE:
        of = f"a {size}-character file" if len(files) == 1 else f"{len(files)} files of {size} characters"
        raise PatchError(f"the patch is too large ({len(diff)} characters for {of})")
    hunks = parse_diff(diff, files)
    return {path: _apply_hunks(text, hunks[path]) if path in hunks else text for path, text in files.items()}


def apply_patch(original: str, diff: str, filename: str) -> str:
    """``original`` (the file ``filename``) with ``diff`` applied: a patch that may touch that file only.

    >>> apply_patch("a\\nb\\n", "--- a/f\\n+++ b/f\\n@@ -2 +2 @@\\n-b\\n+c\\n", "f")
    'a\\nc\\n'
    """
    return apply_patch_files({filename: original}, diff)[filename]
