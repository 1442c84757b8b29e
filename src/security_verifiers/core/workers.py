"""A worker process that runs untrusted-input work (scoring a reply, a tool call on a draft) under limits.

A scorer parses and scans text the model wrote. A few KB of it can cost minutes or gigabytes (an alias bomb,
a deep nesting, a pathological input to an engine), and pure-Python engines hold the GIL, so a timeout in a
*thread* of the same process never fires. The limits are therefore enforced from outside, by the parent:

* the work runs in a spawned child process (:class:`LimitedWorker`), warm between calls: the engines load once;
* the parent waits for each call with a deadline and watches the child's resident memory (read from
  ``/proc``: the policy engines reserve hundreds of GB of address space they never touch, so ``RLIMIT_AS`` and
  ``RLIMIT_DATA`` cannot be used); past either limit it kills the child and raises :class:`LimitExceeded`;
  the next call starts a fresh child;
* an exception inside the work comes back as :class:`WorkerRaised` (the child stays up); a child that dies
  (a native crash) is a :class:`LimitExceeded` as well, and a child that cannot start is :class:`WorkerStartFailed`.

Who is to blame is decided by the caller (:mod:`scoring_pool`, the config-audit tools), which knows whether the
input was the model's. Children ignore Ctrl-C (the runner decides how to stop) and exit on their own when the
parent process is gone, so a killed run leaves no orphans behind.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from security_verifiers.core.errors import ErrorKind, InfraError, boundary

#: How often a child checks that its parent is still alive.
_PARENT_POLL_S = 1.0
#: How often the parent checks a running call's memory and deadline.
_WATCH_S = 0.05
#: Seconds a child may take to load its engines before it counts as unable to start.
STARTUP_TIMEOUT_S = 300.0
_PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclass(frozen=True)
class WorkerLimits:
    """The limits of one call: seconds of wall-clock time and MiB of resident memory of the whole child."""

    time_s: float
    memory_mb: int

    def describe(self) -> str:
        return f"{self.time_s:g} s and {self.memory_mb} MiB"


class LimitExceeded(Exception):
    """The call ran past its time or memory limit, or its process died: the child was killed/replaced."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class WorkerRaised(Exception):
    """The work raised; ``error`` is that exception attributed as an :class:`InfraError`. The child is still up."""

    def __init__(self, error: InfraError) -> None:
        super().__init__(str(error))
        self.error = error


class WorkerStartFailed(Exception):
    """The child could not start (an engine that cannot load): independent of any input."""


def _exit_when_orphaned(parent: int) -> None:
    while True:
        time.sleep(_PARENT_POLL_S)
        if os.getppid() != parent:
            os._exit(1)


def _child_main(conn: Connection, init: Callable[..., Any], initargs: tuple[Any, ...], kind: ErrorKind,
                parent: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_exit_when_orphaned, args=(parent,), daemon=True, name="sv-parent-watch").start()
    try:
        state = init(*initargs)
    except BaseException as err:  # noqa: BLE001 - reported to the parent, which decides
        conn.send(("start_failed", f"{type(err).__name__}: {err}"))
        return
    conn.send(("ready", os.getpid()))
    while True:
        try:
            fn, args = conn.recv()
        except EOFError:
            return
        try:
            with boundary(kind):
                result = fn(state, *args)
        except InfraError as err:
            conn.send(("raised", err))
            continue
        try:
            conn.send(("ok", result))
        except Exception as err:  # noqa: BLE001 - e.g. a result that cannot be pickled
            conn.send(("raised", InfraError(kind, f"the result cannot be sent back: {type(err).__name__}: {err}")))


