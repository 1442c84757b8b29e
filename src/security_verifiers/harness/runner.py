"""The runner: many episodes with a concurrency limit, progress, resume and an error-rate guard.

The runner never decides a score; it only schedules episodes (:mod:`.scheduler`), appends each finished
record to ``results.jsonl`` at once, and writes ``metadata.json`` before and after the run
(:mod:`.run_metadata`). A run stopped by any means can be resumed: finished rollouts are kept, errored ones
are retried.

One rollout's failure is that rollout's: a record that cannot be written (an outcome JSON cannot hold) is written
as its rollout's error and the run goes on. Only what no rollout owns (a full disk, a crash of the runner, an
interrupt) ends a run early, and then ``metadata.json`` says so (``failed`` or ``stopped``, and why).
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections import deque
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, TextIO

from pydantic import BaseModel, ConfigDict, Field

from security_verifiers.core.datasets import Dataset
from security_verifiers.core.rundir import RunDir, now_iso
from security_verifiers.core.types import Item, RolloutRecord, Usage
from security_verifiers.envs.base import Environment
from security_verifiers.harness.episode import unwritable
from security_verifiers.harness.retry_counter import RetryCounter
from security_verifiers.harness.run_metadata import end_status, initial_metadata, start_or_resume
from security_verifiers.harness.scheduler import Scheduler, Tally
from security_verifiers.harness.scoring_pool import BatchScorer, in_workers, make_pool
from security_verifiers.models.base import Policy

#: Off a terminal (a log file, CI) the bar is drawn once, when the run ends; meanwhile a status line this often, so
#: a long run is never silent and a run shorter than this prints nothing more than it did.
STATUS_LINE_INTERVAL_S = 30.0
#: How often the bar's status is redrawn between finished rollouts: a retry shows while its rollout still waits.
REFRESH_S = 1.0


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
    executor: Literal["local", "ray"] = Field(
        "local",
        description="Where rollouts are scored: local (worker processes of this machine, --score-workers of them) "
        "or ray (actors on a Ray cluster, each under the same per-rollout limits: --score-workers of them, by "
        "default one per CPU of the cluster; the optional extra security-verifiers[ray]).",
    )
    ray_address: str | None = Field(
        None,
        description="With --executor ray, the cluster to join (host:port, or auto for the one this machine is "
        "part of). Default: $RAY_ADDRESS, else a local cluster of this machine's cores started for the run.",
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
    #: The model client's retries this session (read from its log: :mod:`.retry_counter`).
    retries: int = 0

    @property
    def error_rate(self) -> float:
        return self.errors / self.done if self.done else 0.0


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
    scorer_pool: BatchScorer | None = None,
) -> RunOutcome:
    """Run every (item, sample) not yet finished in ``run_dir`` and record each rollout as it ends.

    ``model_name`` is the name the user gave (``baseline:gbdt``, ``gpt-4o-mini``); default: the policy's.
    ``scorer_pool``: score in these worker processes (a caller running many evaluations of one environment
    keeps its workers warm); by default the run starts its own when ``score_workers`` asks for any.
    """
    metadata = initial_metadata(env, policy, dataset, run_dir.path.name, config.model_dump(mode="json"),
                                model_name or policy.name, extra_metadata)
    kept = start_or_resume(run_dir, metadata, resume)
    done_keys = {(r.item_id, r.sample) for r in kept}
    pending: deque[tuple[Item, int]] = deque(
        (item, s) for s in range(config.samples) for item in dataset.items if (item.id, s) not in done_keys
    )
    total = len(dataset) * config.samples
    own_pool = make_pool(env, config.executor, config.score_workers, config.ray_address) \
        if scorer_pool is None and pending else None
    pool = own_pool or scorer_pool
    policy = in_workers(policy, pool)  # a heavy built-in baseline answers in the workers (see in_workers)
    if own_pool is not None:
        own_pool.warm_up()  # the workers load their engines while this process loads its own
    written = False
    try:
        metadata["tools"] = env.tool_versions()
        run_dir.write_metadata(metadata)
        written = True
        prepare = getattr(policy, "prepare", None)
        if callable(prepare):
            prepare([item for item, _ in pending])
    except BaseException as err:
        if own_pool is not None:
            own_pool.close()
        if written:  # the run directory says "running": say instead why it never ran
            run_dir.write_metadata({**metadata, **end_status(err, stopped_early=False, remaining=len(pending)),
                                    "finished_at": now_iso()})
        raise

    tally = Tally(max_error_rate=config.max_error_rate)
    retries = RetryCounter()
    start, cpu_start = time.perf_counter(), time.process_time()
    run_dir.open_results()
    view = LiveProgress(f"{env.name} · {policy.name}", total, len(kept), tally, retries) if progress else None

    def record_done(record: RolloutRecord) -> None:
        tally.add(write_record(run_dir, record))
        if view is not None:
            view.update()

    scheduler = Scheduler(env, policy, pending, concurrency=config.concurrency, timeout_s=config.timeout_s,
                          pool=pool, tally=tally, on_done=record_done)
    ended_by: BaseException | None = None
    try:
        with retries:
            if view is None:
                await scheduler.run()
            else:
                async with view.shown():
                    await scheduler.run()
    except BaseException as err:  # recorded in the metadata below, then raised again
        ended_by = err
        raise
    finally:
        if own_pool is not None:
            own_pool.close()
        run_dir.close()
        seconds = time.perf_counter() - start
        metadata.update(
            **end_status(ended_by, stopped_early=tally.stopped_early, remaining=len(pending),
                         errors=dict(tally.errors), finished=tally.finished, kept=len(kept)),
            finished_at=now_iso(),
            seconds=round(seconds, 3),
            cpu_seconds=round(time.process_time() - cpu_start, 3),  # this process, every thread; not score workers
            rollouts={"total": total, "finished_this_session": tally.finished, "kept_from_before": len(kept),
                      "remaining": len(pending)},
            errors={"count": tally.error_count, "by_kind": dict(tally.errors)},
            retries=retries.count,  # the model client's retries this session (each one an answer that came late)
            usage=(tally.usage + sum((r.usage for r in kept), Usage())).model_dump(),
        )
        run_dir.write_metadata(metadata)
        # a model's HTTP connections belong to this event loop: close them in it (an environment may hold a model
        # too: E5 attacking a served target). A policy may hold nothing to close (a baseline has no aclose).
        aclose = getattr(policy, "aclose", None)
        if callable(aclose):
            await aclose()
        await env.aclose()
    return RunOutcome(run_dir=run_dir, total=total, done=tally.finished + len(kept), errors=tally.error_count,
                      errors_by_kind=dict(tally.errors), resumed=len(kept), seconds=seconds,
                      stopped_early=tally.stopped_early, usage=tally.usage, retries=retries.count)


def write_record(run_dir: RunDir, record: RolloutRecord) -> RolloutRecord:
    """Append ``record`` to the run's results and return what was written: ``record``, or, when it cannot be written
    as JSON (a lone surrogate or an object JSON has no type for in its outcome), its rollout's error
    (:func:`~.episode.unwritable`). An ``OSError`` (a full disk) is no rollout's and is raised."""
    try:
        run_dir.append(record)  # the JSON is made before anything is written: a failure leaves no line
    except OSError:
        raise
    except Exception as err:  # noqa: BLE001 - the record holds what JSON cannot: the rollout's error
        record = unwritable(record, err)
        run_dir.append(record)
    return record


