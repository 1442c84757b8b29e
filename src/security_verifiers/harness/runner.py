"""The runner: many episodes with a concurrency limit, progress, resume and an error-rate guard.

The runner never decides a score; it only schedules episodes, appends each finished record to
``results.jsonl`` at once, and writes ``metadata.json`` before and after the run. A run stopped by
any means can be resumed: finished rollouts are kept, errored ones are retried.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from security_verifiers.core.datasets import Dataset
from security_verifiers.core.errors import ConfigError, InfraError
from security_verifiers.core.rundir import (
    METADATA_SCHEMA_VERSION,
    RunDir,
    code_version,
    environment_versions,
    now_iso,
)
from security_verifiers.core.types import Item, RolloutRecord, Score, Transcript, Usage
from security_verifiers.envs.base import Environment
from security_verifiers.harness.episode import apply_score, play_episode, score_batch
from security_verifiers.harness.scoring_pool import ScorerPool
from security_verifiers.models.base import Policy


class RunConfig(BaseModel):
    """How a run is executed. Part of the run metadata; none of it changes what a rollout scores."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    concurrency: int = Field(8, ge=1, le=4096, description="Episodes in flight at once.")
    timeout_s: float = Field(120.0, gt=0, allow_inf_nan=False,
                             description="Seconds allowed for one model reply (per turn).")
    samples: int = Field(1, ge=1, le=1000, description="Rollouts per item (epochs).")
    score_workers: int | None = Field(
        None, ge=0, le=64,
        description="Processes that score rollouts, beside the one that plays them (0: score in this process, "
        "in a thread). Default: the environment's own choice (1 for config-audit, whose engines are CPU-bound; "
        "0 for network-logs).",
    )
    max_error_rate: float = Field(
        0.1, ge=0, le=1,
        description="Fail the run (non-zero exit) when more than this fraction of rollouts hit infrastructure "
        "errors; also stops early once 20 rollouts are done and the rate is past it.",
    )


@dataclass
class RunOutcome:
    run_dir: RunDir
    total: int
    done: int
    errors: int
    errors_by_kind: dict[str, int]
    resumed: int
    seconds: float
    stopped_early: bool
    usage: Usage = field(default_factory=Usage)

    @property
    def error_rate(self) -> float:
        return self.errors / self.done if self.done else 0.0


_EARLY_STOP_MIN = 20
#: Rollouts scored together in the scoring thread when the environment sets no batch size of its own.
THREAD_SCORE_BATCH = 64


def _check_resumable(existing: dict[str, Any], fresh: dict[str, Any]) -> None:
    """A resumed run must be the same experiment: same env, config, data and policy."""
    for key in ("env", "dataset", "policy"):
        old = {k: v for k, v in existing.get(key, {}).items() if k != "item_ids"}
        new = {k: v for k, v in fresh[key].items() if k != "item_ids"}
        if old != new:
            raise ConfigError(
                f"cannot resume {existing.get('run_id')}: its {key} differs from this invocation "
                f"(was {old}, now {new}); start a new run instead"
            )
    if existing.get("run", {}).get("samples") != fresh["run"]["samples"]:
        raise ConfigError("cannot resume: --samples differs from the original run")


