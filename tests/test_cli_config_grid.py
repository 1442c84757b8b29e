"""``sv eval --config FILE``, the ENV1,ENV2 × A,B grid, and ``--limit``/``--sample-seed`` through the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from security_verifiers.cli import main


def _runs(out: Path) -> dict[str, dict]:
    """Metadata of every run under ``out`` by ``<env>--<model>`` folder."""
    return {path.parent.parent.name: json.loads(path.read_text()) for path in out.glob("evals/*/*/metadata.json")}


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "run.yaml"
    path.write_text(text)
    return path


def test_a_config_file_sets_every_flag_and_the_command_line_wins(tmp_path: Path) -> None:
    config = _config(tmp_path, "env: network-logs\nmodel: baseline:heuristic\nsplit: test,ood\nlimit: 6\n"
                     "concurrency: 3\nenv-option: {}\nquiet: true\nmax_error_rate: 0.2\n")
    assert main(["eval", "--config", str(config), "--limit", "4", "--out", str(tmp_path / "out")]) == 0
    (run,) = _runs(tmp_path / "out").values()
    assert run["model"] == "baseline:heuristic" and run["env"]["name"] == "network-logs"
    assert run["run"]["concurrency"] == 3 and run["run"]["max_error_rate"] == 0.2
    assert run["invocation"]["limit"] == "4"  # the command line's, not the file's 6
    recorded = run["config_file"]
    assert recorded["path"] == str(config.resolve()) and recorded["settings"]["limit"] == 6
    assert len(recorded["sha256"]) == 64
    results = (next((tmp_path / "out").glob("evals/*/*")) / "results.jsonl").read_text().splitlines()
    assert len(results) == 8  # 4 of test and 4 of ood


@pytest.mark.parametrize(("text", "words"), [
    ("env: network-logs\nmodle: baseline:heuristic\n", "unknown setting(s) modle; valid: "),
    ("- env\n", "expected a mapping"),
    ("env: [network-logs\n", "not valid YAML"),
    ("env: network-logs\nmodel: baseline:heuristic\nconcurrency: many\n", "concurrency: invalid value"),
    ("env: network-logs\nmodel: baseline:heuristic\nquiet: 3\n", "quiet is a switch"),
])
def test_bad_config_files_are_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str,
                                              words: str) -> None:
    assert main(["eval", "--config", str(_config(tmp_path, text)), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_a_missing_config_file_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "--config", str(tmp_path / "nope.yaml")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_a_grid_runs_every_pair_and_prints_one_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["eval", "network-logs,redteam-defense", "--model", "baseline:reference,baseline:refuse-all",
            "--limit", "3", "--quiet", "--out", str(tmp_path / "out")]
    # refuse-all is a redteam-defense baseline only: the network-logs pair is refused before any run starts
    assert main(argv) == 2
    assert "refuse-all" in capsys.readouterr().err
    argv = ["eval", "network-logs,phishing", "--model", "baseline:reference,baseline:always-abstain",
            "--limit", "3", "--quiet", "--out", str(tmp_path / "out")]
    assert main(argv) == 0
    runs = _runs(tmp_path / "out")
    assert sorted(runs) == ["network-logs--baseline-always-abstain", "network-logs--baseline-reference",
                            "phishing--baseline-always-abstain", "phishing--baseline-reference"]
    table = capsys.readouterr().out
    assert "sv eval grid" in table and table.count("finished") == 4
    assert table.count("1.0000") >= 2  # the references


def test_a_grid_refuses_an_unknown_environment_before_running_anything(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "network-logs,nope", "--model", "baseline:reference", "--out", str(tmp_path / "o")]) == 2
    assert "unknown environment" in capsys.readouterr().err and not (tmp_path / "o").exists()


def test_limit_ranges_and_samples_through_the_command_line(tmp_path: Path) -> None:
    base = ["eval", "network-logs", "--model", "baseline:reference", "--quiet"]

    def ids(*flags: str) -> list[str]:
        out = tmp_path / str(len(list(tmp_path.iterdir())))
        assert main([*base, *flags, "--out", str(out)]) == 0
        lines = next(out.glob("evals/*/*/results.jsonl")).read_text().splitlines()
        return sorted(json.loads(line)["item_id"] for line in lines)

    first = ids("--limit", "10")
    assert ids("--n", "10") == first  # the old spelling
    assert set(ids("--limit", "3:6")) < set(first) and len(ids("--limit", "3:6")) == 3
    drawn = ids("--limit", "10", "--sample-seed", "7")
    assert drawn == ids("--limit", "10", "--sample-seed", "7") and drawn != first
