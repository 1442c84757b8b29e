"""Self-play through the command line: an E5 run's successful attacks become E6 items (``sv data build
redteam-defense --from-run RUN``) that break the naive assistant and not the reference; runs that cannot give
items are clear errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from security_verifiers.cli import main
from security_verifiers.core.rundir import read_records
from security_verifiers.envs.redteam.defense.env import RedteamDefense
from security_verifiers.envs.redteam.selfplay import SPLIT

EXIT_USAGE = 2


def run(out: Path, env: str, model: str, *options: str) -> Path:
    """``sv eval`` offline; the run directory."""
    assert main(["eval", env, "--model", model, *options, "--out", str(out), "--run-id", "r", "--quiet"]) == 0
    return out / "evals" / f"{env}--{model.replace(':', '-')}" / "r"


def build(run_dir: Path, out: Path, *options: str) -> int:
    return main(["data", "build", "redteam-defense", "--from-run", str(run_dir), "--out", str(out), *options])


def summary(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "summary.json").read_text())


def test_an_attack_run_becomes_defense_items_that_break_naive_and_not_the_reference(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    attack = run(tmp_path / "attack", "redteam-attack", "baseline:templates", "--split", "test")
    wins = [r for r in read_records(attack / "results.jsonl") if r.outcome["success"]]
    data = tmp_path / "selfplay.jsonl"
    capsys.readouterr()
    assert build(attack, data) == 0
    report = json.loads(capsys.readouterr().out)
    items = RedteamDefense.read_dataset(data).items
    assert report["n"] == len(items) == len(wins) > 0 and report["left_out"] == 0
    assert {item.split for item in items} == {SPLIT}
    assert {item.target["attack"]["source"] for item in items} == {"selfplay"}
    assert {item.meta["from_item"] for item in items} == {r.item_id for r in wins}
    assert len({item.input["canary"] for item in items}) == len(items)  # a new canary each
    naive = run(tmp_path / "defense", "redteam-defense", "baseline:naive", "--data", str(data))
    assert summary(naive)["metrics"]["attack_success_rate"] == 1.0
    assert all(r.outcome["breached"] for r in read_records(naive / "results.jsonl"))
    reference = run(tmp_path / "defense", "redteam-defense", "baseline:reference", "--data", str(data))
    assert summary(reference)["metrics"]["attack_success_rate"] == 0.0
    assert summary(reference)["metrics"]["reward_mean"] == pytest.approx(1.0)


def test_a_directory_without_results_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert build(tmp_path, tmp_path / "out.jsonl") == EXIT_USAGE
    assert "no results.jsonl" in capsys.readouterr().err
    assert not (tmp_path / "out.jsonl").exists()


def test_a_run_of_another_environment_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    phishing = run(tmp_path, "phishing", "baseline:reference", "--split", "test", "--n", "2")
    capsys.readouterr()
    assert build(phishing, tmp_path / "out.jsonl") == EXIT_USAGE
    assert "not of redteam-attack" in capsys.readouterr().err
    assert not (tmp_path / "out.jsonl").exists()


def test_an_environment_that_builds_no_items_from_runs_says_which_do(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["data", "build", "phishing", "--from-run", str(tmp_path), "--out", str(tmp_path / "out.jsonl")])
    assert code == EXIT_USAGE
    assert "phishing builds no items from runs (--from-run); environments that do: redteam-defense (from " \
           "redteam-attack runs)" in capsys.readouterr().err
    assert not (tmp_path / "out.jsonl").exists()


def test_from_run_takes_no_split(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert build(tmp_path, tmp_path / "out.jsonl", "--split", "test") == EXIT_USAGE
    assert "none of --split" in capsys.readouterr().err


def test_a_run_without_a_success_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    noop = run(tmp_path, "redteam-attack", "baseline:noop", "--split", "test", "--n", "5")
    capsys.readouterr()
    assert build(noop, tmp_path / "out.jsonl") == EXIT_USAGE
    assert "no successful attack" in capsys.readouterr().err
    assert not (tmp_path / "out.jsonl").exists()
