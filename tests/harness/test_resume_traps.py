"""Traps of `sv eval --resume` and of run statuses (issue 29): which run a bare ``--resume`` continues, a finished
run "resumed" for nothing, ``--no-cache`` dropped on resume, a malformed results line, run ids that are paths, and
statuses that lie after a kill or when every rollout errored."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from security_verifiers.cli import main
from security_verifiers.core.cache import ResponseCache
from security_verifiers.core.errors import ConfigError
from security_verifiers.core.rundir import RunDir, read_records
from security_verifiers.core.types import ErrorRecord
from tests.fakeserver import FakeOpenAIServer
from tests.helpers import e1_data_file

ANSWER = json.dumps({"label": "Malicious", "p_malicious": 0.8})
HEURISTIC = Path("evals") / "network-logs--baseline-heuristic"
FAKE = Path("evals") / "network-logs--fake_m"


def _baseline_run(out: Path, run_id: str, n: int = 4) -> Path:
    assert main(["eval", "network-logs", "--model", "baseline:heuristic", "--n", str(n), "--out", str(out),
                 "--run-id", run_id, "--quiet"]) == 0
    return out / HEURISTIC / run_id


def _cut(run_dir: Path, keep: int) -> None:
    """As if the run was killed after ``keep`` rollouts."""
    results = run_dir / "results.jsonl"
    results.write_text("".join(r.model_dump_json() + "\n" for r in read_records(results)[:keep]))


def _resume_latest(out: Path) -> int:
    return main(["eval", "network-logs", "--model", "baseline:heuristic", "--resume", "--out", str(out), "--quiet"])


def _one_line(err: str) -> str:
    assert err.count("\n") == 1 and "Traceback" not in err and "SV_DEBUG" not in err, err
    return err


# -- 1. which run a bare --resume continues ------------------------------------------------------------------
def test_resume_without_a_run_id_takes_the_newest_run_not_the_last_name(tmp_path: Path) -> None:
    older, newer = _baseline_run(tmp_path, "b"), _baseline_run(tmp_path, "a")  # "b" sorts last, "a" is newer
    _cut(older, 2)
    _cut(newer, 2)
    assert _resume_latest(tmp_path) == 0
    assert len(read_records(newer / "results.jsonl")) == 4
    assert len(read_records(older / "results.jsonl")) == 2


def test_resume_refuses_runs_it_cannot_order_and_names_them(tmp_path: Path, capsys) -> None:
    for run_id in ("a", "b"):
        run_dir = _baseline_run(tmp_path, run_id)
        _cut(run_dir, 2)
        meta = json.loads((run_dir / "metadata.json").read_text())
        meta["started_at"] = "2026-01-01T00:00:00+00:00"
        (run_dir / "metadata.json").write_text(json.dumps(meta))
    capsys.readouterr()
    assert _resume_latest(tmp_path) == 2
    err = _one_line(capsys.readouterr().err)
    assert "a" in err.split("(")[-1] and "b" in err.split("(")[-1] and "--run-id" in err, err


def test_a_finished_latest_run_is_not_resumed_for_nothing(tmp_path: Path, capsys) -> None:
    _baseline_run(tmp_path, "r")
    capsys.readouterr()
    assert _resume_latest(tmp_path) == 2
    err = _one_line(capsys.readouterr().err)
    assert "nothing to resume" in err and "latest run r" in err and "finished at" in err and "--run-id" in err, err


def test_a_finished_run_named_by_its_id_is_refused_unless_it_has_errors_to_retry(tmp_path: Path, capsys) -> None:
    run_dir = _baseline_run(tmp_path, "r")
    capsys.readouterr()
    assert main(["eval", "--resume", "--run-id", "r", "--out", str(tmp_path), "--quiet"]) == 2
    assert "finished" in _one_line(capsys.readouterr().err)
    records = read_records(run_dir / "results.jsonl")
    errored = records[1].model_copy(update={"reward": None,
                                                  "error": ErrorRecord(kind="provider", message="HTTP 500")})
    (run_dir / "results.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in [records[0], errored,
                                                                                         *records[2:]]))
    assert main(["eval", "--resume", "--run-id", "r", "--out", str(tmp_path), "--quiet"]) == 0
    assert all(r.ok for r in read_records(run_dir / "results.jsonl"))


# -- 2. --no-cache and --cache-dir are kept on resume -------------------------------------------------------
def _half_failed(server: FakeOpenAIServer, data_file: Path, out: Path, *flags: str) -> None:
    server.fail_next(*[500] * 2)
    assert main(["eval", "network-logs", "--model", "fake/m", "--base-url", server.base_url, "--data", str(data_file),
                 "--max-retries", "0", "--max-error-rate", "1.0", "--concurrency", "1", "--quiet", "--out", str(out),
                 "--run-id", "r1", *flags]) == 0


def test_no_cache_is_kept_on_resume(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("SV_CACHE_DIR", str(tmp_path / "cache"))
    data_file = e1_data_file(tmp_path / "items.jsonl", 4)
    with FakeOpenAIServer(reply=lambda request: ANSWER) as server:
        assert main(["eval", "network-logs", "--model", "fake/m", "--base-url", server.base_url, "--data",
                     str(data_file), "--quiet", "--out", str(tmp_path / "warm")]) == 0  # every answer now cached
        _half_failed(server, data_file, tmp_path / "out", "--no-cache")
        before = server.request_count
        assert main(["eval", "--resume", "--run-id", "r1", "--out", str(tmp_path / "out"), "--quiet"]) == 0
        assert server.request_count - before == 2  # asked again, not answered from the cache
    assert all(r.ok and not r.cached for r in read_records(tmp_path / "out" / FAKE / "r1" / "results.jsonl"))


def test_no_cache_given_again_on_resume_must_agree(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("SV_CACHE_DIR", str(tmp_path / "cache"))
    data_file = e1_data_file(tmp_path / "items.jsonl", 4)
    with FakeOpenAIServer(reply=lambda request: ANSWER) as server:
        _half_failed(server, data_file, tmp_path)
        capsys.readouterr()
        assert main(["eval", "--resume", "--run-id", "r1", "--out", str(tmp_path), "--quiet", "--no-cache"]) == 2
    assert "--no-cache" in _one_line(capsys.readouterr().err)


def test_the_cache_dir_is_kept_on_resume(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("SV_CACHE_DIR", str(tmp_path / "default-cache"))
    data_file = e1_data_file(tmp_path / "items.jsonl", 4)
    with FakeOpenAIServer(reply=lambda request: ANSWER) as server:
        _half_failed(server, data_file, tmp_path / "out", "--cache-dir", str(tmp_path / "mine"))
        assert main(["eval", "--resume", "--run-id", "r1", "--out", str(tmp_path / "out"), "--quiet"]) == 0
    with ResponseCache(tmp_path / "mine" / "responses.sqlite") as cache:
        assert cache.info().entries == 4  # the retried answers went to the run's own cache
    meta = json.loads((tmp_path / "out" / FAKE / "r1" / "metadata.json").read_text())
    assert meta["invocation"]["cache_dir"] == str((tmp_path / "mine").resolve())
    assert meta["invocation"]["no_cache"] is False


# -- 3. a malformed results line before the last ------------------------------------------------------------
@pytest.mark.parametrize("bad", [b"{garbage\n", b"\xff\xfe not utf-8\n"])
def test_a_malformed_line_before_the_last_is_one_clean_line_on_resume(bad: bytes, tmp_path: Path, monkeypatch,
                                                                      capsys) -> None:
    run_dir = _baseline_run(tmp_path, "r")
    results = run_dir / "results.jsonl"
    lines = results.read_bytes().splitlines(keepends=True)
    results.write_bytes(lines[0] + bad + b"".join(lines[2:]))
    monkeypatch.setenv("SV_DEBUG", "1")  # a bug would raise its traceback: this is no bug
    capsys.readouterr()
    assert main(["eval", "--resume", "--run-id", "r", "--out", str(tmp_path), "--quiet"]) == 2
    err = _one_line(capsys.readouterr().err)
    assert f"{results}:2" in err and "delete" in err, err
    assert results.read_bytes().splitlines(keepends=True)[1] == bad  # nothing was rewritten


# -- 4. run ids are names ----------------------------------------------------------------------------------
@pytest.mark.parametrize("run_id", ["../../escaped", "ABS", "a/b", "..", ".hidden", "x" * 300, "a b", "a\\b"])
def test_a_run_id_that_is_not_a_plain_name_is_refused(run_id: str, tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    if run_id == "ABS":
        run_id = str(tmp_path / "abs")
    capsys.readouterr()
    assert main(["eval", "network-logs", "--model", "baseline:heuristic", "--n", "2", "--out", str(out),
                 "--run-id", run_id, "--quiet"]) == 2
    assert "--run-id" in _one_line(capsys.readouterr().err)
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # nothing written, inside --out or out of it
    assert main(["eval", "--resume", "--run-id", run_id, "--out", str(out), "--quiet"]) == 2
    assert "--run-id" in _one_line(capsys.readouterr().err)
    with pytest.raises(ConfigError):
        RunDir.for_run(out, "network-logs", "baseline:heuristic", run_id)


def test_plain_run_ids_are_names() -> None:
    from security_verifiers.core.rundir import check_run_id

    for run_id in ("r1", "20260101T000000123456Z", "sft-network-logs-s0-x", "a.b_c-d"):
        assert check_run_id(run_id) == run_id
    with pytest.raises(ConfigError, match="not a plain name"):
        check_run_id("")  # `sv eval --run-id ''` reads as no run id (a new one) before it gets here


# -- 5. statuses that tell the truth ----------------------------------------------------------------------
def _dead_pid() -> int:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    return int(proc.stdout)


def test_effective_status_of_running_metadata() -> None:
    from security_verifiers.harness.run_metadata import effective_status, process_identity

    here = {"status": "running", "process": process_identity()}
    assert effective_status(here) == "running"  # this process is alive
    assert effective_status({**here, "process": {**here["process"], "pid": _dead_pid()}}) == "stopped"
    assert effective_status({**here, "process": {"pid": _dead_pid(), "host": "elsewhere"}}) == "running"
    assert effective_status({"status": "running"}) == "running"  # written before the pid was: cannot tell
    assert effective_status({"status": "finished", "process": {"pid": _dead_pid(), "host": socket.gethostname()}}) \
        == "finished"


def test_a_killed_run_reads_stopped_and_is_resumed(tmp_path: Path) -> None:
    from security_verifiers.harness.run_metadata import effective_status

    data_file = e1_data_file(tmp_path / "items.jsonl", 3)
    meta_path = tmp_path / FAKE / "k" / "metadata.json"
    with FakeOpenAIServer(reply=lambda request: ANSWER, delay_s=30) as server:
        proc = subprocess.Popen([sys.executable, "-m", "security_verifiers.cli", "eval", "network-logs", "--model",
                                 "fake/m", "--base-url", server.base_url, "--data", str(data_file), "--no-cache",
                                 "--quiet", "--out", str(tmp_path), "--run-id", "k"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 30
            while server.request_count == 0 and time.monotonic() < deadline:
                time.sleep(0.05)
            meta = json.loads(meta_path.read_text())
            assert meta["status"] == "running" and effective_status(meta) == "running"
            assert meta["process"]["pid"] == proc.pid and meta["process"]["host"] == socket.gethostname()
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        meta = json.loads(meta_path.read_text())
        assert meta["status"] == "running" and effective_status(meta) == "stopped"
        server.delay_s = 0
        assert main(["eval", "--resume", "--run-id", "k", "--out", str(tmp_path), "--quiet"]) == 0
    assert json.loads(meta_path.read_text())["status"] == "finished"


def test_a_run_in_which_every_rollout_errored_is_failed(tmp_path: Path) -> None:
    data_file = e1_data_file(tmp_path / "items.jsonl", 3)
    with FakeOpenAIServer(reply=lambda request: ANSWER) as server:
        server.fail_next(*[500] * 3)
        code = main(["eval", "network-logs", "--model", "fake/m", "--base-url", server.base_url, "--data",
                     str(data_file), "--max-retries", "0", "--max-error-rate", "1.0", "--no-cache", "--quiet",
                     "--out", str(tmp_path), "--run-id", "e"])
    meta = json.loads((tmp_path / FAKE / "e" / "metadata.json").read_text())
    assert meta["status"] == "failed" and "every" in meta["status_reason"] and "provider" in meta["status_reason"]
    assert code != 0  # even with --max-error-rate 1.0: a run that measured nothing is not a success


def test_sv_train_refuses_a_run_id_that_is_a_path(tmp_path: Path, capsys) -> None:
    assert main(["train", "sft", "--env", "network-logs", "--preset", "tiny-cpu", "--out", str(tmp_path),
                 "--run-id", "../escaped"]) != 0
    assert "not a plain name" in capsys.readouterr().err
    assert not (tmp_path.parent / "escaped").exists()
