"""What ``metadata.json`` says of a run, and the rule for resuming one.

A run's metadata is written twice: before the first rollout (how the run was built: environment, dataset,
policy, settings, versions, and the process playing it) and when it ends (status and why, counts, time, usage:
:func:`end_status`). A process killed outright never writes the end, so its metadata says ``running`` for ever:
readers ask :func:`effective_status`, which reads such a run as ``stopped`` once its process is gone. A resume
must be the same experiment as the run it continues, so it is checked against the stored metadata before anything
is played; the kept rollouts then come from the run directory's own compaction.
"""

from __future__ import annotations

import asyncio
import os
import socket
from pathlib import Path
from typing import Any

from security_verifiers.core.datasets import Dataset
from security_verifiers.core.errors import ConfigError
from security_verifiers.core.rundir import (
    METADATA_SCHEMA_VERSION,
    RunDir,
    code_version,
    environment_versions,
    now_iso,
    start_time,
)
from security_verifiers.core.types import RolloutRecord
from security_verifiers.envs.base import Environment
from security_verifiers.models.base import Policy

#: The parts of the metadata that define the experiment: a resume must agree on each (item ids aside).
EXPERIMENT_KEYS = ("env", "dataset", "policy")


def initial_metadata(env: Environment, policy: Policy, dataset: Dataset, run_id: str, run_settings: dict[str, Any],
                     model_name: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The metadata written before the first rollout; ``tools`` is filled in once the scorer's engines load."""
    return {
        "schema_version": METADATA_SCHEMA_VERSION,
        "run_id": run_id,
        "status": "running",
        "code": code_version(),
        "env": env.describe(),
        "dataset": {"id": dataset.id, "hash": dataset.hash, "splits": list(dataset.splits),
                    "source": dataset.source, "n": len(dataset), "item_ids": [i.id for i in dataset.items]},
        "policy": policy.describe(),
        "model": model_name,
        "run": run_settings,
        "versions": environment_versions(),
        "tools": None,
        "process": process_identity(),
        **(extra or {}),
    }


def process_identity() -> dict[str, Any]:
    """The process playing the run, as :func:`effective_status` checks it: pid, host, and (on Linux) the pid's
    start time, so a later process that got the same pid is not taken for it."""
    return {"pid": os.getpid(), "host": socket.gethostname(), "pid_started": _pid_started(os.getpid())}


def _pid_started(pid: int) -> int | None:
    """When ``pid`` started, in clock ticks since boot (``/proc/PID/stat`` field 22); ``None`` where unknown."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
        return int(stat.rsplit(")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def _alive(process: dict[str, Any]) -> bool | None:
    """Whether the process ``process`` names is still running; ``None`` when this host cannot tell (another
    host, or no pid recorded)."""
    pid = process.get("pid")
    if not isinstance(pid, int) or pid <= 0 or process.get("host") != socket.gethostname():
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists, as another user's process
    except OSError:
        return None
    started = process.get("pid_started")
    return started is None or _pid_started(pid) in (None, started)


def effective_status(metadata: dict[str, Any]) -> str | None:
    """The run's status as it truly stands: the recorded one, except that a run recorded ``running`` whose process
    is gone (killed, crashed, the machine restarted) is ``stopped``. Only a reader on the run's host can tell; elsewhere
    ``running`` stays.

    >>> effective_status({"status": "finished"}), effective_status({"status": "running"})
    ('finished', 'running')
    >>> effective_status({"status": "running", "process": {"pid": 2**22 + 1, "host": socket.gethostname()}})
    'stopped'
    """
    return effective_status_reason(metadata)[0]


def running_elsewhere(metadata: dict[str, Any]) -> dict[str, Any] | None:
    """The process still playing the run when it is another live process on this host (a resume must not write
    beside it), else ``None``."""
    process = metadata.get("process")
    if metadata.get("status") != "running" or not isinstance(process, dict) or process.get("pid") == os.getpid():
        return None
    return process if _alive(process) else None


def effective_status_reason(metadata: dict[str, Any]) -> tuple[str | None, str | None]:
    """:func:`effective_status` and its reason (the recorded ``status_reason``, or why a ``running`` run is not)."""
    status, reason = metadata.get("status"), metadata.get("status_reason")
    process = metadata.get("process")
    if status == "running" and isinstance(process, dict) and _alive(process) is False:
        return "stopped", (f"its process (pid {process.get('pid')} on {process.get('host')}) ended without recording "
                           "an end: killed or crashed")
    return status, reason


def end_status(ended_by: BaseException | None, *, stopped_early: bool, remaining: int,
               errors: dict[str, int] | None = None, finished: int = 0, kept: int = 0) -> dict[str, Any]:
    """``status`` and ``status_reason`` of a run as it ends: ``failed`` when an exception ended it (the reason is
    the exception) or when every rollout it holds ended in an infrastructure error (``errors`` by kind of the
    ``finished`` rollouts of this session, and none ``kept`` from before: nothing was measured); ``stopped`` when it
    was interrupted, stopped by the error-rate guard, or left rollouts unplayed; else ``finished`` (reason
    ``None``). A resume continues a failed or stopped run like any other.

    >>> end_status(None, stopped_early=False, remaining=0)
    {'status': 'finished', 'status_reason': None}
    >>> end_status(OSError(28, "No space left on device"), stopped_early=False, remaining=7)
    {'status': 'failed', 'status_reason': 'OSError: [Errno 28] No space left on device'}
    >>> end_status(None, stopped_early=True, remaining=30)["status_reason"]
    'the infrastructure error rate passed --max-error-rate'
    >>> end_status(None, stopped_early=False, remaining=0, errors={"provider": 3}, finished=3)["status_reason"]
    'every rollout (3) ended in an infrastructure error (provider 3): nothing was measured'
    """
    if isinstance(ended_by, KeyboardInterrupt | SystemExit | asyncio.CancelledError):
        return {"status": "stopped", "status_reason": f"interrupted ({type(ended_by).__name__})"}
    if ended_by is not None:
        reason = " ".join(f"{type(ended_by).__name__}: {ended_by}".split())[:1000]
        return {"status": "failed", "status_reason": reason.encode("utf-8", "backslashreplace").decode("utf-8")}
    if stopped_early:
        return {"status": "stopped", "status_reason": "the infrastructure error rate passed --max-error-rate"}
    if remaining:
        return {"status": "stopped", "status_reason": f"{remaining} rollouts were not played"}
    if finished and not kept and sum((errors or {}).values()) >= finished:
        kinds = ", ".join(f"{kind} {n}" for kind, n in sorted((errors or {}).items()))
        return {"status": "failed",
                "status_reason": f"every rollout ({finished}) ended in an infrastructure error ({kinds}): nothing was "
                                 "measured"}
    return {"status": "finished", "status_reason": None}


def check_resumable(existing: dict[str, Any], fresh: dict[str, Any]) -> None:
    """A resumed run must be the same experiment: same env, config, data, policy and samples per item.

    The data is the same when its content hash is: where the file was read from (``source``: a path as given, for
    runs written before it was stored resolved) may differ, so a run started with a relative ``--data`` resumes
    from another directory."""
    old_data, new_data = existing.get("dataset", {}), fresh["dataset"]
    if old_data.get("hash") != new_data.get("hash"):
        raise ConfigError(
            f"cannot resume {existing.get('run_id')}: its dataset {old_data.get('source')} had hash "
            f"{old_data.get('hash')}, this invocation's {new_data.get('source')} has {new_data.get('hash')} (other "
            "items or another version of the file); start a new run instead"
        )
    for key in EXPERIMENT_KEYS:
        ignored = ("item_ids", "source") if key == "dataset" else ("item_ids",)
        old = {k: v for k, v in existing.get(key, {}).items() if k not in ignored}
        new = {k: v for k, v in fresh[key].items() if k not in ignored}
        if old != new:
            raise ConfigError(
                f"cannot resume {existing.get('run_id')}: its {key} differs from this invocation "
                f"(was {old}, now {new}); start a new run instead"
            )
    if existing.get("run", {}).get("samples") != fresh["run"]["samples"]:
        raise ConfigError("cannot resume: --samples differs from the original run")


def start_or_resume(run_dir: RunDir, metadata: dict[str, Any], resume: bool) -> list[RolloutRecord]:
    """Stamp ``metadata`` with its start (and resume) times; return the rollouts a resume keeps.

    A fresh run refuses a directory that already holds results (nothing is overwritten); a resume refuses one
    that holds no run, or a different experiment, and compacts the results file (cut lines, errored rollouts that
    will be retried and duplicates go) before anything is appended.
    """
    if not resume:
        if run_dir.results_path.exists():
            raise ConfigError(f"{run_dir.path} already holds results; pass --resume or choose another --run-id")
        metadata["started_at"] = start_time()
        return []
    if not run_dir.metadata_path.exists():
        raise ConfigError(f"nothing to resume at {run_dir.path}")
    existing = run_dir.read_metadata()
    check_resumable(existing, metadata)
    metadata["started_at"] = existing.get("started_at", start_time())
    metadata["resumed_at"] = [*existing.get("resumed_at", []), now_iso()]
    return run_dir.compact_for_resume()
