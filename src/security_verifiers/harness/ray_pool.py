"""Scoring on a Ray cluster: ``sv eval ENV --executor ray [--ray-address ADDRESS]``.

The RL frameworks our users run (veRL, OpenRLHF, SkyRL, NeMo-RL) schedule their workers with Ray, so a cluster
they already have can score our rollouts: a run whose scoring outgrows one machine's cores (E2's engines, E3's
sandbox) spreads it over the cluster's. What changes is only *where* a batch is scored:

* each Ray actor holds one :class:`~.scoring_pool.ScorerPool` of one worker process, on its node: the same
  scorer, under the same per-rollout time and memory limits enforced from outside, with the same verdicts on a
  rollout that runs past them. Ray schedules actors; the limits stay ours.
* the driver (the ``sv eval`` process) plays the episodes and writes ``results.jsonl`` as it does with local
  workers: a rollout is written once, when its score comes back, so ``--resume`` is unchanged.
* an actor (or its node) that dies mid-batch loses nothing: Ray restarts it, on another node if it must, and the
  batch is scored again by whichever actor is free; nothing was written for it, so nothing is duplicated. A batch
  that loses its actor :data:`MAX_LOST` times is an infrastructure error for its rollouts, kept out of the score.
* an actor checks its node when it starts (``load_checkers``: E2's engines, E3's sandbox): a node without
  bubblewrap refuses with the environment's own error, raised by :class:`RayScorerPool`'s constructor, not
  turned into a quiet score.

Ray is an optional extra (``pip install 'security-verifiers[ray]'``); nothing here is imported without it.
"""

from __future__ import annotations

import asyncio
import os
import queue
import threading
import time
from collections.abc import Sequence
from typing import Any

from security_verifiers.core.errors import ConfigError, EngineUnavailable, ErrorKind, InfraError
from security_verifiers.core.types import Completion, Item, Message, Score, Transcript
from security_verifiers.envs.base import Environment

#: Times a batch may lose its actor (a killed process, a lost node) before its rollouts are scorer errors.
MAX_LOST = 3
#: How long a batch waits for a free actor, and a lost actor for Ray to restart it.
WAIT_FOR_ACTOR_S = 600.0


def import_ray() -> Any:
    """The ``ray`` module, or a ConfigError that says how to install it."""
    try:
        import ray
    except ImportError as err:
        raise ConfigError("--executor ray needs Ray: pip install 'security-verifiers[ray]' (on every node of the "
                          f"cluster) ({err})") from err
    return ray


def connect(address: str | None) -> Any:
    """Join the cluster at ``address`` (``auto``: the one this machine is part of; None: $RAY_ADDRESS, else a
    local cluster of this machine's cores started for this process)."""
    os.environ.setdefault("RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO", "0")  # Ray's own future default, without its warning
    ray = import_ray()
    if not ray.is_initialized():
        ray.init(address=address or os.environ.get("RAY_ADDRESS") or None, include_dashboard=False,
                 log_to_driver=False, configure_logging=False)
    return ray


class _ScorerActor:
    """One warm scorer on one node: a local pool (``local_pool``, the harness's ``ScorerPool``, handed over by the
    caller so that this module does not import the one that imports it) of one limited worker process."""

    def __init__(self, local_pool: Any, env_class: type[Environment], config: dict[str, Any]) -> None:
        env = env_class.from_options(config)
        env.load_checkers()  # this node can score: its engines load, its sandbox exists (else this raises)
        self.pool = local_pool(env, 1)
        self.pool.warm_up()

    def ready(self) -> tuple[str, int]:
        import socket

        return socket.gethostname(), os.getpid()

    def score(self, items: list[Item], transcripts: list[Transcript]) -> list[Score | InfraError]:
        return self.pool.score_blocking(items, transcripts)

    def respond(self, spec: str, item: Item, messages: list[Message], tools: list[dict[str, Any]] | None,
                sample: int) -> Completion | InfraError:
        """A built-in baseline's turn; its InfraError is returned, not raised (Ray would wrap it in its own)."""
        try:
            completion: Completion = self.pool.respond_blocking(spec, item, messages, tools, sample)
            return completion
        except InfraError as err:
            return err


