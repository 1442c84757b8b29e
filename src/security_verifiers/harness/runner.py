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
from security_verifiers.core.errors import ConfigError
from security_verifiers.core.rundir import (
    METADATA_SCHEMA_VERSION,
    RunDir,
    code_version,
    environment_versions,
    now_iso,
)
from security_verifiers.core.types import Item, RolloutRecord, Transcript, Usage
from security_verifiers.envs.base import Environment
from security_verifiers.harness.episode import apply_score, play_episode, run_episode, score_batch
from security_verifiers.models.base import Policy


class RunConfig(BaseModel):
    """How a run is executed. Part of the run metadata; none of it changes what a rollout scores."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    concurrency: int = Field(8, ge=1, le=4096, description="Episodes in flight at once.")
    timeout_s: float = Field(120.0, gt=0, description="Seconds allowed for one model reply (per turn).")
    samples: int = Field(1, ge=1, le=1000, description="Rollouts per item (epochs).")
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
) -> RunOutcome:
    """Run every (item, sample) not yet finished in ``run_dir`` and record each rollout as it ends.

    ``model_name`` is the name the user gave (``baseline:gbdt``, ``gpt-4o-mini``); default: the policy's.
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
        "tools": env.tool_versions(),
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
    run_dir.write_metadata(metadata)

    done_keys = {(r.item_id, r.sample) for r in kept}
    pending: deque[tuple[Item, int]] = deque(
        (item, s) for s in range(config.samples) for item in dataset.items if (item.id, s) not in done_keys
    )
    total = len(dataset) * config.samples
    prepare = getattr(policy, "prepare", None)
    if callable(prepare):
        prepare([item for item, _ in pending])

    errors: Counter[str] = Counter()
    usage = Usage()
    finished = 0
    stopped_early = False
    start = time.perf_counter()
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

    batch_size = env.score_batch_size
    to_score: list[tuple[Item, RolloutRecord, Transcript]] = []
    score_lock = asyncio.Lock()

    async def flush() -> None:
        """Score what is waiting in one batch, in a thread, so other episodes keep playing meanwhile."""
        async with score_lock:
            chunk = to_score[:]
            to_score.clear()
            if not chunk:
                return
            scores = await asyncio.to_thread(score_batch, env, [c[0] for c in chunk], [c[2] for c in chunk])
            for (_item, record, _transcript), score in zip(chunk, scores, strict=True):
                record_done(apply_score(record, score))

    async def worker() -> None:
        while pending and not stopped_early:
            item, sample = pending.popleft()
            if batch_size == 1:
                record_done(await run_episode(env, policy, item, sample, config.timeout_s))
                continue
            record, transcript = await play_episode(env, policy, item, sample, config.timeout_s)
            if transcript is None:
                record_done(record)
            else:
                to_score.append((item, record, transcript))
            if len(to_score) >= batch_size:
                await flush()

    try:
        if progress_bar is not None:
            progress_bar.start()
        await asyncio.gather(*(worker() for _ in range(min(config.concurrency, max(1, len(pending))))))
        await flush()
    finally:
        if progress_bar is not None:
            progress_bar.stop()
        run_dir.close()
        seconds = time.perf_counter() - start
        n_err = sum(errors.values())
        metadata.update(
            status="stopped" if (stopped_early or pending) else "finished",
            finished_at=now_iso(),
            seconds=round(seconds, 3),
            rollouts={"total": total, "finished_this_session": finished, "kept_from_before": len(kept),
                      "remaining": len(pending)},
            errors={"count": n_err, "by_kind": dict(errors)},
            usage=(usage + sum((r.usage for r in kept), Usage())).model_dump(),
        )
        run_dir.write_metadata(metadata)
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
