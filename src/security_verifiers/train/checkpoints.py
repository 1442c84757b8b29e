"""A training stage's checkpoints across sessions: whether the run's manifest records the stage as done, where
an interrupted stage continues (its last complete ``trainer/checkpoint-N``, its step-log rows past it dropped),
and the record of a finished one (its final checkpoint's digest; the intermediate ones removed). Used by every
run (:mod:`.pipeline`): a new run simply finds nothing to continue. See :mod:`.resume`."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any, Protocol

from security_verifiers.core.errors import ConfigError
from security_verifiers.core.rundir import now_iso
from security_verifiers.train import processes
from security_verifiers.train.trainers import COUNTS_FILE


class StagedRun(Protocol):
    """What the stages read of a run (:class:`~security_verifiers.train.pipeline.Run`)."""

    path: Path
    manifest: dict[str, Any]
    resume: dict[str, Any] | None

    @property
    def log_path(self) -> Path: ...

    def save(self) -> None: ...


def _identity(path: Path) -> dict[str, str]:
    from security_verifiers.models.hf_local import weights_digest

    return {"path": str(path), "weights_sha256": weights_digest(path)}


def stage_done(r: StagedRun, stage: str) -> bool:
    """Whether the manifest records ``stage``'s final checkpoint; one recorded but changed or removed since is a
    ConfigError (the later stages were built on it)."""
    recorded = ((r.manifest.get("stages") or {}).get(stage) or {}).get("weights_sha256")
    if recorded is None:
        return False
    final = r.path / stage / "checkpoint"
    if not final.is_dir() or _identity(final).get("weights_sha256") != recorded:
        raise ConfigError(f"{final} is not the {stage} checkpoint the run's manifest recorded (changed or removed "
                          "since); start a new run")
    if r.resume is not None:
        r.resume["stages"][stage] = "kept"
    return True


def last_checkpoint(trainer_dir: Path, stage: str) -> Path | None:
    """The stage's latest complete ``checkpoint-N`` (one cut short while being written lacks its trainer state,
    or for GRPO its counts, and is passed over)."""
    needed = ["trainer_state.json", *([COUNTS_FILE] if stage == "grpo" else [])]
    found = [(int(p.name.split("-")[1]), p) for p in trainer_dir.glob("checkpoint-*")
             if p.name.split("-")[1].isdigit() and all((p / name).is_file() for name in needed)]
    return max(found)[1] if found else None


def prepare_stage(r: StagedRun, stage: str, log_stage: str) -> Path | None:
    """Before a stage trains: its last checkpoint to continue from (none: from the start), its log rows past that
    step dropped, a final checkpoint left unrecorded by an interruption removed; returns the checkpoint."""
    last = last_checkpoint(r.path / stage / "trainer", stage)
    step = int(last.name.split("-")[1]) if last is not None else 0
    if processes.is_main():
        shutil.rmtree(r.path / stage / "checkpoint", ignore_errors=True)
        dropped = trim_log(r.log_path, log_stage, step)
        if r.resume is not None:
            r.resume["stages"][stage] = {"from_step": step, "log_rows_dropped": dropped}
            r.save()
    processes.wait()
    return last


def finish_stage(r: StagedRun, stage: str, final: Path) -> None:
    """Record the stage's final checkpoint (its digest) and remove its intermediate ones."""
    if processes.is_main():
        r.manifest.setdefault("stages", {})[stage] = {**_identity(final), "finished_at": now_iso()}
        r.save()
        for checkpoint in (r.path / stage / "trainer").glob("checkpoint-*"):
            shutil.rmtree(checkpoint, ignore_errors=True)


def trim_log(path: Path, stage: str, step: int) -> int:
    """Drop the rows of ``stage`` logged after ``step`` (and its closing summary row, written again at its end)
    from the step log; returns how many were dropped."""
    if not path.is_file():
        return 0
    kept, dropped = [], 0
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:  # a line cut by the interruption
            dropped += 1
            continue
        if row.get("stage") == stage and (int(row.get("step", 0)) > step or "train_runtime" in row):
            dropped += 1
            continue
        kept.append(line)
    if dropped:
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text("".join(f"{line}\n" for line in kept), encoding="utf-8")
        os.replace(tmp, path)
    return dropped

