"""What an import of a user's own files reports: the files skipped (not data to import) and the problems
(files or rows that are data but cannot be read), each with where and why.

An import never drops anything silently and never stops at the first broken row of a multi-gigabyte
capture: it leaves the unreadable part out, says so, and lets ``--strict`` turn any problem into a failure.
The log of problems is bounded (the first :data:`KEEP` in full, the rest counted) so that a file broken on
every line does not make an import's memory grow with its length.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from security_verifiers.core.errors import ConfigError

#: Problems kept in full; the rest are counted per file.
KEEP = 100


@dataclass(frozen=True)
class Problem:
    """A file or row left out because it cannot be read. ``line`` is 1-based, ``None`` for a whole file."""

    file: str
    line: int | None
    reason: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.reason}" if self.line is not None else f"{self.file}: {self.reason}"


@dataclass
class ProblemLog:
    """The problems of one import: the first ``keep`` in full and the number of all of them, per file."""

    keep: int = KEEP
    shown: list[Problem] = field(default_factory=list)
    by_file: Counter[str] = field(default_factory=Counter)

    def add(self, problem: Problem) -> None:
        if len(self.shown) < self.keep:
            self.shown.append(problem)
        self.by_file[problem.file] += 1

    @property
    def total(self) -> int:
        return sum(self.by_file.values())

    def __bool__(self) -> bool:
        return self.total > 0


@dataclass(frozen=True)
class Argument:
    """One command-line argument of an importer, exactly as ``argparse``'s ``add_argument`` takes it (a
    positional when ``flags`` is one bare name). The environment declares it; the CLI adds it."""

    flags: tuple[str, ...]
    options: dict[str, Any] = field(default_factory=dict)


class ImportProgress(Protocol):
    """How an importer shows its progress: a bar on stderr under ``sv data import``, nothing with ``--quiet`` or
    in a test."""

    def begin(self, description: str, total: float | None = None, **fields: Any) -> None:
        """Start a new stage (a new bar); ``fields`` are the values of the importer's extra columns."""

    def update(self, completed: float | None = None, **fields: Any) -> None:
        """Move the current stage's bar."""

    def say(self, line: str) -> None:
        """A line of progress on stderr (none with ``--quiet``)."""


@dataclass(frozen=True)
class ImportSummary:
    """What an import read, once its items are written: the count, the problems (what ``--strict`` fails on),
    the lines for stderr (what was skipped and why, the problems, one line of totals) and the counts that go into
    the JSON line on stdout."""

    n: int
    problems: int
    lines: list[str]
    counts: dict[str, int] = field(default_factory=dict)


@dataclass
class ImportRun:
    """An import under way: its items (a list, or a generator read once by the writer, so that a capture of
    millions of rows streams through in constant memory) and, called once they are all written, its summary."""

    items: Iterable[Any]
    summary: Callable[[], ImportSummary]


@dataclass(frozen=True)
class Importer:
    """How ``sv data import ENV`` reads a user's own files into the environment's items: the command's help,
    its arguments beyond the common ``--out``, ``--split``, ``--strict`` and ``--quiet``, the extra columns of
    its progress bar, and ``run``, which takes the parsed arguments (by name) and the progress to report to.
    Declared by the environment (:meth:`~security_verifiers.envs.base.Environment.importer`), so the command is
    one generic command and the readers live with the environment that owns their format."""

    help: str
    description: str
    arguments: tuple[Argument, ...]
    run: Callable[[dict[str, Any], ImportProgress], ImportRun]
    progress_columns: tuple[str, ...] = ()
    #: Keep the description's line breaks (a table of formats) in ``--help``.
    raw_description: bool = False


def problem_lines(problems: Iterable[Any], total: int, what: str) -> list[str]:
    """The stderr lines listing the problems left out: a count, and each shown problem."""
    shown = list(problems)
    if not total:
        return []
    more = f"; the first {len(shown)} shown" if len(shown) < total else ""
    return [f"{total} {what} could not be read and were left out{more}:", *(f"  {p}" for p in shown)]


def positive_limit(values: dict[str, Any]) -> int | None:
    """``--limit`` checked: ``None`` or a positive count."""
    limit = values.get("limit")
    if limit is not None and limit <= 0:
        raise ConfigError("--limit must be positive")
    return limit


def source_names(paths: list[Path]) -> list[str]:
    """How items cite their files: paths relative to the files' common directory (the same whatever the
    working directory, and distinct for IoT-23's many files named ``conn.log.labeled``)."""
    resolved = [p.resolve() for p in paths]
    if len(set(resolved)) != len(resolved):
        raise ConfigError("a file is given twice")
    common = Path(os.path.commonpath([r.parent for r in resolved]))
    return [r.relative_to(common).as_posix() for r in resolved]
