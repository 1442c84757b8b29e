"""Progress of long builds (``sv data build``), reported from deep inside a generator without threading a
callback through every environment's ``generate``.

The command opens :func:`progress_to` around the build; a generator calls :func:`advance` as work gets done
(config-audit per batch of scanned files, code-repair per batch of self-checked programs). On a terminal that is a
rich progress bar on stderr; off one (a log file, CI) a line every ``interval_s`` seconds, so a build of minutes
is never silent and a quick one prints nothing. Without an open :func:`progress_to`, :func:`advance` does nothing:
library callers and tests pay nothing for it.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TextIO

#: The open report's sink: ``(done, total, what)``.
_CURRENT: ContextVar[Callable[[int, int, str], None] | None] = ContextVar("sv_progress", default=None)
LINE_INTERVAL_S = 10.0


def advance(done: int, total: int, what: str = "") -> None:
    """Say that ``done`` of ``total`` units of the current build are done (``what``: the step, e.g. "scanning")."""
    sink = _CURRENT.get()
    if sink is not None:
        sink(done, total, what)


@contextmanager
def progress_to(label: str, *, stream: TextIO | None = None, interval_s: float = LINE_INTERVAL_S,
                terminal: bool | None = None) -> Iterator[None]:
    """Report :func:`advance` calls made inside this block under ``label``."""
    stream = stream if stream is not None else sys.stderr
    is_terminal = stream.isatty() if terminal is None else terminal
    start = time.monotonic()
    if is_terminal:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        bar = Progress(TextColumn(label), TextColumn("{task.fields[what]}"), BarColumn(), MofNCompleteColumn(),
                       TimeElapsedColumn(), console=Console(file=stream, force_terminal=True), transient=True)
        task = bar.add_task(label, total=None, what="")

        def show(done: int, total: int, what: str) -> None:
            bar.update(task, completed=done, total=total, what=what)

        token = _CURRENT.set(show)
        bar.start()
        try:
            yield
        finally:
            bar.stop()
            _CURRENT.reset(token)
        return
    last = [start]

    def line(done: int, total: int, what: str) -> None:
        now = time.monotonic()
        if now - last[0] >= interval_s:
            last[0] = now
            step = f" {what}" if what else ""
            print(f"{label}:{step} {done}/{total} ({done / max(total, 1):.0%}) after {now - start:.0f}s",
                  file=stream, flush=True)

    token = _CURRENT.set(line)
    try:
        yield
    finally:
        _CURRENT.reset(token)
