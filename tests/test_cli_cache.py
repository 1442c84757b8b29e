"""The response cache says what it does: how many answers it gave, `sv cache info` and `sv cache clear`."""

import json
import sqlite3
import time
from pathlib import Path

import pytest

from security_verifiers.cli import main
from tests.fakeserver import FakeOpenAIServer
from tests.helpers import e1_data_file

ANSWER = json.dumps({"label": "Malicious", "p_malicious": 0.8})


def fingerprinted(request: dict) -> dict:
    """A whole response with the system_fingerprint OpenAI sends to name the backend configuration."""
    return {"raw": {"choices": [{"index": 0, "message": {"role": "assistant", "content": ANSWER},
                                 "finish_reason": "stop"}], "system_fingerprint": "fp_deploy_1"}}


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    return e1_data_file(tmp_path / "items.jsonl", 4, mixed=False)


def _eval(model: str, base_url: str, data_file: Path, tmp_path: Path) -> list[str]:
    return ["eval", "network-logs", "--model", model, "--base-url", base_url, "--data", str(data_file), "--out",
            str(tmp_path / "out"), "--cache-dir", str(tmp_path / "cache"), "--quiet"]


def test_a_run_says_how_many_answers_came_from_the_cache(data_file: Path, tmp_path: Path, capsys) -> None:
    with FakeOpenAIServer(reply=lambda request: ANSWER) as server:
        assert main(_eval("m", server.base_url, data_file, tmp_path)) == 0
        assert "response cache: 0 of 4 rollouts answered from" in capsys.readouterr().err
        assert main(_eval("m", server.base_url, data_file, tmp_path)) == 0
        assert server.request_count == 4  # the second run asked nothing
    err = capsys.readouterr().err
    assert f"response cache: 4 of 4 rollouts answered from {tmp_path / 'cache' / 'responses.sqlite'} without " \
           "asking the model" in err


def test_cache_info_names_models_endpoints_and_fingerprints(data_file: Path, tmp_path: Path, capsys) -> None:
    with FakeOpenAIServer(reply=fingerprinted) as server:
        assert main(_eval("m1", server.base_url, data_file, tmp_path)) == 0
        assert main(_eval("m2", server.base_url, data_file, tmp_path)) == 0
    capsys.readouterr()
    assert main(["cache", "info", "--cache-dir", str(tmp_path / "cache")]) == 0
    out = capsys.readouterr().out
    assert "8 entries" in out and "KiB on disk" in out
    assert f"m1 at {server.base_url}, system_fingerprint fp_deploy_1: 4" in out
    assert main(["cache", "info", "--cache-dir", str(tmp_path / "cache"), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["entries"] == 8 and info["bytes_on_disk"] > 0
    assert [(o["model"], o["entries"]) for o in info["origins"]] == [("m1", 4), ("m2", 4)]


def test_cache_clear_removes_one_model_then_everything(data_file: Path, tmp_path: Path, capsys) -> None:
    with FakeOpenAIServer(reply=lambda request: ANSWER) as server:
        assert main(_eval("m1", server.base_url, data_file, tmp_path)) == 0
        assert main(_eval("m2", server.base_url, data_file, tmp_path)) == 0
        capsys.readouterr()
        cache_dir = ["--cache-dir", str(tmp_path / "cache")]
        assert main(["cache", "clear", "--model", "m1", *cache_dir]) == 0
        assert "removed 4 entries of m1" in capsys.readouterr().err
        assert main(["cache", "info", "--json", *cache_dir]) == 0
        assert [o["model"] for o in json.loads(capsys.readouterr().out)["origins"]] == ["m2"]
        assert main(_eval("m1", server.base_url, data_file, tmp_path)) == 0
        assert server.request_count == 12  # m1 was asked again, m2 would not be
        assert main(["cache", "clear", *cache_dir]) == 0
        assert "removed 8 entries" in capsys.readouterr().err


def test_a_cache_written_before_origins_were_recorded_still_opens(tmp_path: Path, capsys) -> None:
    path = tmp_path / "responses.sqlite"
    with sqlite3.connect(path) as conn:  # the first layout: no model or base_url columns
        conn.execute("CREATE TABLE responses (key TEXT PRIMARY KEY, value TEXT NOT NULL, created REAL NOT NULL)")
        conn.execute("INSERT INTO responses VALUES ('k', '{\"text\": \"x\"}', ?)", (time.time(),))
    conn.close()
    assert main(["cache", "info", "--cache-dir", str(tmp_path)]) == 0
    assert "(model not recorded) at (endpoint not recorded): 1" in capsys.readouterr().out


def test_no_cache_file_is_said_and_not_created(tmp_path: Path, capsys) -> None:
    assert main(["cache", "info", "--cache-dir", str(tmp_path / "none")]) == 0
    assert "no response cache at" in capsys.readouterr().err and not (tmp_path / "none").exists()


def test_cache_clear_also_removes_the_fitted_baseline_models(tmp_path: Path, capsys) -> None:
    fitted = tmp_path / "cache" / "phishing-classical"
    fitted.mkdir(parents=True)
    (fitted / "a.pkl").write_bytes(b"x")
    (fitted / "notes.txt").write_text("kept: not a model")
    assert main(["cache", "clear", "--cache-dir", str(tmp_path / "cache")]) == 0
    assert "removed 1 fitted baseline model from" in capsys.readouterr().err
    assert [p.name for p in fitted.iterdir()] == ["notes.txt"]


def test_cache_clear_also_removes_config_audits_stored_scans(tmp_path: Path, capsys) -> None:
    scans = tmp_path / "cache" / "config-audit-scans"
    scans.mkdir(parents=True)
    for name in ("scanners-abc.sqlite", "scanners-abc.sqlite-wal", "parses-def.sqlite", "notes.txt"):
        (scans / name).write_text("x")
    assert main(["cache", "clear", "--cache-dir", str(tmp_path / "cache")]) == 0
    assert "removed config-audit's stored scans and parses (3 file(s))" in capsys.readouterr().err
    assert [p.name for p in scans.iterdir()] == ["notes.txt"]