async def run_eval(
    env: Environment,
    policy: Policy,
    dataset: Dataset,
    run_dir: RunDir,
    config: RunConfig,
    *,
    resume: bool = False,
    model_name: str | None = None,
    extra_metadata: dict[str, Any] | None = None,
    progress: bool = True,
    scorer_pool: ScorerPool | None = None,
) -> RunOutcome:
    """Run every (item, sample) not yet finished in ``run_dir`` and record each rollout as it ends.

    ``model_name`` is the name the user gave (``baseline:gbdt``, ``gpt-4o-mini``); default: the policy's.
    ``scorer_pool``: score in these worker processes (a caller running many evaluations of one environment
    keeps its workers warm); by default the run starts its own when ``score_workers`` asks for any.
    """
    metadata: dict[str, Any] = {
        "schema_version": METADATA_SCHEMA_VERSION,
        "run_id": run_dir.path.name,
        "status": "running",
        "code": code_version(),
        "env": env.describe(),
        "dataset": {"id": dataset.id, "hash": dataset.hash, "splits": list(dataset.splits),
                    "source": dataset.source, "n": len(dataset), "item_ids": [i.id for i in dataset.items]},
        "policy": policy.describe(),
        "model": model_name or policy.name,
        "run": config.model_dump(mode="json"),
        "versions": environment_versions(),
        "tools": None,  # filled in below, once scoring workers are starting (loading engines takes a while)
        **(extra_metadata or {}),
    }
    kept: list[RolloutRecord] = []
    if resume:
        if not run_dir.metadata_path.exists():
            raise ConfigError(f"nothing to resume at {run_dir.path}")
        existing = run_dir.read_metadata()
        _check_resumable(existing, metadata)
        metadata["started_at"] = existing.get("started_at", now_iso())
        metadata["resumed_at"] = [*existing.get("resumed_at", []), now_iso()]
        kept = run_dir.compact_for_resume()
    else:
        if run_dir.results_path.exists():
            raise ConfigError(f"{run_dir.path} already holds results; pass --resume or choose another --run-id")
        metadata["started_at"] = now_iso()

    done_keys = {(r.item_id, r.sample) for r in kept}
    pending: deque[tuple[Item, int]] = deque(
        (item, s) for s in range(config.samples) for item in dataset.items if (item.id, s) not in done_keys
    )
    total = len(dataset) * config.samples
    workers = env.score_workers if config.score_workers is None else config.score_workers
    own_pool = ScorerPool(env, workers) if scorer_pool is None and workers > 0 and pending else None
    pool = own_pool or scorer_pool
    if own_pool is not None:
        own_pool.warm_up()  # the workers load their engines while this process loads its own
    try:
        metadata["tools"] = env.tool_versions()
        run_dir.write_metadata(metadata)
        prepare = getattr(policy, "prepare", None)
        if callable(prepare):
            prepare([item for item, _ in pending])
    except BaseException:
        if own_pool is not None:
            own_pool.close()
        raise

    errors: Counter[str] = Counter()
    usage = Usage()
    finished = 0
    stopped_early = False
    start, cpu_start = time.perf_counter(), time.process_time()
    run_dir.open_results()

    progress_bar, task_id = _make_progress(progress, f"{env.name} · {policy.name}", total, len(kept))

    def record_done(record: RolloutRecord) -> None:
        nonlocal finished, usage, stopped_early
        run_dir.append(record)
        finished += 1
        usage = usage + record.usage
        if record.error is not None:
            errors[record.error.kind] += 1
            if finished >= _EARLY_STOP_MIN and sum(errors.values()) / finished > config.max_error_rate:
                stopped_early = True
        if progress_bar is not None:
            progress_bar.update(task_id, advance=1)

    # Scoring never runs in the event loop: a scorer is CPU work (a policy engine, or parsing a 200 KB reply),
    # and in the loop it would stall every episode in flight. It runs in a thread (or a worker process) in
    # batches, so the cost of handing work over is shared by many rollouts.
    batch_size = env.score_batch_size if env.score_batch_size > 1 or pool is not None else THREAD_SCORE_BATCH
    n_scorers = pool.workers if pool is not None else 1  # a thread scorer runs one batch at a time
    to_score: deque[tuple[Item, RolloutRecord, Transcript]] = deque()
    #: Played rollouts may wait for scoring up to this many; then players pause (bounded memory, and little
    #: played-but-unscored work lost if the run is killed).
    backlog = 4 * batch_size * n_scorers
    waiting = asyncio.Event()  # something to score, or playing is over
    room = asyncio.Event()  # the backlog has room again
    playing = True

    async def score_chunk(chunk: list[tuple[Item, RolloutRecord, Transcript]]) -> list[Score | InfraError]:
        items, transcripts = [c[0] for c in chunk], [c[2] for c in chunk]
        if pool is not None:
            return await pool.score(items, transcripts)
        return await asyncio.to_thread(score_batch, env, items, transcripts)

    async def scorer() -> None:
        """Score whatever has been played, up to a batch at a time, until playing is over and nothing waits.

        Greedy batches: a batch never waits to fill up, so the scorer is never idle while something waits,
        and batches grow by themselves when scoring is the slower side."""
        while to_score or playing:
            if not to_score:
                waiting.clear()
                await waiting.wait()
                continue
            chunk = [to_score.popleft() for _ in range(min(batch_size, len(to_score)))]
            room.set()
            for (_item, record, _transcript), score in zip(chunk, await score_chunk(chunk), strict=True):
                record_done(apply_score(record, score))

    async def player() -> None:
        while pending and not stopped_early:
            item, sample = pending.popleft()
            record, transcript = await play_episode(env, policy, item, sample, config.timeout_s)
            if transcript is None:
                record_done(record)
                continue
            to_score.append((item, record, transcript))
            waiting.set()
            await asyncio.sleep(0)  # let a scorer take it now: a CPU-bound policy may never yield otherwise
            while len(to_score) >= backlog:
                room.clear()
                await room.wait()

    async def play_all() -> None:
        nonlocal playing
        try:
            await asyncio.gather(*(player() for _ in range(min(config.concurrency, max(1, len(pending))))))
        finally:
            playing = False
            waiting.set()

    try:
        if progress_bar is not None:
            progress_bar.start()
        scorers = [scorer() for _ in range(n_scorers)]
        await asyncio.gather(play_all(), *scorers)
    finally:
        if progress_bar is not None:
            progress_bar.stop()
        if own_pool is not None:
            own_pool.close()
        run_dir.close()
        seconds = time.perf_counter() - start
        n_err = sum(errors.values())
        metadata.update(
            status="stopped" if (stopped_early or pending) else "finished",
            finished_at=now_iso(),
            seconds=round(seconds, 3),
            cpu_seconds=round(time.process_time() - cpu_start, 3),  # this process, every thread; not score workers
            rollouts={"total": total, "finished_this_session": finished, "kept_from_before": len(kept),
                      "remaining": len(pending)},
            errors={"count": n_err, "by_kind": dict(errors)},
            usage=(usage + sum((r.usage for r in kept), Usage())).model_dump(),
        )
        run_dir.write_metadata(metadata)
        aclose = getattr(policy, "aclose", None)
        if callable(aclose):
            await aclose()  # a model's HTTP connections belong to this event loop: close them in it
    return RunOutcome(run_dir=run_dir, total=total, done=finished + len(kept), errors=sum(errors.values()),
                      errors_by_kind=dict(errors), resumed=len(kept), seconds=seconds,
                      stopped_early=stopped_early, usage=usage)


def _make_progress(enabled: bool, label: str, total: int, completed: int) -> tuple[Any, Any]:
    if not enabled:
        return None, None
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   TimeRemainingColumn(), refresh_per_second=4, transient=False)
    task_id = bar.add_task(label, total=total, completed=completed)
    return bar, task_id
