"""``--log-to wandb,mlflow``: offline W&B and a local MLflow file store receive the run's own numbers."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from security_verifiers.cli import main
from security_verifiers.core.errors import ConfigError
from security_verifiers.tracking import TrackingError, check_targets, log_eval_run, parse_targets, tracked_run


@pytest.fixture
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No tracker may reach a network: W&B offline under tmp_path, MLflow's store chosen by sv, neither's telemetry
    (MLflow's otherwise looks up config.mlflow-telemetry.io even for a file store; seen with strace)."""
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.setenv("WANDB_ERROR_REPORTING", "false")
    monkeypatch.setenv("MLFLOW_DISABLE_TELEMETRY", "true")
    monkeypatch.setenv("DO_NOT_TRACK", "true")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # what sv sets for its own file store, kept to this test
    monkeypatch.setenv("WANDB_DIR", str(tmp_path / "wandb-dir"))
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.delenv("WANDB_PROJECT", raising=False)
    (tmp_path / "wandb-dir").mkdir()
    return tmp_path


def _eval(out: Path, *extra: str) -> Path:
    assert main(["eval", "network-logs", "--model", "baseline:heuristic", "--limit", "6", "--quiet",
                 "--out", str(out), *extra]) == 0
    (run_dir,) = out.glob("evals/*/*/summary.json")
    return run_dir.parent


def _wandb_records(root: Path) -> dict[str, dict[str, float]]:
    """The offline W&B run's summary, read back from its own log file.

    ``wandb.finish()`` can return before W&B's service process has written the file (seen: 7 bytes, the header
    alone), so the service is shut down first, as at the end of a process, which flushes it.
    """
    import wandb
    from wandb.proto import wandb_internal_pb2 as pb
    from wandb.sdk.internal import datastore

    wandb.teardown()
    (path,) = root.glob("**/offline-run-*/run-*.wandb")
    store = datastore.DataStore()
    store.open_for_scan(str(path))
    summary: dict[str, float] = {}
    config: dict[str, object] = {}
    while (data := store.scan_data()) is not None:
        record = pb.Record()
        record.ParseFromString(data)
        if record.WhichOneof("record_type") == "summary":
            for item in record.summary.update:
                key = item.key or "/".join(item.nested_key)
                summary[key] = json.loads(item.value_json)
        if record.WhichOneof("record_type") == "run":  # the run's opening record carries its config
            for item in record.run.config.update:
                config[item.key or "/".join(item.nested_key)] = json.loads(item.value_json)
    return {"summary": summary, "config": config}


def test_mlflow_file_store_holds_the_summarys_metrics_params_and_report(offline: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    from mlflow.tracking import MlflowClient

    run_dir = _eval(offline / "out", "--log-to", "mlflow")
    summary = json.loads((run_dir / "summary.json").read_text())
    err = capsys.readouterr().err
    assert "logged to MLflow: run " in err
    store = (offline / "out" / "mlruns").resolve().as_uri()
    client = MlflowClient(store)
    (experiment,) = [e for e in client.search_experiments() if e.name == "security-verifiers"]
    (run,) = client.search_runs([experiment.experiment_id])
    assert run.data.metrics["reward_mean"] == pytest.approx(summary["metrics"]["reward_mean"])
    assert run.data.metrics["reward_mean_ci_low"] == pytest.approx(summary["intervals"]["reward_mean"][0])
    assert run.data.metrics["counts/rollouts"] == 6
    assert json.loads(run.data.params["model"]) == "baseline:heuristic"
    assert {a.path for a in client.list_artifacts(run.info.run_id)} >= {"summary.json", "report.md"}


def test_wandb_offline_run_holds_the_summarys_metrics_and_config(offline: Path) -> None:
    run_dir = _eval(offline / "out", "--log-to", "wandb")
    summary = json.loads((run_dir / "summary.json").read_text())
    logged = _wandb_records(offline / "wandb-dir")
    assert logged["summary"]["reward_mean"] == pytest.approx(summary["metrics"]["reward_mean"])
    assert logged["summary"]["counts/rollouts"] == 6
    assert logged["config"]["model"] == "baseline:heuristic" and logged["config"]["env"] == "network-logs"


def test_a_failing_tracker_names_the_complete_run_and_the_others_still_log(offline: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    run_dir = _eval(offline / "out")
    bad = offline / "not-a-directory"
    bad.write_text("")  # MLflow cannot put a file store under a file
    monkeypatch.setenv("MLFLOW_TRACKING_URI", bad.as_uri() + "/mlruns")
    complete = re.escape(str(run_dir))
    with pytest.raises(TrackingError, match=rf"mlflow: .*; logged to W&B \(offline\).*complete in {complete}$"):
        log_eval_run(run_dir, ["mlflow", "wandb"], offline / "out")
    assert _wandb_records(offline / "wandb-dir")["summary"]["counts/rollouts"] == 6


def test_tracked_run_is_built_from_the_run_directory_alone(offline: Path) -> None:
    run = tracked_run(_eval(offline / "out"))
    assert run.name.startswith("network-logs--baseline:heuristic--")
    assert {"reward_mean", "counts/errors", "usage/prompt_tokens"} <= set(run.metrics)
    assert all(isinstance(v, float) for v in run.metrics.values())


def test_unknown_and_missing_trackers_are_refused_before_anything_runs(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="unknown tracker.*tensorboard.*choose from wandb, mlflow"):
        parse_targets("wandb,tensorboard")
    assert parse_targets("MLflow, wandb,mlflow") == ["mlflow", "wandb"]
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "wandb" else real(name, *a))
    with pytest.raises(ConfigError, match=r"wandb is not installed; pip install 'security-verifiers\[tracking\]'"):
        check_targets(["wandb"])
    assert main(["eval", "network-logs", "--model", "baseline:heuristic", "--log-to", "wandb",
                 "--out", str(tmp_path / "o")]) == 2
    assert not (tmp_path / "o").exists()


def test_sv_train_hands_the_trackers_to_trl(tmp_path: Path) -> None:
    from trl import SFTConfig

    from security_verifiers.train.presets import load_preset
    from security_verifiers.train.trainers import _common_args

    config = SFTConfig(**_common_args(tmp_path, 0, True, False, ["wandb", "mlflow"]))
    assert config.report_to == ["wandb", "mlflow"]
    assert SFTConfig(**_common_args(tmp_path, 0, True, False)).report_to == []
    preset = load_preset("tiny-cpu", None)
    assert preset.log_to == []
    with pytest.raises(ValueError, match="log_to"):
        preset.model_validate({**preset.model_dump(), "log_to": ["tensorboard"]})
