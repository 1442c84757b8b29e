"""Every leaderboard table shows its constant floor (issue 29): real summaries of several environments and splits
each get a ``floor`` row, a table whose runs record none says so, and ``sv report`` prints the metrics table."""

import json
from pathlib import Path

import pytest
from rich.console import Console

from security_verifiers.cli import main
from security_verifiers.report.leaderboard import build_leaderboard, render_table, write_leaderboard

#: (environment, cheap baseline, split): one table each, as ``sv bench`` names them.
RUNS = [("network-logs", "always-abstain", "test"), ("network-logs", "heuristic", "ood"),
        ("config-audit", "empty", "test"), ("redteam-attack", "noop", "test"),
        ("redteam-defense", "refuse-all", "ood"), ("phishing", "always-abstain", "test")]


def _summary(out: Path) -> dict:
    (path,) = out.glob("evals/*/*/summary.json")
    return json.loads(path.read_text())


@pytest.fixture(scope="module")
def summaries(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str, str], dict]:
    found = {}
    for env, baseline, split in RUNS:
        out = tmp_path_factory.mktemp(f"{env}-{split}")
        assert main(["eval", env, "--model", f"baseline:{baseline}", "--split", split, "--n", "5", "--out", str(out),
                     "--quiet"]) == 0
        found[env, baseline, split] = _summary(out)
    return found


def _entries(summaries: dict) -> list[dict]:
    return [{"env": f"{env} · {split}", "policy": f"baseline:{baseline}", "run_dir": f"runs/{env}-{split}",
             "summary": summary} for (env, baseline, split), summary in summaries.items()]


def _sections(md: str) -> dict[str, str]:
    return {part.split("\n", 1)[0]: part for part in md.split("\n## ")[1:]}


def _rich_text(board: dict) -> list[str]:
    texts = []
    for table in render_table(board):
        console = Console(record=True, width=250)
        console.print(table)
        texts.append(console.export_text())
    return texts


def test_every_table_of_several_environments_shows_its_floor(summaries, tmp_path: Path) -> None:
    board = build_leaderboard(_entries(summaries))
    assert len(board["envs"]) == len(RUNS)
    md = _sections(write_leaderboard(board, tmp_path)[0].read_text())
    assert set(md) == set(board["envs"])
    for name, table in board["envs"].items():
        assert table["constants"] and table["floor_note"] is None, name
        assert "\n| floor | constant floor: " in md[name], name
    assert all("│ floor " in text for text in _rich_text(board))


def test_a_table_whose_runs_record_no_floor_says_so(summaries, tmp_path: Path) -> None:
    # code-repair's summaries carry no constant_policy and no constant_reward: its table says it has no floor.
    summary = dict(summaries["config-audit", "empty", "test"], constant_policy=None)
    summary["metrics"] = {k: v for k, v in summary["metrics"].items() if k != "constant_reward"}
    board = build_leaderboard([{"env": "code-repair · test", "policy": "baseline:noop", "run_dir": "r",
                                "summary": summary}])
    table = board["envs"]["code-repair · test"]
    assert table["constants"] == [] and "defines no constant answer" in table["floor_note"]
    md = _sections(write_leaderboard(board, tmp_path)[0].read_text())["code-repair · test"]
    assert "*floor*: no constant floor: code-repair · test defines no constant answer" in md
    assert "no constant floor" in _rich_text(board)[0]


def test_a_floor_only_some_runs_record_names_them_and_the_others_are_noted(summaries, tmp_path: Path) -> None:
    with_floor = summaries["network-logs", "always-abstain", "test"]
    without = dict(with_floor, constant_policy=None)
    without["metrics"] = {**with_floor["metrics"], "constant_reward": None}
    board = build_leaderboard([{"env": "network-logs", "policy": p, "run_dir": p, "summary": s}
                               for p, s in (("old", without), ("new", with_floor))])
    table = board["envs"]["network-logs"]
    assert [c["runs"] for c in table["constants"]] == [["new"]]
    assert table["floor_note"] == "no constant floor for old: their summaries record none"
    md = write_leaderboard(board, tmp_path)[0].read_text()
    assert "| floor | constant floor: always-abstain " in md and "(for new)" in md
    assert "*floor*: no constant floor for old" in md


def test_a_floor_kept_only_as_the_flat_constant_reward_still_shows(summaries, tmp_path: Path) -> None:
    # A summary that kept the number under metrics.constant_reward but no constant_policy (the two used to have to
    # agree, so such a summary broke the whole leaderboard).
    summary = dict(summaries["redteam-defense", "refuse-all", "ood"], constant_policy=None)
    board = build_leaderboard([{"env": "redteam-defense", "policy": "p", "run_dir": "r", "summary": summary}])
    floor = summary["metrics"]["constant_reward"]
    assert board["envs"]["redteam-defense"]["constants"] == [
        {"policy": "constant", "answer": "", "reward_mean": floor, "runs": None}]
    assert "| floor | constant floor: constant " in write_leaderboard(board, tmp_path)[0].read_text()


def test_sv_report_prints_the_metrics_table_sv_eval_prints(tmp_path: Path, capsys) -> None:
    assert main(["eval", "network-logs", "--model", "baseline:heuristic", "--split", "test", "--n", "5", "--out",
                 str(tmp_path), "--run-id", "r"]) == 0
    eval_err = capsys.readouterr().err
    run_dir = tmp_path / "evals" / "network-logs--baseline-heuristic" / "r"
    assert main(["report", str(run_dir)]) == 0
    out, err = capsys.readouterr()
    assert "{" not in out  # no raw dict
    table = eval_err[eval_err.index("network-logs · baseline:heuristic"):eval_err.index("unparseable answers")]
    assert table in err and "reward_mean ↑" in err and "95% CI" in err
    assert f"wrote {run_dir / 'summary.json'}" in err
