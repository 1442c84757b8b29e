"""The `sv` command line, end to end: help, bad input, an eval through the real OpenAI client, SIGKILL + resume."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from security_verifiers.cli import main
from security_verifiers.core.rundir import read_records
from tests.fakeserver import FakeOpenAIServer
from tests.helpers import e1_data_file

SV = [sys.executable, "-m", "security_verifiers.cli"]
ANSWER = json.dumps({"label": "Malicious", "p_malicious": 0.8})


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    return e1_data_file(tmp_path / "items.jsonl", 120)


@pytest.mark.parametrize("command", [[], ["eval"], ["report"], ["bench"], ["data", "build"], ["envs"], ["train"],
                                     ["compare"], ["gate"]])
def test_every_command_has_help(command: list[str], capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main([*command, "--help"])
    assert exc.value.code == 0
    assert "usage: sv" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["eval", "nope", "--model", "baseline:reference"], "unknown environment"),  # unknown env
        (["eval", "network-logs", "--model", "baseline:nope"], "baseline"),  # unknown baseline
        (["eval", "network-logs", "--model", "baseline:reference", "--env-option", "colour=1"], "unknown key 'colour'"),
        (["eval", "network-logs", "--model", "baseline:reference", "--temperature", "9"], "--temperature"),
        (["eval", "network-logs", "--model", "baseline:reference", "--split", "nope"], "unknown split"),
        (["eval", "network-logs", "--model", "baseline:reference", "--data", "/no/such.jsonl"], "not found"),
        (["eval", "network-logs", "--model", "m", "--base-url", "https://api.example.com/v1",
          "--api-key-env", "SV_TEST_UNSET_KEY"], "SV_TEST_UNSET_KEY"),  # missing key, named
        (["report", "/no/such/run"], "not a run directory"),
    ],
)
def test_bad_input_is_a_clear_error(argv: list[str], message: str, capsys, tmp_path: Path) -> None:
    os.environ.pop("SV_TEST_UNSET_KEY", None)
    assert main([*argv, *(["--out", str(tmp_path)] if argv[0] == "eval" else [])]) == 2
    assert message in capsys.readouterr().err


def test_data_hash_mismatch_is_an_error(data_file: Path, tmp_path: Path, capsys) -> None:
    argv = ["eval", "network-logs", "--model", "baseline:reference", "--data", str(data_file),
            "--data-hash", "sha256:" + "0" * 64, "--out", str(tmp_path)]
    assert main(argv) == 2 and "expected sha256:000" in capsys.readouterr().err


def test_eval_through_the_openai_client_writes_a_full_run(data_file: Path, tmp_path: Path) -> None:
    with FakeOpenAIServer(reply=lambda request: ANSWER) as server:
        argv = ["eval", "network-logs", "--model", "fake/model-1", "--base-url", server.base_url, "--data",
                str(data_file), "--n", "30", "--out", str(tmp_path), "--run-id", "r1", "--temperature", "0.5",
                "--max-tokens", "64", "--seed", "3", "--cache-dir", str(tmp_path / "cache"), "--quiet"]
        assert main(argv) == 0
        assert server.request_count == 30
        sent = server.requests[0]
        assert sent["model"] == "fake/model-1" and sent["temperature"] == 0.5 and sent["max_tokens"] == 64
        assert sent["messages"][0]["role"] == "system" and "p_malicious" in sent["messages"][0]["content"]
    run_dir = tmp_path / "evals" / "network-logs--fake_model-1" / "r1"
    for name in ("metadata.json", "results.jsonl", "summary.json", "report.md"):
        assert (run_dir / name).is_file(), name
    meta = json.loads((run_dir / "metadata.json").read_text())
    assert meta["policy"]["sampling"]["seed"] == 3 and meta["usage"]["completion_tokens"] > 0
    assert len(meta["dataset"]["item_ids"]) == 30 and meta["status"] == "finished"
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["counts"]["scored"] == 30 and summary["metrics"]["format_valid_rate"] == 1.0
    # The same invocation again, with that server gone: it can only succeed from the response cache.
    second = [a if a != "r1" else "r2" for a in argv]
    assert main(second) == 0
    records = read_records(tmp_path / "evals" / "network-logs--fake_model-1" / "r2" / "results.jsonl")
    assert len(records) == 30 and all(r.cached and r.error is None for r in records)


def test_reasoning_model_options_leave_temperature_out_and_rename_max_tokens(data_file: Path, tmp_path: Path) -> None:
    with FakeOpenAIServer(reply=lambda request: ANSWER) as server:
        argv = ["eval", "network-logs", "--model", "o-model", "--base-url", server.base_url, "--data", str(data_file),
                "--n", "2", "--out", str(tmp_path), "--temperature", "none", "--max-tokens", "900",
                "--max-tokens-field", "max_completion_tokens", "--no-cache", "--quiet"]
        assert main(argv) == 0
        sent = server.requests[0]
    assert "temperature" not in sent and "max_tokens" not in sent and sent["max_completion_tokens"] == 900


def test_endpoint_down_exits_nonzero_and_keeps_errors_out_of_metrics(data_file: Path, tmp_path: Path) -> None:
    with FakeOpenAIServer(reply=lambda request: ANSWER) as server:
        server.fail_next(*[500] * 200)
        argv = ["eval", "network-logs", "--model", "m", "--base-url", server.base_url, "--data", str(data_file),
                "--out", str(tmp_path), "--run-id", "down", "--max-retries", "0", "--no-cache", "--quiet"]
        assert main(argv) == 3
    summary = json.loads((tmp_path / "evals" / "network-logs--m" / "down" / "summary.json").read_text())
    assert summary["counts"]["errors"] >= 20 and summary["counts"]["scored"] == 0


def test_sigkill_then_resume_gives_exactly_one_result_per_item(data_file: Path, tmp_path: Path) -> None:
    with FakeOpenAIServer(reply=lambda request: ANSWER, delay_s=0.02) as server:
        argv = [*SV, "eval", "network-logs", "--model", "m", "--base-url", server.base_url, "--data",
                str(data_file), "--out", str(tmp_path), "--run-id", "k", "--concurrency", "4", "--no-cache",
                "--quiet"]
        results = tmp_path / "evals" / "network-logs--m" / "k" / "results.jsonl"
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if results.exists() and results.read_text().count("\n") >= 25:
                break
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        done_before = len(read_records(results))
        assert 0 < done_before < 120, "the kill must land mid-run"
        resumed = subprocess.run([*argv, "--resume"], capture_output=True, text=True, timeout=120)
        assert resumed.returncode == 0, resumed.stderr
    records = read_records(results)
    ids = [r.item_id for r in records]
    assert len(ids) == len(set(ids)) == 120
    assert all(r.error is None for r in records)


def test_report_on_a_cut_results_file_says_incomplete_and_resume_completes_it(data_file: Path, tmp_path: Path,
                                                                              capsys) -> None:
    argv = ["eval", "network-logs", "--model", "baseline:reference", "--data", str(data_file), "--n", "10", "--out",
            str(tmp_path), "--run-id", "cut", "--quiet"]
    assert main(argv) == 0
    run_dir = tmp_path / "evals" / "network-logs--baseline-reference" / "cut"
    results = run_dir / "results.jsonl"
    results.write_text(results.read_text(encoding="utf-8")[:-25], encoding="utf-8")  # the last line cut short
    capsys.readouterr()
    assert main(["report", str(run_dir)]) == 0
    err = capsys.readouterr().err
    assert "incomplete — 1 cut line in results.jsonl (line 10); 9 of 10 rollouts recorded" in err
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "incomplete" and summary["counts"]["rollouts"] == 9
    # Resuming still compacts the file (the cut line goes) and redoes the lost rollout.
    assert main([*argv, "--resume"]) == 0
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "finished" and summary["status_detail"] is None
    assert summary["complete"] is True and summary["missing_rollouts"] == 0 and summary["cut_line"] is None
    assert len(read_records(results)) == 10


def test_a_local_server_that_wants_a_key_gets_a_visible_placeholder_and_a_named_401(data_file: Path, tmp_path: Path,
                                                                                     capsys, monkeypatch) -> None:
    monkeypatch.delenv("SV_TEST_UNSET_KEY", raising=False)
    with FakeOpenAIServer(reply=lambda request: ANSWER, api_key="sk-local") as server:
        argv = ["eval", "network-logs", "--model", "m", "--base-url", server.base_url, "--api-key-env",
                "SV_TEST_UNSET_KEY", "--data", str(data_file), "--n", "5", "--out", str(tmp_path), "--run-id", "k",
                "--no-cache", "--quiet"]
        assert main(argv) == 3  # every rollout failed
    err = capsys.readouterr().err
    # said once, before the run, not once per request
    assert err.count("SV_TEST_UNSET_KEY is not set: the requests to") == 1
    assert "placeholder key 'EMPTY'" in err
    records = read_records(tmp_path / "evals" / "network-logs--m" / "k" / "results.jsonl")
    assert len(records) == 5 and all(r.error is not None for r in records)
    assert all("HTTP 401 (Unauthorized): SV_TEST_UNSET_KEY is not set" in r.error.message for r in records)
