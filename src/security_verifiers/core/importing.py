"""What an import of a user's own files reports: the files skipped (not data to import) and the problems
(files or rows that are data but cannot be read), each with where and why.

An import never drops anything silently and never stops at the first broken row of a multi-gigabyte
capture: it leaves the unreadable part out, says so, and lets ``--strict`` turn any problem into a failure.
The log of problems is bounded (the first :data:`KEEP` in full, the rest counted) so that a file broken on
every line does not make an import's memory grow with its length.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

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
