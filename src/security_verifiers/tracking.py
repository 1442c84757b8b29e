"""``--log-to wandb,mlflow``: a finished run's settings, metrics and report in the tracker a team already uses.

What is logged comes from the run directory only (``metadata.json``, ``summary.json``, ``report.md``), after the
run: the tracker is a copy of the record, never its source, so a tracker that is down costs nothing but the copy.
Both trackers are optional (``pip install 'security-verifiers[tracking]'``); a missing one is an error before the
evaluation starts. Their own settings hold: ``WANDB_MODE`` (``offline`` writes under ``WANDB_DIR``, here the run
directory when unset), ``WANDB_PROJECT``, ``MLFLOW_TRACKING_URI``; without the last, MLflow writes a file store
under the output root (``<out>/mlruns``; ``mlflow ui --backend-store-uri`` opens it). Their telemetry is theirs
to switch off too: MLflow asks ``config.mlflow-telemetry.io`` even for a file store unless ``MLFLOW_DISABLE_TELEMETRY``
(or ``DO_NOT_TRACK``) is set; W&B reports its own crashes unless ``WANDB_ERROR_REPORTING=false``.
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from security_verifiers.core.errors import ConfigError

TARGETS = ("wandb", "mlflow")
#: The module each target needs, and how to get it.
MODULES = {"wandb": "wandb", "mlflow": "mlflow"}
INSTALL = "pip install 'security-verifiers[tracking]'"
DEFAULT_PROJECT = "security-verifiers"


class TrackedRun(BaseModel):
    """What a tracker receives of one run."""

    name: str
    config: dict[str, Any]
    metrics: dict[str, float]
    artifacts: list[Path]


def parse_targets(text: str | None) -> list[str]:
    """``wandb,mlflow`` as a list; an unknown name is an error listing the known ones."""
    if not text:
        return []
    targets = [t.strip().lower() for t in text.split(",") if t.strip()]
    unknown = [t for t in targets if t not in TARGETS]
    if unknown:
        raise ConfigError(f"--log-to: unknown tracker(s) {', '.join(unknown)}; choose from {', '.join(TARGETS)}")
    return list(dict.fromkeys(targets))


def check_targets(targets: list[str]) -> None:
    """Fail now, before anything runs, when a tracker's package is not installed."""
    missing = [t for t in targets if importlib.util.find_spec(MODULES[t]) is None]
    if missing:
        raise ConfigError(f"--log-to {','.join(missing)}: {', '.join(MODULES[t] for t in missing)} is not installed; "
                          f"{INSTALL}")


def _numbers(prefix: str, values: dict[str, Any]) -> dict[str, float]:
    """The numeric leaves of ``values`` as flat ``prefix/key`` names (booleans and strings left out)."""
    out: dict[str, float] = {}
    for key, value in values.items():
        name = f"{prefix}/{key}" if prefix else str(key)
        if isinstance(value, dict):
            out.update(_numbers(name, value))
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            out[name] = float(value)
    return out


def tracked_run(run_dir: Path) -> TrackedRun:
    """The record of the run in ``run_dir``, as the trackers get it."""
    metadata = json.loads((run_dir / "metadata.json").read_text(encoding="utf-8"))
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    invocation = metadata.get("invocation") or {}
    config = {
        "env": summary["env"]["name"], "env_version": summary["env"]["version"], "env_config": summary["env"]["config"],
        "model": summary.get("model"), "run_id": summary.get("run_id"), "status": summary.get("status"),
        "dataset": summary.get("dataset"), "run": metadata.get("run"), "code": metadata.get("code"),
        "endpoint": invocation.get("endpoint"), "sampling": invocation.get("sampling"),
        "limit": invocation.get("limit"), "sample_seed": invocation.get("sample_seed"),
    }
    metrics = _numbers("", summary.get("metrics") or {})
    for key, interval in (summary.get("intervals") or {}).items():
        if isinstance(interval, list) and len(interval) == 2 and all(isinstance(v, (int, float)) for v in interval):
            metrics[f"{key}_ci_low"], metrics[f"{key}_ci_high"] = float(interval[0]), float(interval[1])
    counts = {k: v for k, v in (summary.get("counts") or {}).items() if not isinstance(v, dict)}
    metrics.update(_numbers("counts", counts))
    metrics.update(_numbers("usage", summary.get("usage") or {}))
    artifacts = [run_dir / name for name in ("summary.json", "report.md", "metadata.json") if (run_dir / name).exists()]
    name = f"{config['env']}--{config['model']}--{config['run_id']}"
    return TrackedRun(name=name, config=config, metrics=metrics, artifacts=artifacts)


