"""How many times the model client retried, for the progress bar and the run's metadata.

The ``openai`` client retries inside one request (408/409/429/5xx, connection errors) and says so only in its log
("Retrying request to ... in ... seconds", at INFO on ``openai._base_client``), so the count is read from there:
a handler on that logger for the length of a run. It lowers that logger's level to INFO while it listens; the
records still reach the user's stderr only at ``--log-level INFO`` (the stderr handler has the level asked for).
"""

from __future__ import annotations

import logging
from types import TracebackType

OPENAI_LOGGER = "openai._base_client"
RETRY_PREFIX = "Retrying request"


class RetryCounter(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.count = 0
        self._logger = logging.getLogger(OPENAI_LOGGER)
        self._level = logging.NOTSET

    def emit(self, record: logging.LogRecord) -> None:
        if isinstance(record.msg, str) and record.msg.startswith(RETRY_PREFIX):
            self.count += 1

    def __enter__(self) -> RetryCounter:
        self._level = self._logger.level
        if self._logger.getEffectiveLevel() > logging.INFO:
            self._logger.setLevel(logging.INFO)
        self._logger.addHandler(self)
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self._logger.removeHandler(self)
        self._logger.setLevel(self._level)
