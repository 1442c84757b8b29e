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


def with_floor(policy: str, reward: float, floor: float, env: str = "network-logs") -> dict:
    e = entry(policy, reward, env=env)
    e["summary"]["constant_policy"] = {"policy": "always-abstain", "reward_mean": floor, "note": ".",
                                       "answer": '{"label": "Abstain", "p_malicious": 0.45}'}
    e["summary"]["metrics"]["constant_reward"] = floor
    return e


def test_the_constant_floor_is_an_unranked_row_in_its_place(tmp_path: Path) -> None:
    # Three runs on the same items share one floor, 0.8907: the always-abstain run (0.89) falls below it.
    board = build_leaderboard([with_floor("gbdt", 0.95, 0.8907), with_floor("always-abstain", 0.89, 0.8907),
                               with_floor("reference", 1.0, 0.8907)])
    table = board["envs"]["network-logs"]
    assert [row["policy"] for row in table["rows"]] == ["reference", "gbdt", "always-abstain"]  # floors are not runs
    assert table["constants"] == [{"policy": "always-abstain", "answer": '{"label": "Abstain", "p_malicious": 0.45}',
                                   "reward_mean": 0.8907, "runs": None}]
    md = write_leaderboard(board, tmp_path)[0].read_text()
    lines = [line for line in md.splitlines() if line.startswith("| ")][1:]
    assert [line.split(" | ")[0] for line in lines] == ["| 1", "| 2", "| floor", "| 3"]
    assert 'constant floor: always-abstain {"label": "Abstain", "p_malicious": 0.45} | 0.8907 | n/a |' in lines[2]
    console = Console(record=True, width=250)
    console.print(render_table(board)[0])
    assert "floor" in console.export_text()


def test_floors_of_different_items_name_their_runs() -> None:
    # Runs over different items (another dataset, rollouts left out by errors) have different floors.
    board = build_leaderboard([with_floor("a", 0.95, 0.89), with_floor("b", 0.5, 0.80)])
    constants = board["envs"]["network-logs"]["constants"]
    assert [(c["reward_mean"], c["runs"]) for c in constants] == [(0.89, ["a"]), (0.80, ["b"])]


def test_summaries_without_a_floor_give_no_floor_row_but_a_note(tmp_path: Path) -> None:
    board = build_leaderboard([entry("a", 0.5)])
    assert board["envs"]["network-logs"]["constants"] == []
    section = write_leaderboard(board, tmp_path)[0].read_text().split("## network-logs")[1]
    assert "| floor |" not in section and "*floor*: no constant floor: network-logs defines no constant" in section