def _rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` in MiB (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/statm") as statm:
            return int(statm.read().split()[1]) * _PAGE / 2**20
    except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
        return 0.0


class LimitedWorker:
    """One restartable child process that runs ``fn(state, *args)`` calls, ``state = init(*initargs)``.

    ``init`` and every ``fn`` must be importable module-level callables (children are spawned: ``fork`` would copy
    the host's threads and its engines' native state mid-flight). Calls are serialised by a lock; a call's
    deadline starts once the child is ready and the call is its own. Thread-safe; blocking (call it in a thread).
    """

    def __init__(self, init: Callable[..., Any], initargs: tuple[Any, ...], kind: ErrorKind) -> None:
        self._init = init
        self._initargs = initargs
        self._kind = kind
        self._lock = threading.Lock()
        self._process: Any = None
        self._conn: Connection | None = None
        self._ready = False
        self._closed = False

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def start(self) -> None:
        """Start the child now if none is running (it loads its engines in the background)."""
        if self._closed:
            raise WorkerStartFailed("the worker was closed")
        if self._process is not None:
            return
        ctx = multiprocessing.get_context("spawn")
        parent_end, child_end = ctx.Pipe(duplex=True)
        process = ctx.Process(target=_child_main, args=(child_end, self._init, self._initargs, self._kind,
                                                        os.getpid()), daemon=True, name="sv-limited-worker")
        process.start()
        child_end.close()
        self._process, self._conn, self._ready = process, parent_end, False

    def _wait_ready(self) -> None:
        self.start()
        if self._ready:
            return
        assert self._conn is not None
        try:
            if not self._conn.poll(STARTUP_TIMEOUT_S):
                self._kill()
                raise WorkerStartFailed(f"the worker did not start within {STARTUP_TIMEOUT_S:g} s")
            status, payload = self._conn.recv()
        except (EOFError, OSError) as err:
            code = self._kill()
            raise WorkerStartFailed(f"the worker died while starting (exit code {code})") from err
        if status != "ready":
            self._kill()
            raise WorkerStartFailed(str(payload))
        self._ready = True

    def call(self, fn: Callable[..., Any], args: tuple[Any, ...], limits: WorkerLimits) -> Any:
        """``fn(state, *args)`` in the child under ``limits``. Raises :class:`LimitExceeded` (the child was killed),
        :class:`WorkerRaised` or :class:`WorkerStartFailed`."""
        with self._lock:
            self._wait_ready()
            assert self._conn is not None and self._process is not None
            try:
                self._conn.send((fn, args))
            except (OSError, ValueError) as err:  # the child died between calls
                code = self._kill()
                raise LimitExceeded(f"the worker process died (exit code {code})") from err
            deadline = time.monotonic() + limits.time_s
            pid = self._process.pid
            while True:
                try:
                    if self._conn.poll(max(0.0, min(_WATCH_S, deadline - time.monotonic()))):
                        status, payload = self._conn.recv()
                        break
                except (EOFError, OSError) as err:
                    code = self._kill()
                    if self._closed:
                        raise WorkerStartFailed("the worker was closed") from err
                    raise LimitExceeded(f"the worker process died (exit code {code}): it crashed or was killed, "
                                        "e.g. for memory") from err
                if _rss_mb(pid) > limits.memory_mb:
                    self._kill()
                    raise LimitExceeded(f"it exceeded the memory limit of {limits.memory_mb} MiB")
                if time.monotonic() >= deadline:
                    self._kill()
                    raise LimitExceeded(f"it exceeded the time limit of {limits.time_s:g} s")
                if self._closed:
                    raise WorkerStartFailed("the worker was closed")
            if status == "raised":
                raise WorkerRaised(payload)
            return payload

    def _kill(self) -> int | None:
        process, conn = self._process, self._conn
        self._process, self._conn, self._ready = None, None, False
        if process is None:
            return None
        if process.is_alive():
            process.kill()
        process.join(5)
        if conn is not None:
            conn.close()
        return process.exitcode

    def close(self) -> None:
        """Kill the child; later calls fail with :class:`WorkerStartFailed`."""
        self._closed = True
        process = self._process
        if process is not None and process.is_alive():
            process.kill()  # a call in flight sees the pipe close and returns; the lock is then free
        with self._lock:
            self._kill()
