"""`sv eval --resume` reads the run's settings from its metadata.json: only --run-id is needed, flags given again
must agree (one line naming the flag), and execution-only settings may change."""

import json
from pathlib import Path

import pytest

from security_verifiers.cli import main
from security_verifiers.core.rundir import read_records
from tests.fakeserver import FakeOpenAIServer
from tests.helpers import e1_data_file

ANSWER = json.dumps({"label": "Malicious", "p_malicious": 0.8})


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    return e1_data_file(tmp_path / "items.jsonl", 12)


def _half_failed_run(server: FakeOpenAIServer, data_file: Path, out: Path) -> list[str]:
    """A run of 10 items whose first 5 requests fail (kept as errors: --max-error-rate 1), with settings a resume
    must reuse: a model name with a slash, --n, --temperature, --max-tokens, --env-option, --samples."""
    server.fail_next(*[500] * 5)
    argv = ["eval", "network-logs", "--model", "fake/m", "--base-url", server.base_url, "--data", str(data_file),
            "--n", "5", "--samples", "2", "--temperature", "0.5", "--max-tokens", "64", "--env-option", "window=3",
            "--max-retries", "0", "--max-error-rate", "1.0", "--concurrency", "1", "--no-cache", "--quiet",
            "--out", str(out), "--run-id", "r1"]
    assert main(argv) == 0
    return argv


def test_resume_with_only_the_run_id_continues_the_run_with_its_settings(data_file: Path, tmp_path: Path,
                                                                         monkeypatch) -> None:
    with FakeOpenAIServer(reply=lambda request: ANSWER) as server:
        _half_failed_run(server, data_file, tmp_path / "out")
        first = server.request_count
        monkeypatch.chdir(tmp_path.parent)  # the data path is stored absolute: another working directory works
        assert main(["eval", "--resume", "--run-id", "r1", "--out", str(tmp_path / "out"), "--quiet"]) == 0
        again = server.requests[first:]
    assert len(again) == 5  # only the errored rollouts were played again
    assert all(r["model"] == "fake/m" and r["temperature"] == 0.5 and r["max_tokens"] == 64 for r in again)
    run_dir = tmp_path / "out" / "evals" / "network-logs--fake_m" / "r1"
    records = read_records(run_dir / "results.jsonl")
    assert len({(r.item_id, r.sample) for r in records}) == 10 and all(r.error is None for r in records)
    meta = json.loads((run_dir / "metadata.json").read_text())
    assert meta["status"] == "finished" and len(meta["resumed_at"]) == 1
    assert meta["env"]["config"]["window"] == 3 and meta["run"]["samples"] == 2  # built as the first session


def test_resume_of_the_latest_run_of_env_and_model_needs_no_other_flag(tmp_path: Path) -> None:
    argv = ["eval", "network-logs", "--model", "baseline:heuristic", "--split", "dev", "--n", "6", "--data-seed", "7",
            "--out", str(tmp_path), "--run-id", "b", "--quiet"]
    assert main(argv) == 0
    run_dir = tmp_path / "evals" / "network-logs--baseline-heuristic" / "b"
    results = run_dir / "results.jsonl"
    before = read_records(results)
    results.write_text("".join(r.model_dump_json() + "\n" for r in before[:2]))  # as if killed after two
    assert main(["eval", "network-logs", "--model", "baseline:heuristic", "--resume", "--out", str(tmp_path),
                 "--quiet"]) == 0
    after = read_records(results)
    assert sorted(r.item_id for r in after) == sorted(r.item_id for r in before)  # split dev, n 6, data seed 7


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--temperature", "0.7"], "--temperature 0.7 differs from run r1's 0.5"),
        (["--n", "4"], "--limit 4 differs from run r1's 5"),  # --n: the old spelling of --limit
        (["--limit", "1:4"], "--limit 1:4 differs from run r1's 5"),
        (["--samples", "3"], "--samples 3 differs from run r1's 2"),
        (["--env-option", "window=5"], "--env-option window 5 differs from run r1's 3"),
        (["--model", "other"], "no run 'r1'"),  # the run id is looked up among that model's runs
        (["network-logs", "--model", "other"], "nothing to resume"),
    ],
)
def test_a_flag_given_again_must_agree(extra: list[str], message: str, data_file: Path, tmp_path: Path,
                                       capsys) -> None:
    with FakeOpenAIServer(reply=lambda request: ANSWER) as server:
        _half_failed_run(server, data_file, tmp_path)
        capsys.readouterr()
        assert main(["eval", "--resume", "--run-id", "r1", "--out", str(tmp_path), "--quiet", *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err


def test_execution_settings_may_change_on_resume(data_file: Path, tmp_path: Path) -> None:
    with FakeOpenAIServer(reply=lambda request: ANSWER) as server:
        _half_failed_run(server, data_file, tmp_path)
        assert main(["eval", "--resume", "--run-id", "r1", "--out", str(tmp_path), "--quiet",
                     "--concurrency", "3"]) == 0
    meta = json.loads((tmp_path / "evals" / "network-logs--fake_m" / "r1" / "metadata.json").read_text())
    assert meta["run"]["concurrency"] == 3


def test_an_ambiguous_run_id_names_its_runs(tmp_path: Path, capsys) -> None:
    for model in ("baseline:heuristic", "baseline:always-abstain"):
        assert main(["eval", "network-logs", "--model", model, "--n", "2", "--out", str(tmp_path), "--run-id", "x",
                     "--quiet"]) == 0
    capsys.readouterr()
    assert main(["eval", "--resume", "--run-id", "x", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "names 2 runs" in err and "give ENV and --model" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["eval", "--model", "baseline:heuristic"], "ENV and --model are required"),  # no env, no resume
        (["eval", "network-logs"], "ENV and --model are required"),  # no model, no resume
        (["eval", "--resume"], "--resume needs --run-id ID, or ENV and --model"),
        (["eval", "--resume", "--run-id", "nope"], "no run 'nope'"),
    ],
)
def test_what_resume_cannot_guess_is_a_clear_error(argv: list[str], message: str, tmp_path: Path, capsys) -> None:
    assert main([*argv, "--out", str(tmp_path)]) == 2
    assert message in capsys.readouterr().err
