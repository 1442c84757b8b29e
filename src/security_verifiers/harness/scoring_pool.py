"""Scoring in worker processes, under per-rollout time and memory limits enforced from outside.

E2's scorer re-runs three policy engines (Rego, Checkov, semgrep) plus schema validation on every original
and patched file: pure-Python work that holds the GIL, so a scoring *thread* shares one core with the policy
and the runner, and no timeout in that process could stop it. A :class:`ScorerPool` gives it processes of its
own (:class:`~security_verifiers.core.workers.LimitedWorker`):

* each worker builds its own copy of the environment from (class, config), once, and loads its checkers
  before the first batch (``load_checkers()`` loads and names every engine), while the main process starts
  playing episodes;
* a batch goes to a worker as (items, transcripts) and comes back as one ``Score`` or ``InfraError`` per
  rollout: the same scorer as in-process, only elsewhere;
* the batch runs under the environment's :meth:`~Environment.scoring_limits`: the time limit of one rollout
  plus a sixteenth of it per other rollout, and the memory limit for the worker. A batch that runs past them,
  kills its worker, or lets an exception escape ``score_many`` is re-scored **one rollout at a time**, each with
  the full limits, so one rollout's failure never touches the others of its batch;
* a rollout that runs past the limits alone is the model's failure, scored by
  :meth:`~Environment.score_over_limit` (E2: its patch is invalid, its findings still count). Only when the
  item cannot be scored within the limits even without the reply's content (that method ran past them too,
  then an empty reply) is it an infrastructure error: then the item, not the reply, is the problem;
* workers ignore Ctrl-C (the runner decides how to stop) and exit on their own when the parent process is
  gone, so a killed run leaves no orphan scorers behind; a killed or dead worker is replaced.

A built-in baseline that does the scorer's kind of work (E2's autofix audits every file with the engines and
re-parses it after every fix) answers in these workers too (:func:`in_workers`): the driver then only plays the
episodes and writes the records, and the baseline's CPU is spread over the workers with the scoring instead of
holding the driver's one core (on two cores, E2's autofix run was bound by that core).
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import queue
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from security_verifiers.core.errors import ConfigError, ErrorKind, InfraError, boundary
from security_verifiers.core.types import Completion, Item, Message, Score, Transcript
from security_verifiers.core.workers import (
    LimitedWorker,
    LimitExceeded,
    WorkerLimits,
    WorkerRaised,
    WorkerStartFailed,
)
from security_verifiers.envs.base import Environment

#: A batch of n rollouts may take the time limit of one plus this fraction of it for each other rollout before
#: it is re-scored rollout by rollout (64 rollouts: 4.9 times the limit). It only decides when to look closer:
#: the verdict "over the limit" is given to a rollout scored alone, with the full limit.
BATCH_TIME_FRACTION = 1 / 16


def _init_scorer(env_class: type[Environment], config: dict[str, Any]) -> Environment:
    env = env_class.from_options(config)
    env.load_checkers()  # load the checkers now, not inside the first batch
    return env


def _score_many(env: Environment, items: list[Item], transcripts: list[Transcript]) -> list[Score | InfraError]:
    scores = env.score_many(items, transcripts)
    if len(scores) != len(items):
        raise InfraError(ErrorKind.SCORER, "score_many returned the wrong number of scores")
    return scores


def _score_over_limit(env: Environment, item: Item, transcript: Transcript, reason: str) -> Score:
    return env.score_over_limit(item, transcript, reason)


#: The baselines a worker process has built, by spec (``baseline:autofix``): built once, at their first turn.
_WORKER_POLICIES: dict[str, Any] = {}


def _respond(env: Environment, spec: str, item: Item, messages: list[Message], tools: list[dict[str, Any]] | None,
             sample: int) -> Completion:
    """One turn of the baseline ``spec`` in a worker; a failure is attributed as the driver attributes a policy's
    (``provider``), so a baseline answering here fails as it would in the driver."""
    from security_verifiers.harness.policies import resolve_policy

    with boundary(ErrorKind.PROVIDER):
        policy = _WORKER_POLICIES.get(spec)
        if policy is None:
            policy = _WORKER_POLICIES[spec] = resolve_policy(spec, env)
        completion: Completion = asyncio.run(policy.respond(item, messages, tools, sample))
        return completion


class InWorkers:
    """A built-in baseline whose turns are answered by a pool's workers (:func:`in_workers`): the same policy, by
    the same name, built there from its spec; to the runner it is the policy itself."""

    def __init__(self, policy: Any, pool: BatchScorer) -> None:
        self.inner, self.pool = policy, pool
        self.name: str = policy.name
        self.spec = f"baseline:{policy.name}"

    def describe(self) -> dict[str, Any]:
        described: dict[str, Any] = self.inner.describe()
        return described

    async def respond(self, item: Item, messages: list[Message], tools: list[dict[str, Any]] | None,
                      sample: int) -> Completion:
        return await self.pool.respond(self.spec, item, messages, tools, sample)


def in_workers(policy: Any, pool: BatchScorer | None) -> Any:
    """``policy`` answered in ``pool``'s workers when it is a built-in baseline that asks for it (a class attribute
    ``runs_in_workers``: a pure function of the item and the conversation, with no ``prepare`` state), else
    ``policy`` itself."""
    if pool is None or not getattr(policy, "runs_in_workers", False):
        return policy
    return InWorkers(policy, pool)


class BatchScorer(Protocol):
    """What the runner scores batches with: this module's :class:`ScorerPool` (worker processes of this machine)
    or :class:`~.ray_pool.RayScorerPool` (actors on a Ray cluster, each holding one such pool)."""

    workers: int

    async def score(self, items: list[Item], transcripts: list[Transcript]) -> list[Score | InfraError]: ...

    def score_blocking(self, items: list[Item], transcripts: list[Transcript]) -> list[Score | InfraError]: ...

    async def respond(self, spec: str, item: Item, messages: list[Message], tools: list[dict[str, Any]] | None,
                      sample: int) -> Completion: ...

    def warm_up(self) -> None: ...

    def close(self) -> None: ...


class ScorerPool:
    """``workers`` processes, each holding a warm copy of ``env``'s scorer.

    Call :meth:`close` when done. The environment class must be importable by name (a module-level class),
    since workers are spawned."""

    def __init__(self, env: Environment, workers: int) -> None:
        if workers < 1:
            raise ValueError("a scorer pool needs at least one worker")
        self.workers = workers
        self.limits: WorkerLimits = env.scoring_limits()
        initargs = (type(env), env.config.model_dump(mode="json"))
        self._slots = [LimitedWorker(_init_scorer, initargs, ErrorKind.SCORER) for _ in range(workers)]
        self._idle: queue.Queue[LimitedWorker] = queue.Queue()
        for slot in self._slots:
            self._idle.put(slot)

    def warm_up(self) -> None:
        """Start every worker now (they load their engines in the background)."""
        for slot in self._slots:
            slot.start()

    def pids(self) -> list[int]:
        """Process ids of the running workers."""
        return [pid for pid in (slot.pid for slot in self._slots) if pid is not None]

    async def score(self, items: list[Item], transcripts: list[Transcript]) -> list[Score | InfraError]:
        """Score one batch in a worker. Never raises for a failure of the worker: a rollout that cannot be
        scored gets a scorer error, and only that rollout."""
        return await asyncio.to_thread(self._score_on_idle_worker, items, transcripts)

    def score_blocking(self, items: list[Item], transcripts: list[Transcript]) -> list[Score | InfraError]:
        """:meth:`score` for callers without an event loop (a trainer's reward function)."""
        return self._score_on_idle_worker(items, transcripts)

    async def respond(self, spec: str, item: Item, messages: list[Message], tools: list[dict[str, Any]] | None,
                      sample: int) -> Completion:
        """One turn of the built-in baseline ``spec`` in a worker (see :func:`in_workers`)."""
        return await asyncio.to_thread(self.respond_blocking, spec, item, messages, tools, sample)

    def respond_blocking(self, spec: str, item: Item, messages: list[Message], tools: list[dict[str, Any]] | None,
                         sample: int) -> Completion:
        """:meth:`respond` without an event loop. Raises the turn's InfraError: ``provider`` for the baseline's own
        failure or one past the worker's limits, ``scorer`` when no worker can start."""
        with self._idle_worker() as slot:
            try:
                completion: Completion = slot.call(_respond, (spec, item, list(messages), tools, sample), self.limits)
            except WorkerRaised as err:
                raise err.error from None
            except LimitExceeded as err:
                raise InfraError(ErrorKind.PROVIDER, f"{spec} ran past the worker's limits: {err.reason}") from None
            except WorkerStartFailed as err:
                raise InfraError(ErrorKind.SCORER, f"the scoring worker could not start: {err}") from None
        return completion

    @contextmanager
    def _idle_worker(self) -> Iterator[LimitedWorker]:
        """A worker no other call is using, given back when the call ends."""
        slot = self._idle.get()
        try:
            yield slot
        finally:
            self._idle.put(slot)

    def _score_on_idle_worker(self, items: list[Item], transcripts: list[Transcript]) -> list[Score | InfraError]:
        with self._idle_worker() as slot:
            return self._score_batch(slot, items, transcripts)

    def _score_batch(self, slot: LimitedWorker, items: list[Item],
                     transcripts: list[Transcript]) -> list[Score | InfraError]:
        n = len(items)
        limits = WorkerLimits(self.limits.time_s * (1 + (n - 1) * BATCH_TIME_FRACTION), self.limits.memory_mb)
        try:
            return slot.call(_score_many, (items, transcripts), limits)
        except WorkerStartFailed as err:
            return [InfraError(ErrorKind.SCORER, f"the scoring worker could not start: {err}")] * n
        except (LimitExceeded, WorkerRaised) as err:
            if n == 1:
                return [self._judge(slot, items[0], transcripts[0], err)]
        return [self._score_alone(slot, item, transcript) for item, transcript in zip(items, transcripts, strict=True)]

    def _score_alone(self, slot: LimitedWorker, item: Item, transcript: Transcript) -> Score | InfraError:
        try:
            return slot.call(_score_many, ([item], [transcript]), self.limits)[0]
        except (LimitExceeded, WorkerRaised, WorkerStartFailed) as err:
            return self._judge(slot, item, transcript, err)

    def _judge(self, slot: LimitedWorker, item: Item, transcript: Transcript,
               err: LimitExceeded | WorkerRaised | WorkerStartFailed) -> Score | InfraError:
        """The verdict on one rollout whose scoring failed alone."""
        if isinstance(err, WorkerStartFailed):
            return InfraError(ErrorKind.SCORER, f"the scoring worker could not start: {err}")
        if isinstance(err, WorkerRaised):  # the scorer raised on this rollout: a bug or a broken checker
            return err.error
        reason = f"scoring exceeded its limits: {err.reason}"
        # The model's failure, unless the item cannot be scored within the limits without the reply's content.
        last = ""
        for probe in (transcript, Transcript(messages=[])):
            try:
                score: Score = slot.call(_score_over_limit, (item, probe, reason), self.limits)
            except LimitExceeded as again:
                last = again.reason
                continue
            except WorkerRaised as raised:
                return raised.error
            except WorkerStartFailed as failed:
                return InfraError(ErrorKind.SCORER, f"the scoring worker could not start: {failed}")
            if probe is transcript:
                return score
            # even reading the reply runs past the limits: it is scored as an empty reply, saying why
            return score.model_copy(update={"parse_error": f"{reason} (the reply is scored as empty)"})
        return InfraError(ErrorKind.SCORER, f"scoring {item.id} exceeds the limits ({self.limits.describe()}) "
                          f"even without the reply's content: {last}")

    def close(self) -> None:
        for slot in self._slots:
            slot.close()


def make_pool(env: Environment, executor: str = "local", workers: int | None = None,
              address: str | None = None) -> BatchScorer | None:
    """The scorers of a run, an RL stage or a bench: ``local``, ``workers`` processes of this machine (default: the
    environment's ``score_workers``; None when that is 0, the scorer then runs in the caller's process); ``ray``,
    ``workers`` actors on the Ray cluster at ``address`` (:mod:`.ray_pool`; default: one per CPU of the cluster)."""
    if executor == "ray":
        from security_verifiers.harness.ray_pool import RayScorerPool

        return RayScorerPool(env, ScorerPool, workers, address)
    if executor != "local":
        raise ValueError(f"unknown executor {executor!r} (local or ray)")
    n = env.score_workers if workers is None else workers
    return ScorerPool(env, n) if n > 0 else None


#: For hosts that take no flag of ours (the verifiers and Inspect adapters): ``SV_EXECUTOR=ray`` scores on the Ray
#: cluster that ``RAY_ADDRESS`` names (Ray's own variable), as ``--executor ray`` does.
EXECUTOR_VARIABLE = "SV_EXECUTOR"

_SHARED: dict[str, BatchScorer] = {}
_SHARED_LOCK = threading.Lock()


def shared_pool(env: Environment) -> BatchScorer | None:
    """The process-wide pool that scores ``env``'s rollouts for hosts that hand over one rollout at a time (the
    verifiers and Inspect adapters): ``env.score_workers`` processes, as ``sv eval`` starts by default, under the
    same per-rollout limits; None for an environment whose scorer runs in-process (``score_workers`` 0). With
    ``SV_EXECUTOR=ray``, actors on the Ray cluster instead (:func:`make_pool`), for every environment. One pool
    per environment class and config, started on first use and closed when the host exits."""
    executor = os.environ.get(EXECUTOR_VARIABLE, "local").strip().lower() or "local"
    if executor not in ("local", "ray"):
        raise ConfigError(f"{EXECUTOR_VARIABLE}={executor!r}: give local or ray")
    if executor == "local" and env.score_workers < 1:
        return None
    key = json.dumps([type(env).__module__, type(env).__qualname__, env.config.model_dump(mode="json")],
                     sort_keys=True, default=str)
    with _SHARED_LOCK:
        pool = _SHARED.get(key)
        if pool is None:
            if not _SHARED:
                atexit.register(_close_shared)
            pool = make_pool(env, executor)
            assert pool is not None  # local with score_workers >= 1, or ray
            _SHARED[key] = pool
            pool.warm_up()
        return pool


def _close_shared() -> None:
    with _SHARED_LOCK:
        pools = list(_SHARED.values())
        _SHARED.clear()
    for pool in pools:
        pool.close()
