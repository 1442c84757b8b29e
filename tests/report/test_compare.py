"""``sv compare``: paired deltas over shared items, and refusals for runs that measure different things."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from security_verifiers.cli import main
from security_verifiers.core.errors import ConfigError
from security_verifiers.report.compare import compare_runs


def _run(tmp_path: Path, model: str, run_id: str, *extra: str) -> Path:
    assert main(["eval", "network-logs", "--model", model, "--out", str(tmp_path), "--run-id", run_id,
                 "--quiet", *extra]) == 0
    return next((tmp_path / "evals").glob(f"*/{run_id}"))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("runs")
    return {"heuristic": _run(tmp, "baseline:heuristic", "h", "--n", "60"),
            "gbdt": _run(tmp, "baseline:gbdt", "g"),
            "abstain": _run(tmp, "baseline:always-abstain", "a", "--n", "60"),
            "window": _run(tmp, "baseline:heuristic", "w", "--n", "10", "--env-option", "window=5"),
            "ood": _run(tmp, "baseline:heuristic", "o", "--split", "ood", "--n", "10")}


def test_a_run_against_itself_differs_by_nothing(runs: dict[str, Path]) -> None:
    result = compare_runs(runs["heuristic"], runs["heuristic"], n_boot=50)
    assert result["items"] == {"shared": 60, "only_a": 0, "only_b": 0}
    for row in result["metrics"].values():
        assert row["delta"] in (0.0, None) and row["ci"] in ([0.0, 0.0], [None, None])


def test_deltas_are_paired_over_shared_items(runs: dict[str, Path]) -> None:
    result = compare_runs(runs["abstain"], runs["gbdt"], n_boot=200)
    assert result["items"] == {"shared": 60, "only_a": 0, "only_b": 140}
    row = result["metrics"]["reward_mean"]
    gbdt = [json.loads(line) for line in (runs["gbdt"] / "results.jsonl").read_text().splitlines()]
    abstain = [json.loads(line) for line in (runs["abstain"] / "results.jsonl").read_text().splitlines()]
    shared = {r["item_id"] for r in abstain}
    assert row["b"] == pytest.approx(sum(r["reward"] for r in gbdt if r["item_id"] in shared) / 60)
    assert row["a"] == pytest.approx(sum(r["reward"] for r in abstain) / 60)
    assert row["delta"] == pytest.approx(row["b"] - row["a"])
    lo, hi = row["ci"]
    assert lo <= row["delta"] <= hi and lo > 0  # gbdt beats always-abstain on these items


@pytest.mark.parametrize(("other", "message"), [
    ("window", "different rewards: environment config"),
    ("ood", "share no scored item"),
])
def test_runs_that_measure_different_things_are_refused(runs: dict[str, Path], other: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        compare_runs(runs["heuristic"], runs[other], n_boot=10)


def test_cli_prints_a_table_or_json_and_fails_in_one_line(runs: dict[str, Path], tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(runs["heuristic"]), str(runs["gbdt"]), "--n-boot", "20"]) == 0
    out = capsys.readouterr().out
    assert "60 shared items" in out and "reward_mean" in out.splitlines()[1]
    assert main(["compare", str(runs["heuristic"]), str(runs["gbdt"]), "--n-boot", "20", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["items"]["shared"] == 60
    assert main(["compare", str(runs["heuristic"]), str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "is not a run directory" in err and "Traceback" not in err
