"""Scheduling a run's episodes: players that talk to the policy, scorers that score what was played.

Scoring never runs in the event loop: a scorer is CPU work (a policy engine, or parsing a 200 KB reply), and in
the loop it would stall every episode in flight. It runs in a thread (or a worker process of a
:class:`ScorerPool`) in batches, so the cost of handing work over is shared by many rollouts. Played rollouts
wait for scoring in a bounded backlog: players pause when it is full, so memory stays bounded and little
played-but-unscored work is lost if the run is killed.
"""

from __future__ import annotations

import asyncio
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field

from security_verifiers.core.errors import InfraError
from security_verifiers.core.types import Item, ParseStatus, RolloutRecord, Score, Transcript, Usage
from security_verifiers.envs.base import Environment
from security_verifiers.harness.episode import apply_score, play_episode, score_batch
from security_verifiers.harness.scoring_pool import BatchScorer
from security_verifiers.models.base import Policy

#: Rollouts scored together in the scoring thread when the environment sets no batch size of its own.
THREAD_SCORE_BATCH = 64
#: Rollouts that must be done before a high error rate stops the run early (fewer say little).
EARLY_STOP_MIN = 20


@dataclass
class Tally:
    """What finished this session: counts, errors by kind, usage, and whether the error rate stopped the run."""

    max_error_rate: float
    finished: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    usage: Usage = field(default_factory=Usage)
    stopped_early: bool = False
    #: Scored rollouts whose reply could not be read as an answer (they score the minimum; not errors).
    unparseable: int = 0

    def add(self, record: RolloutRecord) -> None:
        self.finished += 1
        self.usage = self.usage + record.usage
        if record.error is None and record.parse_status not in (None, ParseStatus.OK):
            self.unparseable += 1
        if record.error is not None:
            self.errors[record.error.kind] += 1
            if self.finished >= EARLY_STOP_MIN and self.error_count / self.finished > self.max_error_rate:
                self.stopped_early = True

    @property
    def error_count(self) -> int:
        return sum(self.errors.values())


def next_batch(ready: int, playing: bool, batch_size: int, min_batch: int, scorers: int) -> int:
    """How many of the ``ready`` rollouts a free scorer takes now (0: it waits for more).

    While episodes are played, at least ``min_batch`` (an environment whose batch has a fixed cost, one semgrep
    process, does not pay it for one rollout), at most ``batch_size``. Once playing is over, everything left is
    shared among the ``scorers``, so that no scorer finishes long after the others.

    >>> next_batch(5, True, 64, 32, 2), next_batch(40, True, 64, 32, 2), next_batch(150, False, 64, 32, 2)
    (0, 40, 64)
    >>> next_batch(86, False, 64, 32, 2), next_batch(5, False, 64, 32, 2), next_batch(0, False, 64, 1, 1)
    (43, 3, 0)
    """
    if ready == 0 or (playing and ready < min_batch):
        return 0
    size = min(batch_size, ready)
    return size if playing else min(size, -(-ready // scorers))


class Scheduler:
    """Plays ``pending`` (item, sample) pairs with ``concurrency`` players and scores them as they come.

    ``on_done`` receives every finished record (scored, or ended by an infrastructure error) in the order they
    finish; it must also feed ``tally``, whose ``stopped_early`` makes the players stop taking new work.
    """

    def __init__(self, env: Environment, policy: Policy, pending: deque[tuple[Item, int]], *, concurrency: int,
                 timeout_s: float, pool: BatchScorer | None, tally: Tally,
                 on_done: Callable[[RolloutRecord], None]) -> None:
        self.env, self.policy, self.pending, self.pool = env, policy, pending, pool
        self.concurrency, self.timeout_s = concurrency, timeout_s
        self.tally, self.on_done = tally, on_done
        self.batch_size = env.score_batch_size if env.score_batch_size > 1 or pool is not None else THREAD_SCORE_BATCH
        self.n_scorers = pool.workers if pool is not None else 1  # a thread scorer runs one batch at a time
        self.to_score: deque[tuple[Item, RolloutRecord, Transcript]] = deque()
        self.backlog = 4 * self.batch_size * self.n_scorers
        self.min_batch = max(1, min(env.score_batch_min, self.batch_size))
        self.waiting = asyncio.Event()  # something to score, or playing is over
        self.room = asyncio.Event()  # the backlog has room again
        self.playing = True

    async def run(self) -> None:
        await asyncio.gather(self._play_all(), *(self._scorer() for _ in range(self.n_scorers)))

    async def _score_chunk(self, chunk: list[tuple[Item, RolloutRecord, Transcript]]) -> list[Score | InfraError]:
        items, transcripts = [c[0] for c in chunk], [c[2] for c in chunk]
        if self.pool is not None:
            return await self.pool.score(items, transcripts)
        return await asyncio.to_thread(score_batch, self.env, items, transcripts)

    async def _scorer(self) -> None:
        """Score whatever has been played, up to a batch at a time, until playing is over and nothing waits.

        Greedy batches: a batch never waits to fill up, so the scorer is never idle while something waits,
        and batches grow by themselves when scoring is the slower side."""
        while self.to_score or self.playing:
            size = next_batch(len(self.to_score), self.playing, self.batch_size, self.min_batch, self.n_scorers)
            if size == 0:
                self.waiting.clear()
                await self.waiting.wait()
                continue
            chunk = [self.to_score.popleft() for _ in range(size)]
            self.room.set()
            for (_item, record, _transcript), score in zip(chunk, await self._score_chunk(chunk), strict=True):
                self.on_done(apply_score(record, score))

    async def _player(self) -> None:
        while self.pending and not self.tally.stopped_early:
            item, sample = self.pending.popleft()
            record, transcript = await play_episode(self.env, self.policy, item, sample, self.timeout_s)
            if transcript is None:
                self.on_done(record)
                continue
            self.to_score.append((item, record, transcript))
            self.waiting.set()
            await asyncio.sleep(0)  # let a scorer take it now: a CPU-bound policy may never yield otherwise
            while len(self.to_score) >= self.backlog:
                self.room.clear()
                await self.room.wait()

    async def _play_all(self) -> None:
        try:
            players = min(self.concurrency, max(1, len(self.pending)))
            await asyncio.gather(*(self._player() for _ in range(players)))
        finally:
            self.playing = False
            self.waiting.set()
