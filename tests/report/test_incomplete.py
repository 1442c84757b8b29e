"""Stopped or truncated runs are marked: summary.json `complete`, a warning atop report.md, a leaderboard marker."""

import json
from pathlib import Path

import pytest

from security_verifiers.cli import main
from security_verifiers.core.types import RolloutRecord
from security_verifiers.report.leaderboard import build_leaderboard, write_leaderboard
from security_verifiers.report.status import run_status


def records(n: int) -> list[RolloutRecord]:
    return [RolloutRecord(env="network-logs", env_version="1", item_id=f"i{i}", split="test") for i in range(n)]


CASES = [
    # A finished run with every rollout: complete.
    ("finished", 5, 1, 5, {"complete": True, "expected_rollouts": 5, "missing_rollouts": 0}),
    # Stopped by the error-rate guard or Ctrl-C after three of five items.
    ("stopped", 5, 1, 3, {"complete": False, "expected_rollouts": 5, "missing_rollouts": 2}),
    # Killed: the status never left "running", even with every rollout written.
    ("running", 5, 1, 5, {"complete": False, "expected_rollouts": 5, "missing_rollouts": 0}),
    # "finished" but records lost afterwards (a truncated results.jsonl): samples count too.
    ("finished", 4, 2, 6, {"complete": False, "expected_rollouts": 8, "missing_rollouts": 2}),
]


@pytest.mark.parametrize(("status", "n", "samples", "have", "expected"), CASES)
def test_completeness_from_metadata_and_records(status, n, samples, have, expected) -> None:
    metadata = {"status": status, "dataset": {"n": n}, "run": {"samples": samples}}
    counts = run_status(metadata, records(have), cut_line=None).completeness()
    assert {k: counts[k] for k in expected} == expected


@pytest.fixture
def stopped_run(tmp_path: Path) -> Path:
    """A baseline run of 10 items, then cut to 8 rollouts and marked stopped, as the error-rate guard leaves it."""
    assert main(["eval", "network-logs", "--model", "baseline:heuristic", "--n", "10", "--out", str(tmp_path),
                 "--run-id", "s", "--quiet"]) == 0
    run_dir = tmp_path / "evals" / "network-logs--baseline-heuristic" / "s"
    results = run_dir / "results.jsonl"
    results.write_text("".join(line + "\n" for line in results.read_text().splitlines()[:8]))
    meta = json.loads((run_dir / "metadata.json").read_text())
    (run_dir / "metadata.json").write_text(json.dumps({**meta, "status": "stopped"}))
    assert main(["report", str(run_dir)]) == 0
    return run_dir


def test_summary_and_report_of_a_stopped_run_say_it_is_incomplete(stopped_run: Path) -> None:
    summary = json.loads((stopped_run / "summary.json").read_text())
    assert (summary["complete"], summary["expected_rollouts"], summary["missing_rollouts"]) == (False, 10, 2)
    report = (stopped_run / "report.md").read_text()
    assert "> **Incomplete run** (status: stopped): it holds 8 of 10 rollouts" in report
    assert report.index("Incomplete run") < report.index("## Counts")  # at the top, not below the metrics
    assert "sv eval --resume --run-id s" in report


def test_a_finished_run_has_no_warning(tmp_path: Path) -> None:
    assert main(["eval", "network-logs", "--model", "baseline:heuristic", "--n", "3", "--out", str(tmp_path),
                 "--run-id", "f", "--quiet"]) == 0
    run_dir = tmp_path / "evals" / "network-logs--baseline-heuristic" / "f"
    assert json.loads((run_dir / "summary.json").read_text())["complete"] is True
    assert "Incomplete" not in (run_dir / "report.md").read_text()


def test_the_leaderboard_marks_the_incomplete_row(stopped_run: Path, tmp_path: Path) -> None:
    summary = json.loads((stopped_run / "summary.json").read_text())
    full = {**summary, "complete": True, "missing_rollouts": 0}
    board = build_leaderboard([{"env": "network-logs", "policy": "cut", "run_dir": stopped_run, "summary": summary},
                               {"env": "network-logs", "policy": "full", "run_dir": stopped_run, "summary": full}])
    policies = {row["policy"] for row in board["envs"]["network-logs"]["rows"]}
    assert policies == {"cut (incomplete 8/10)", "full"}
    md_path, _ = write_leaderboard(board, tmp_path / "board")
    assert "cut (incomplete 8/10)" in md_path.read_text()