class TrackingError(RuntimeError):
    """A tracker refused the copy (no W&B key, an unreachable MLflow server); the run itself is complete."""


def log_eval_run(run_dir: Path, targets: list[str], out_root: Path, project: str | None = None) -> list[str]:
    """Log the finished run in ``run_dir`` to every target; returns one line per target saying where it went.

    Every target is tried even when one fails; then a :class:`TrackingError` names the failures, what did get
    logged, and that the run directory is complete, since a tracker's error comes after the evaluation's work.
    """
    run = tracked_run(run_dir)
    lines, failures = [], []
    for target in targets:
        try:
            lines.append(_to_wandb(run, run_dir, project) if target == "wandb" else _to_mlflow(run, out_root, project))
        except Exception as err:  # noqa: BLE001 - every tracker's own errors, reported together below
            failures.append(f"{target}: {type(err).__name__}: {err}")
    if failures:
        done = f"; {'; '.join(lines)}" if lines else ""
        raise TrackingError(f"--log-to failed ({'; '.join(failures)}){done}; the run itself is complete in {run_dir}")
    return lines


def _to_wandb(run: TrackedRun, run_dir: Path, project: str | None) -> str:
    import wandb

    directory = os.environ.get("WANDB_DIR") or str(run_dir)
    tracked = wandb.init(project=project or os.environ.get("WANDB_PROJECT") or DEFAULT_PROJECT, name=run.name,
                         config=run.config, dir=directory, job_type="eval", reinit="finish_previous")
    try:
        tracked.log(run.metrics)
        tracked.summary.update(run.metrics)
        artifact = wandb.Artifact(name=f"sv-run-{run.config['run_id']}", type="eval-run")
        for path in run.artifacts:
            artifact.add_file(str(path))
        tracked.log_artifact(artifact)
        where = tracked.dir if tracked.settings.mode == "offline" else tracked.url
    finally:
        tracked.finish()
    return f"logged to W&B ({tracked.settings.mode}): {where}"


def mlflow_tracking_uri(out_root: Path) -> str:
    """``MLFLOW_TRACKING_URI``, or a file store under ``out_root`` (allowed explicitly: MLflow 3 asks for that)."""
    uri = os.environ.get("MLFLOW_TRACKING_URI")
    if uri:
        return uri
    os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
    return (out_root / "mlruns").resolve().as_uri()


def _to_mlflow(run: TrackedRun, out_root: Path, project: str | None) -> str:
    import mlflow

    uri = mlflow_tracking_uri(out_root)
    mlflow.set_tracking_uri(uri)
    experiment = mlflow.set_experiment(project or DEFAULT_PROJECT)
    with mlflow.start_run(run_name=run.name, experiment_id=experiment.experiment_id) as active:
        mlflow.log_params({key: json.dumps(value, sort_keys=True)[:6000] for key, value in run.config.items()})
        mlflow.log_metrics(run.metrics)
        for path in run.artifacts:
            mlflow.log_artifact(str(path))
        run_id = active.info.run_id
    return f"logged to MLflow: run {run_id} in experiment {project or DEFAULT_PROJECT} at {uri}"


def trainer_defaults(targets: list[str], out_root: Path, run_dir: Path, project: str) -> None:
    """Point TRL's own tracker callbacks where :func:`log_eval_run` logs, unless the user's variables say otherwise:
    W&B under the training run's directory in ``project``, MLflow in the file store under ``out_root``."""
    if "wandb" in targets:
        os.environ.setdefault("WANDB_DIR", str(run_dir))
        os.environ.setdefault("WANDB_PROJECT", project)
    if "mlflow" in targets:
        os.environ["MLFLOW_TRACKING_URI"] = mlflow_tracking_uri(out_root)
        os.environ.setdefault("MLFLOW_EXPERIMENT_NAME", project)
