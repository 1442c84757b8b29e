"""``--log-level``: what the libraries under ``sv`` say on stderr, beside ``sv``'s own progress lines.

``sv`` prints what a user needs (progress, summaries, one-line errors) without logging; the log is for looking
underneath: at INFO the OpenAI client names each retry it makes ("Retrying request to ..."), at DEBUG every request
and the engines' own messages.
"""

from __future__ import annotations

import logging
import sys
from typing import TextIO

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
DEFAULT_LEVEL = "WARNING"
#: Chatty at INFO about what is not a user's concern (each HTTP request): kept at WARNING unless DEBUG is asked for.
_QUIET_AT_INFO = ("httpx", "httpcore")


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to ``sys.stderr`` as it is at each record, not as it was when logging was configured: while a rich
    progress bar is shown, ``sys.stderr`` is rich's proxy, which prints the line above the bar instead of through
    it (and a test's captured stderr gets the records too)."""

    @property  # type: ignore[override]
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, _value: TextIO) -> None:
        """``StreamHandler.__init__`` sets a stream; this handler has none of its own."""


def configure_logging(level: str = DEFAULT_LEVEL) -> None:
    """Send log records at ``level`` and above to stderr, one line each with time, level and logger."""
    name = level.upper()
    if name not in LEVELS:
        raise ValueError(f"unknown log level {level!r}; one of {', '.join(LEVELS)}")
    root = logging.getLogger()
    for handler in list(root.handlers):
        if getattr(handler, "_sv", False):
            root.removeHandler(handler)
    handler = _StderrHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s", "%H:%M:%S"))
    handler._sv = True  # type: ignore[attr-defined]  # ours, so a second call replaces it
    # The handler filters too: a logger lowered to listen for something (the retry counter) must not print it.
    handler.setLevel(getattr(logging, name))
    root.addHandler(handler)
    root.setLevel(getattr(logging, name))
    for noisy in _QUIET_AT_INFO:
        logging.getLogger(noisy).setLevel(logging.DEBUG if name == "DEBUG" else logging.WARNING)
