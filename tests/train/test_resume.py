"""``sv train --resume RUN_DIR``: a run interrupted in its GRPO stage continues from its last checkpoint, its
SFT stage and teacher kept, its step log without a step twice; a finished run is left as it is."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from security_verifiers.cli import main
from security_verifiers.train.trainers import StepLog
from tests.train.test_pipeline import SMOKE

#: Three GRPO steps, a checkpoint after each: the interruption (in step 2's log call, before its checkpoint) leaves
#: checkpoint-1, and step 2's row already logged.
RESUMABLE = {**SMOKE, "grpo": {**SMOKE["grpo"], "steps": 3}, "checkpoint_every": 1}


def _rows(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()]


def _manifest(run: Path) -> dict[str, Any]:
    return json.loads((run / "manifest.json").read_text())


@pytest.fixture(scope="module")
def interrupted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A run interrupted in GRPO step 2, what it held then, and the same run resumed."""
    tmp = tmp_path_factory.mktemp("resume")
    config = tmp / "smoke.yaml"
    config.write_text(yaml.safe_dump(RESUMABLE))
    write = StepLog.write

    def interrupting(self: StepLog, step: int, max_steps: int, logs: dict[str, Any]) -> None:
        write(self, step, max_steps, logs)
        if self.stage.startswith("grpo") and step == 2 and "loss" in logs:
            raise KeyboardInterrupt

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(StepLog, "write", interrupting)
        code = main(["train", "grpo", "--env", "network-logs", "--config", str(config), "--seed", "1",
                     "--out", str(tmp), "--run-id", "r"])
    run = tmp / "r"
    then = {"code": code, "manifest": _manifest(run), "rows": _rows(run),
            "checkpoints": sorted(p.name for p in (run / "grpo" / "trainer").glob("checkpoint-*")),
            "sft_mtime": (run / "sft" / "checkpoint" / "model.safetensors").stat().st_mtime_ns,
            "teacher_mtime": (run / "teacher" / "results.jsonl").stat().st_mtime_ns,
            "init_mtime": (run / "init" / "model.safetensors").stat().st_mtime_ns}
    resumed = main(["train", "--resume", str(run)])
    return {"run": run, "then": then, "resumed": resumed}


def test_the_interruption_is_recorded_and_leaves_a_checkpoint(interrupted: dict[str, Any]) -> None:
    then = interrupted["then"]
    assert then["code"] == 130
    assert then["manifest"]["status"] == "stopped" and "KeyboardInterrupt" in then["manifest"]["status_reason"]
    assert set(then["manifest"]["stages"]) == {"sft"}  # the SFT stage recorded, GRPO not
    assert then["checkpoints"] == ["checkpoint-1"]  # step 2 was logged, not saved
    grpo = [r["step"] for r in then["rows"] if r["stage"] == "grpo:grpo"]
    assert grpo == [1, 2]


def test_the_resumed_run_finishes_from_its_checkpoint_without_redoing_sft(interrupted: dict[str, Any]) -> None:
    run, then = interrupted["run"], interrupted["then"]
    assert interrupted["resumed"] == 0
    manifest = _manifest(run)
    assert manifest["status"] == "finished" and (run / "summary.json").is_file()
    assert manifest["stages"]["sft"] == then["manifest"]["stages"]["sft"]  # same digest, same record
    assert (run / "sft" / "checkpoint" / "model.safetensors").stat().st_mtime_ns == then["sft_mtime"]
    assert (run / "teacher" / "results.jsonl").stat().st_mtime_ns == then["teacher_mtime"]  # not replayed
    assert (run / "init" / "model.safetensors").stat().st_mtime_ns == then["init_mtime"]
    [entry] = manifest["resumes"]
    assert entry["stages"]["sft"] == "kept"
    assert entry["stages"]["grpo"] == {"from_step": 1, "log_rows_dropped": 1}
    assert "KeyboardInterrupt" in entry["ended"]
    assert not list((run / "grpo" / "trainer").glob("checkpoint-*"))  # removed once the stage was recorded


def test_the_step_log_holds_each_step_once(interrupted: dict[str, Any]) -> None:
    run, then = interrupted["run"], interrupted["then"]
    rows = _rows(run)
    sft = [r for r in rows if r["stage"] == "sft"]
    assert sft == [r for r in then["rows"] if r["stage"] == "sft"]  # untouched
    steps = [r["step"] for r in rows if r["stage"] == "grpo:grpo" and "loss" in r]
    assert steps == [1, 2, 3]
    assert rows[: len(then["rows"]) - 1] == then["rows"][:-1]  # the rows up to the checkpoint are kept as written


def test_the_reward_counts_cover_the_whole_stage(interrupted: dict[str, Any]) -> None:
    """Restored from the checkpoint: step 1's counts (before the interruption) plus steps 2 and 3 (after)."""
    run = interrupted["run"]
    counts = _manifest(run)["rl_reward_counts"]
    logged = sum(r["scored"] for r in _rows(run) if r["stage"] == "grpo:grpo" and "loss" in r)
    assert counts["scored"] == logged == 3 * 2 * 2  # steps × prompts × generations


def test_a_finished_run_resumed_is_left_as_it_is(interrupted: dict[str, Any],
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    run = interrupted["run"]
    before = (run / "manifest.json").read_text()
    capsys.readouterr()
    assert main(["train", "--resume", str(run)]) == 0
    assert "nothing to resume" in capsys.readouterr().out
    assert (run / "manifest.json").read_text() == before


#: Flags given again that disagree with the run: each is refused, naming both values.
CONFLICTS = [
    (["gdpo"], ["gdpo", "grpo"]),  # another command
    (["--seed", "4"], ["--seed 4", "1"]),  # another seed
    (["--env", "phishing"], ["phishing", "network-logs"]),  # another environment
    (["--env-option", "window=2"], ["window=2", "1"]),  # another option
]


@pytest.mark.parametrize(("flags", "named"), CONFLICTS)
def test_a_flag_that_disagrees_with_the_run_is_refused(interrupted: dict[str, Any], flags: list[str],
                                                       named: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["train", *flags[:1], "--resume", str(interrupted["run"])] if not flags[0].startswith("-") \
        else ["train", "--resume", str(interrupted["run"]), *flags]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert all(name in err for name in named), err


def test_a_preset_that_disagrees_names_the_setting(interrupted: dict[str, Any], tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "other.yaml"
    config.write_text(yaml.safe_dump({**RESUMABLE, "grpo": {**RESUMABLE["grpo"], "steps": 5}}))
    assert main(["train", "--resume", str(interrupted["run"]), "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert "grpo.steps: 5 given, 3 in the run" in err, err


def test_a_directory_that_is_not_a_training_run_is_refused(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    eval_run = tmp_path / "eval"  # an sv eval run directory: metadata.json, no manifest
    eval_run.mkdir()
    (eval_run / "metadata.json").write_text("{}")
    other = tmp_path / "other"  # some other JSON called manifest.json
    other.mkdir()
    (other / "manifest.json").write_text('{"name": "x"}')
    for path, words in ((tmp_path / "empty", "not a training run directory"),
                        (eval_run, "not a training run directory"),
                        (other, "has no command"),
                        (tmp_path / "missing", "not a directory")):
        assert main(["train", "--resume", str(path)]) == 2
        err = capsys.readouterr().err
        assert words in err, err
