"""Scoring in worker processes, so that a CPU-bound scorer runs on other cores than the policy.

E2's scorer re-runs three policy engines (Rego, Checkov, semgrep) plus schema validation on every original
and patched file: pure-Python work that holds the GIL, so a scoring *thread* shares one core with the policy
and the runner. A :class:`ScorerPool` gives it processes of its own:

* each worker builds its own copy of the environment from (class, config), once, and loads its checkers
  before the first batch (``tool_versions()`` loads and names every engine), while the main process starts
  playing episodes;
* a batch goes to a worker as (items, transcripts) and comes back as one ``Score`` or ``InfraError`` per
  rollout, exactly what :func:`~security_verifiers.harness.episode.score_batch` returns in-process: the same
  scorer, only elsewhere;
* a worker that dies (a C extension aborting, the OOM killer) fails only the batches it held: their
  rollouts are recorded as scorer errors, kept out of the model's score, and the pool is rebuilt;
* workers ignore Ctrl-C (the runner decides how to stop) and exit on their own when the parent process is
  gone, so a killed run leaves no orphan scorers behind.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from security_verifiers.core.errors import ErrorKind, InfraError
from security_verifiers.core.types import Item, Score, Transcript
from security_verifiers.envs.base import Environment
from security_verifiers.harness.episode import score_batch

#: How often a worker checks that its parent is still alive.
_PARENT_POLL_S = 1.0

_WORKER_ENV: Environment | None = None


def _exit_when_orphaned(parent: int) -> None:
    while True:
        time.sleep(_PARENT_POLL_S)
        if os.getppid() != parent:
            os._exit(1)


def _init_worker(env_class: type[Environment], config: dict[str, Any], parent: int) -> None:
    global _WORKER_ENV
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_exit_when_orphaned, args=(parent,), daemon=True, name="sv-parent-watch").start()
    _WORKER_ENV = env_class.from_options(config)
    _WORKER_ENV.tool_versions()  # load the checkers now, not inside the first batch


def _score_in_worker(items: list[Item], transcripts: list[Transcript]) -> list[Score | InfraError]:
    assert _WORKER_ENV is not None, "worker not initialised"
    return score_batch(_WORKER_ENV, items, transcripts)


def _ping() -> int:
    return os.getpid()


class ScorerPool:
    """``workers`` processes, each holding a warm copy of ``env``'s scorer.

    Call :meth:`close` when done. The environment class must be importable
    by name (a module-level class), since workers are started with ``spawn``: ``fork`` would copy the
    host's threads and its engines' native state mid-flight."""

    def __init__(self, env: Environment, workers: int) -> None:
        if workers < 1:
            raise ValueError("a scorer pool needs at least one worker")
        self.workers = workers
        self._initargs = (type(env), env.config.model_dump(mode="json"), os.getpid())
        self._executor = self._start()
        self._generation = 0

    def _start(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_init_worker, initargs=self._initargs)

    def warm_up(self) -> None:
        """Start every worker now (they load their engines in the background)."""
        for _ in range(self.workers):
            self._executor.submit(_ping)

    async def score(self, items: list[Item], transcripts: list[Transcript]) -> list[Score | InfraError]:
        """Score one batch in a worker. Never raises for a failure of the worker: each rollout then gets
        a scorer error."""
        generation = self._generation
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._executor, _score_in_worker, items, transcripts)
        except BrokenProcessPool as err:
            if generation == self._generation:  # the first batch to notice rebuilds the pool
                self._generation += 1
                self._executor.shutdown(wait=False, cancel_futures=True)
                self._executor = self._start()
            return [InfraError(ErrorKind.SCORER, f"scoring worker process died: {err}")] * len(items)
        except Exception as err:  # noqa: BLE001 - e.g. a result that cannot be pickled: still the scorer's
            return [InfraError(ErrorKind.SCORER, f"{type(err).__name__}: {err}")] * len(items)

    def close(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)