class RayScorerPool:
    """:class:`~.scoring_pool.ScorerPool`'s interface over ``workers`` Ray actors (see the module docstring), each
    holding a ``local_pool`` of one worker; made by :func:`~.scoring_pool.make_pool`."""

    def __init__(self, env: Environment, local_pool: Any, workers: int | None = None,
                 address: str | None = None) -> None:
        ray = connect(address)
        self._ray = ray
        cpus = int(ray.cluster_resources().get("CPU", 1))
        self.workers = workers if workers else max(1, cpus)
        if self.workers < 1:
            raise ValueError("a scorer pool needs at least one worker")
        actor_class = ray.remote(num_cpus=1, max_restarts=-1, max_task_retries=0)(_ScorerActor)
        initargs = (local_pool, type(env), env.config.model_dump(mode="json"))
        self._actors = [actor_class.remote(*initargs) for _ in range(self.workers)]
        try:  # every actor's node can score: an error here is the node's, named, before anything runs
            self.nodes = ray.get([actor.ready.remote() for actor in self._actors])
        except ray.exceptions.RayActorError as err:
            self.close()
            cause = err.__cause__ or err
            raise EngineUnavailable(f"a Ray node cannot score {env.name}: {cause}") from err
        self._idle: queue.Queue[Any] = queue.Queue()
        for actor in self._actors:
            self._idle.put(actor)
        self.lost = 0  # batches that lost their actor and were scored again
        self._closed = False

    def warm_up(self) -> None:
        """The actors are warm once the constructor returns (it waits for them)."""

    def pids(self) -> list[int]:
        return [pid for _, pid in self.nodes]

    async def score(self, items: list[Item], transcripts: list[Transcript]) -> list[Score | InfraError]:
        return await asyncio.to_thread(self.score_blocking, items, transcripts)

    def score_blocking(self, items: Sequence[Item], transcripts: Sequence[Transcript]) -> list[Score | InfraError]:
        try:
            result: list[Score | InfraError] = self._on_free_actor(
                lambda actor: actor.score.remote(list(items), list(transcripts)), "batch")
        except InfraError as err:  # no actor could score it: each rollout's scorer error
            return [err] * len(items)
        return result

    async def respond(self, spec: str, item: Item, messages: list[Message], tools: list[dict[str, Any]] | None,
                      sample: int) -> Completion:
        """One turn of the built-in baseline ``spec`` on a free actor (see :func:`~.scoring_pool.in_workers`); an
        actor lost during the turn gives the turn to another, as a lost batch is."""
        return await asyncio.to_thread(self.respond_blocking, spec, item, messages, tools, sample)

    def respond_blocking(self, spec: str, item: Item, messages: list[Message], tools: list[dict[str, Any]] | None,
                         sample: int) -> Completion:
        result: Completion | InfraError = self._on_free_actor(
            lambda actor: actor.respond.remote(spec, item, list(messages), tools, sample), "turn")
        if isinstance(result, InfraError):  # the baseline's own failure, returned by the actor
            raise result
        return result

    def _on_free_actor(self, submit: Any, what: str) -> Any:
        """``ray.get(submit(actor))`` on a free actor. An actor lost meanwhile (its process or node died) is left to
        Ray to restart and the work goes to another free actor; after :data:`MAX_LOST` losses, or
        :data:`WAIT_FOR_ACTOR_S` without a free actor, a scorer InfraError is raised."""
        ray = self._ray
        lost = (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError)
        last = ""
        for _ in range(MAX_LOST):
            try:
                actor = self._idle.get(timeout=WAIT_FOR_ACTOR_S)
            except queue.Empty:
                raise InfraError(ErrorKind.SCORER, f"no Ray scorer came back within {WAIT_FOR_ACTOR_S:.0f} s "
                                 f"({last or 'every actor busy or restarting'})") from None
            try:
                result = ray.get(submit(actor))
            except lost as err:
                self.lost += 1
                last = f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
                threading.Thread(target=self._back_when_ready, args=(actor,), daemon=True).start()
                continue
            except BaseException:
                self._idle.put(actor)
                raise
            self._idle.put(actor)
            return result
        raise InfraError(ErrorKind.SCORER, f"the {what} lost its Ray scorer {MAX_LOST} times ({last})")

    def _back_when_ready(self, actor: Any) -> None:
        """Give a lost actor back to the pool once Ray has restarted it (its checks passed again); one that cannot
        be restarted stays out, and the other actors go on."""
        ray = self._ray
        deadline = time.monotonic() + WAIT_FOR_ACTOR_S
        while not self._closed and time.monotonic() < deadline:
            try:
                ray.get(actor.ready.remote(), timeout=30)
            except (ray.exceptions.ActorUnavailableError, ray.exceptions.GetTimeoutError):
                time.sleep(0.2)  # still restarting
                continue
            except ray.exceptions.RayActorError:
                return  # dead for good (out of restarts, or its node cannot take it back)
            self._idle.put(actor)
            return

    def close(self) -> None:
        self._closed = True
        for actor in self._actors:
            try:
                self._ray.kill(actor)
            except Exception:  # noqa: BLE001, S110 - an actor already gone is closed
                pass
