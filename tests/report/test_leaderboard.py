"""The leaderboard: grouping by environment, ranking by mean reward, and its three renderings."""

import json
from pathlib import Path

import pytest
from rich.console import Console

from security_verifiers.envs.network_logs import NetworkLogs
from security_verifiers.report.leaderboard import build_leaderboard, render_table, write_leaderboard

HEADLINE = [{"key": key, "higher_is_better": up} for key, up in NetworkLogs.headline_metrics]


def summary(reward: float | None, errors: int = 0, version: str = "1.0.0", headline=HEADLINE) -> dict:
    metrics = {} if reward is None else {"reward_mean": reward, "expected_cost": 1.0 - reward, "f1": 0.5,
                                         "brier": 0.2, "abstain_rate": 0.1}
    intervals = {} if reward is None else {"reward_mean": [reward - 0.05, reward + 0.05]}
    return {"env": {"name": "network-logs", "version": version}, "model": "m", "headline_metrics": headline,
            "metrics": metrics, "intervals": intervals, "counts": {"errors": errors}}


def entry(policy: str, reward: float | None, env: str = "network-logs", **kwargs) -> dict:
    return {"env": env, "policy": policy, "run_dir": f"runs/{policy}", "summary": summary(reward, **kwargs)}


ORDER_CASES = [
    # Highest mean reward first.
    ([("low", 0.2), ("high", 0.9), ("mid", 0.5)], ["high", "mid", "low"]),
    # Equal rewards: by policy name, so the order never depends on input order.
    ([("b", 0.5), ("a", 0.5)], ["a", "b"]),
    # A run without a reward (everything errored) goes last, not first or in the middle.
    ([("none", None), ("ok", 0.1)], ["ok", "none"]),
]


@pytest.mark.parametrize(("runs", "expected"), ORDER_CASES)
def test_rows_are_sorted_by_reward(runs, expected) -> None:
    board = build_leaderboard([entry(p, r) for p, r in runs])
    assert [row["policy"] for row in board["envs"]["network-logs"]["rows"]] == expected


def test_rows_carry_headline_columns_ci_and_errors() -> None:
    board = build_leaderboard([entry("ref", 0.9, errors=2)])
    table = board["envs"]["network-logs"]
    assert table["columns"] == [key for key, _ in NetworkLogs.headline_metrics]
    assert table["higher_is_better"]["expected_cost"] is False
    row = table["rows"][0]
    assert row["reward_mean"] == 0.9 and row["expected_cost"] == pytest.approx(0.1)
    assert row["reward_ci"] == pytest.approx([0.85, 0.95]) and row["errors"] == 2
    assert board["schema_version"] == 1 and board["generated_at"]


def test_environments_get_separate_tables() -> None:
    other = [{"key": "reward_mean", "higher_is_better": True}]
    board = build_leaderboard([entry("a", 0.5), entry("b", 0.7, env="config-audit", headline=other)])
    assert list(board["envs"]) == ["config-audit", "network-logs"]
    assert board["envs"]["config-audit"]["columns"] == ["reward_mean"]


def test_mixed_scorer_versions_are_flagged() -> None:
    board = build_leaderboard([entry("a", 0.5), entry("b", 0.7, version="2.0.0")])
    assert "not comparable" in board["envs"]["network-logs"]["warnings"][0]


def test_write_and_render(tmp_path: Path) -> None:
    board = build_leaderboard([entry("ref", 0.9), entry("always-benign", 0.3, errors=1), entry("dead", None)])
    md_path, json_path = write_leaderboard(board, tmp_path / "out")
    assert json.loads(json_path.read_text()) == board
    md = md_path.read_text()
    assert "## network-logs" in md and "reward_mean ↑" in md and "expected_cost ↓" in md
    assert md.index("| 1 | ref |") < md.index("| 2 | always-benign |") < md.index("| 3 | dead |")
    tables = render_table(board)
    console = Console(record=True, width=200)
    for table in tables:
        console.print(table)
    text = console.export_text()
    assert len(tables) == 1 and "ref" in text and "0.9000" in text
