"""``sv gate``: a run fails (exit 1) only where a metric dropped beyond its tolerance with the interval excluding 0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from security_verifiers.cli import main
from security_verifiers.report.gate import FAIL, PASS, UNDEFINED, _row


def _run(tmp: Path, env: str, model: str, run_id: str, *extra: str) -> Path:
    assert main(["eval", env, "--model", model, "--out", str(tmp), "--run-id", run_id, "--quiet", *extra]) == 0
    return next((tmp / "evals").glob(f"*/{run_id}"))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("runs")
    return {"classical": _run(tmp, "phishing", "baseline:classical", "c", "--n", "40"),  # 0.977 on the whole split
            "heuristic": _run(tmp, "phishing", "baseline:heuristic", "h", "--n", "40"),  # 0.871
            "ood": _run(tmp, "phishing", "baseline:heuristic", "o", "--split", "ood", "--n", "5"),
            "network-logs": _run(tmp, "network-logs", "baseline:heuristic", "n", "--n", "5")}


def _gate(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:
    code = main(["gate", *argv, "--json", "--n-boot", "200"])
    out = capsys.readouterr().out
    return code, (json.loads(out) if out else {})


def test_a_run_against_itself_passes_on_every_headline_metric(runs: dict[str, Path],
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    code, result = _gate(capsys, str(runs["heuristic"]), "--against", str(runs["heuristic"]))
    assert code == 0 and result["passed"] and result["items"]["shared"] == 40
    assert [row["metric"] for row in result["rows"]][0] == "reward_mean" and len(result["rows"]) == 7
    assert {row["verdict"] for row in result["rows"]} <= {PASS, UNDEFINED}


def test_a_worse_policy_against_a_better_one_fails_on_reward_mean(runs: dict[str, Path],
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    code, result = _gate(capsys, str(runs["heuristic"]), "--against", str(runs["classical"]))
    reward = result["rows"][0]
    assert code == 1 and not result["passed"]
    assert reward["metric"] == "reward_mean" and reward["verdict"] == FAIL
    assert reward["drop"] == pytest.approx(reward["baseline"] - reward["run"]) and reward["drop"] > 0.01
    assert reward["ci"][1] < 0  # the whole interval of the change is below 0
    # the other way round the reward rose: it passes (another headline metric may still drop)
    code, result = _gate(capsys, str(runs["classical"]), "--against", str(runs["heuristic"]), "--metric", "reward_mean")
    assert code == 0 and result["rows"][0]["delta"] > 0.01


def test_a_drop_within_its_tolerance_passes(runs: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    code, result = _gate(capsys, str(runs["heuristic"]), "--against", str(runs["classical"]), "--metric",
                         "reward_mean", "--max-drop", "reward_mean=0.5")
    assert code == 0 and result["rows"][0]["verdict"] == PASS and result["rows"][0]["max_drop"] == 0.5
    # the table: one row per metric, the verdict in it
    assert main(["gate", str(runs["heuristic"]), "--against", str(runs["classical"]), "--metric", "reward_mean",
                 "--n-boot", "50"]) == 1
    out = capsys.readouterr().out
    assert "reward_mean" in out and "FAIL" in out


@pytest.mark.parametrize(("argv", "message"), [
    # runs of different environments measure different rewards
    (["heuristic", "--against", "network-logs"], "different rewards: environment name"),
    # different splits: nothing to pair
    (["heuristic", "--against", "ood"], "share no scored item"),
    # not a run directory
    (["heuristic", "--against", "."], "is not a run directory"),
    # a baseline run is needed
    (["heuristic"], "--against BASELINE_RUN"),
    # outside the headline, the direction is not known
    (["heuristic", "--against", "classical", "--metric", "precision"], "precision:higher or precision:lower"),
    # a metric the environment does not report
    (["heuristic", "--against", "classical", "--metric", "nothing:higher"], "not reported by phishing"),
    (["heuristic", "--against", "classical", "--max-drop", "f1=much"], "give a number"),
    # --record measures baselines, not runs
    (["heuristic", "--record"], "--record takes only --env"),
])
def test_usage_errors_exit_2_in_one_line(runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         argv: list[str], message: str) -> None:
    paths = [str(runs[a]) if a in runs else (str(tmp_path) if a == "." else a) for a in argv]
    assert main(["gate", *paths]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


@pytest.mark.parametrize(("higher", "delta", "ci", "max_drop", "verdict"), [
    (True, -0.05, [-0.08, -0.02], 0.01, FAIL),   # down, beyond tolerance, interval below 0
    (True, -0.05, [-0.08, 0.01], 0.01, PASS),    # the interval reaches 0: could be noise
    (True, -0.005, [-0.008, -0.002], 0.01, PASS),  # a real drop, within tolerance
    (True, 0.05, [0.02, 0.08], 0.01, PASS),      # better
    (False, 0.05, [0.02, 0.08], 0.01, FAIL),     # lower is better (a cost went up)
    (False, -0.05, [-0.08, -0.02], 0.01, PASS),  # lower is better, and it went down
    (True, None, [None, None], 0.01, UNDEFINED),  # undefined in one run
])
def test_a_drop_is_read_in_each_metrics_direction(higher: bool, delta: float | None, ci: list, max_drop: float,
                                                  verdict: str) -> None:
    compared = {"a": 0.5, "b": None if delta is None else 0.5 + delta, "delta": delta, "ci": ci}
    assert _row("m", higher, compared, max_drop)["verdict"] == verdict
