"""A strict applier of the unified diff a model returns as its patch.

Strict where it matters for scoring: the diff may touch only the given file, its removed and context
lines must match the file exactly, hunks may not overlap, and its size is bounded. Lenient where
models are commonly sloppy but no advantage can be gained: hunk header line counts are recounted
from the hunk body, and a hunk whose stated start line is off is searched for nearby (exact content
only, no fuzz), as ``git apply --recount`` and ``patch`` do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_NO_NEWLINE = "\\ No newline at end of file"
#: A diff larger than this (characters) is rejected: no honest fix of one config needs more.
MAX_DIFF_CHARS = 200_000
#: ... nor more than this many times the original file's length (plus a small allowance).
MAX_DIFF_RATIO = 4.0


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


def parse_diff(diff: str, filename: str) -> list[Hunk]:
    """The hunks of ``diff``, which must address ``filename`` only (``a/``/``b/`` prefixes allowed)."""
    lines = diff.splitlines(keepends=True)
    hunks: list[Hunk] = []
    current: Hunk | None = None
    seen_header = False
    after_old_header = False
    for index, raw in enumerate(lines):
        line = raw.rstrip("\r\n")
        is_old_header = line.startswith("--- ") and index + 1 < len(lines) and lines[index + 1].startswith("+++ ")
        if after_old_header:
            after_old_header = False
            path = _strip_prefix(line[4:])
            if path != filename:
                raise PatchError(f"the patch touches another file ({path!r}); only {filename!r} may be patched")
            continue
        if is_old_header:
            after_old_header = True
            path = _strip_prefix(line[4:])
            if path != filename and path != "/dev/null":
                raise PatchError(f"the patch touches another file ({path!r}); only {filename!r} may be patched")
            if path == "/dev/null":
                raise PatchError("the patch creates the file anew; patch the given file instead")
            if seen_header:
                raise PatchError("the patch has more than one file section")
            seen_header = True
            current = None
            continue
        if line.startswith(("diff ", "index ", "new file", "deleted file", "similarity", "rename ", "old mode",
                            "new mode")):
            if line.startswith(("deleted file", "rename ", "new file")):
                raise PatchError(f"the patch may not {line.split()[0]} files")
            continue
        match = _HUNK.match(line)
        if match:
            current = Hunk(old_start=int(match.group(1)))
            hunks.append(current)
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
    if not hunks:
        raise PatchError("the patch has no hunks")
    return hunks


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


def apply_patch(original: str, diff: str, filename: str) -> str:
    """``original`` with ``diff`` applied; raises :class:`PatchError` when it cannot be applied exactly."""
    if len(diff) > MAX_DIFF_CHARS or len(diff) > MAX_DIFF_RATIO * len(original) + 4000:
        raise PatchError(f"the patch is too large ({len(diff)} characters for a {len(original)}-character file)")
    hunks = parse_diff(diff, filename)
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