def _live_status(tally: Tally, retries: int) -> str:
    """The progress bar's account of what went wrong so far, so a failing endpoint shows before the run ends."""
    parts = [f"errors {tally.error_count}"]
    if tally.errors:
        parts[0] += f" ({', '.join(f'{kind} {n}' for kind, n in tally.errors.most_common(2))})"
    parts.append(f"unparseable {tally.unparseable}")
    parts.append(f"retries {retries}")
    return " · ".join(parts)


class LiveProgress:
    """The run's progress on stderr: done/total, rollouts per second, infrastructure errors, unparseable answers
    and the model client's retries, redrawn as rollouts finish and every :data:`REFRESH_S` between them.

    On a terminal, a rich progress bar. Off one (``stream`` is no tty) the bar is printed once when the run ends,
    as before, and a one-line status goes out every :data:`STATUS_LINE_INTERVAL_S` seconds until then.
    """

    def __init__(self, label: str, total: int, completed: int, tally: Tally, retries: RetryCounter, *,
                 stream: TextIO | None = None) -> None:
        self.label, self.total, self.kept, self.tally, self.retries = label, total, completed, tally, retries
        self.stream = stream
        self.bar, self.task_id = _make_progress(label, total, completed, stream)
        self.is_terminal = self.bar.console.is_terminal
        self.start = time.monotonic()

    @property
    def rate(self) -> float:
        """Rollouts finished per second this session (kept ones from before a resume do not count)."""
        elapsed = time.monotonic() - self.start
        return self.tally.finished / elapsed if elapsed > 0 else 0.0

    def status(self) -> str:
        return f"{self.rate:.2f} rollouts/s · {_live_status(self.tally, self.retries.count)}"

    @property
    def done(self) -> int:
        return self.kept + self.tally.finished

    def update(self) -> None:
        self.bar.update(self.task_id, completed=self.done, status=self.status())

    def line(self) -> str:
        """The off-terminal status line: what the bar shows, in one line a log keeps."""
        done = self.done
        share = f" ({done / self.total:.0%})" if self.total else ""
        return f"{self.label}: {done}/{self.total}{share} · {self.status()} · {time.monotonic() - self.start:.0f}s"

    @asynccontextmanager
    async def shown(self) -> AsyncIterator[None]:
        """Show the bar for the length of the block, with a task that keeps it (or the status lines) current."""
        self.bar.start()
        ticker = asyncio.create_task(self._tick())
        try:
            yield
        finally:
            ticker.cancel()
            await asyncio.gather(ticker, return_exceptions=True)
            self.update()
            self.bar.stop()

    async def _tick(self) -> None:
        interval = STATUS_LINE_INTERVAL_S
        last_line = time.monotonic()
        while True:
            await asyncio.sleep(min(REFRESH_S, interval))
            self.update()
            if not self.is_terminal and time.monotonic() - last_line >= interval:
                last_line = time.monotonic()
                stream = self.stream if self.stream is not None else sys.stderr
                print(self.line(), file=stream, flush=True)


def _make_progress(label: str, total: int, completed: int, stream: TextIO | None) -> tuple[Any, Any]:
    """A rich bar on ``stream`` (default stderr) with the status on a line of its own below it, so an 80-column
    terminal shows all of it."""
    from rich.console import Console, RenderableType
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text

    class BarWithStatus(Progress):
        def get_renderables(self) -> Iterable[RenderableType]:
            yield self.make_tasks_table(self.tasks)
            for task in self.tasks:
                yield Text(f"  {task.fields['status']}", overflow="fold")

    console = Console(stderr=stream is None, file=stream)
    bar = BarWithStatus(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        TimeRemainingColumn(), refresh_per_second=4, transient=False, console=console)
    task_id = bar.add_task(label, total=total, completed=completed,
                           status="0.00 rollouts/s · errors 0 · unparseable 0 · retries 0")
    return bar, task_id
