"""One vocabulary of infrastructure errors, attributed at each boundary.

A failed rollout is data: the runner records its :class:`ErrorKind` and message and leaves the
reward empty, so the failure never looks like a model's wrong answer (a reward of 0). Code at a
boundary wraps its work in :func:`boundary`, which turns any exception into an :class:`InfraError`
carrying the kind of that boundary.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum


class ErrorKind(StrEnum):
    PROVIDER = "provider"  # the model endpoint failed (HTTP error, connection, bad response)
    TIMEOUT = "timeout"  # a request or tool call exceeded its time limit
    TOOL = "tool"  # a tool (scanner, policy engine) crashed
    SANDBOX = "sandbox"  # the sandbox could not start or run
    SCORER = "scorer"  # the scorer itself failed: a bug or a broken checker, never the model's fault


class InfraError(Exception):
    """An infrastructure failure, recorded with the rollout and kept out of the model's score."""

    def __init__(self, kind: ErrorKind, message: str) -> None:
        super().__init__(f"{kind.value}: {message}")
        self.kind = kind
        self.message = message

    def __reduce__(self) -> tuple[type[InfraError], tuple[ErrorKind, str]]:
        """Pickle as (kind, message): errors come back from scoring worker processes."""
        return (InfraError, (self.kind, self.message))


@contextmanager
def boundary(kind: ErrorKind) -> Iterator[None]:
    """Attribute any exception raised inside to ``kind`` (timeouts keep their own kind)."""
    try:
        yield
    except InfraError:
        raise
    except TimeoutError as err:
        raise InfraError(ErrorKind.TIMEOUT, str(err) or "timed out") from err
    except Exception as err:  # noqa: BLE001 - this is the one place that classifies them
        raise InfraError(kind, f"{type(err).__name__}: {err}") from err


class ConfigError(ValueError):
    """A user-facing configuration problem (unknown option, bad value); the CLI prints it and exits 2."""


class DatasetError(ValueError):
    """A dataset that cannot be trusted: a malformed file, a hash mismatch, an unknown split."""


class EngineUnavailable(RuntimeError):
    """An executable checker (policy engine, scanner, sandbox) cannot be loaded or started.

    A reward computed without one of its checkers is a different reward, so this is never caught and
    replaced by a stand-in: a run that needs the checker stops with this error."""
