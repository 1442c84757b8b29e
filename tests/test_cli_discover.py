"""What a newcomer looks for: `sv --version`, `sv envs --options ENV`, defaults in `sv eval --help`, a clear error
for --split with --data, and a terminal leaderboard that never cuts a policy name."""

import argparse
from pathlib import Path

import pytest
from rich.console import Console

from security_verifiers.cli import build_parser, main
from security_verifiers.core.datasets import write_jsonl
from security_verifiers.report.leaderboard import build_leaderboard, render_table
from tests.helpers import e1_item


def test_version(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0 and capsys.readouterr().out.startswith("sv ")


def test_envs_options_lists_names_types_defaults_and_descriptions(capsys) -> None:
    assert main(["envs", "--options", "network-logs"]) == 0
    out = capsys.readouterr().out
    assert "  window (int; default 20): Preceding flows of the host shown in the prompt." in out
    assert "prompt_style (full | compact; default \"full\")" in out
    assert '"missed": 10.0' in out  # a nested option's default, as the JSON --env-option takes


def test_envs_options_of_an_unknown_environment_is_an_error(capsys) -> None:
    assert main(["envs", "--options", "nope"]) == 2 and "unknown environment" in capsys.readouterr().err


def test_every_eval_option_that_takes_a_value_states_its_default() -> None:
    eval_parser = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)) \
        .choices["eval"]
    missing = [a.option_strings[0] for a in eval_parser._actions
               if a.option_strings and a.nargs != 0 and a.help and a.help != argparse.SUPPRESS
               and "default" not in a.help]
    assert missing == []


def test_split_with_data_is_an_error(tmp_path: Path, capsys) -> None:
    data = tmp_path / "items.jsonl"
    write_jsonl([e1_item(0, "Malicious")], data)
    assert main(["eval", "network-logs", "--model", "baseline:heuristic", "--data", str(data), "--split", "ood",
                 "--out", str(tmp_path)]) == 2
    assert "--split and --data exclude each other" in capsys.readouterr().err
    assert not (tmp_path / "evals").exists()


def test_the_terminal_leaderboard_never_cuts_a_policy_name() -> None:
    name = "openrouter/meta-llama/llama-3.1-405b-instruct-turbo-with-a-very-long-deployment-suffix"
    summary = {"env": {"name": "network-logs", "version": "1"}, "model": name,
               "headline_metrics": [{"key": "reward_mean", "higher_is_better": True}],
               "metrics": {"reward_mean": 0.5}, "intervals": {"reward_mean": [0.4, 0.6]}, "counts": {"errors": 0}}
    board = build_leaderboard([{"env": "network-logs", "policy": name, "run_dir": "r", "summary": summary}])
    console = Console(width=60, record=True)
    for table in render_table(board):
        console.print(table)
    rows = [line.split("│") for line in console.export_text().splitlines() if line.startswith("│")]
    assert "".join(cells[2].strip() for cells in rows) == name  # the policy column, folded over lines
