"""Why requests failed reaches the console and report.md: a dead endpoint and a 401ing one, end to end."""

import json
import socket
from pathlib import Path

import pytest

from security_verifiers.cli import main
from tests.fakeserver import FakeOpenAIServer
from tests.helpers import e1_data_file


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    return e1_data_file(tmp_path / "items.jsonl", 6, mixed=False)


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _eval(base_url: str, data_file: Path, out: Path, run_id: str) -> list[str]:
    return ["eval", "network-logs", "--model", "m", "--base-url", base_url, "--data", str(data_file), "--out",
            str(out), "--run-id", run_id, "--max-retries", "0", "--no-cache", "--quiet"]


def _report(out: Path, run_id: str) -> str:
    return (out / "evals" / "network-logs--m" / run_id / "report.md").read_text()


def test_a_dead_endpoint_says_cannot_connect_on_screen_and_in_the_report(data_file: Path, tmp_path: Path,
                                                                          capsys) -> None:
    assert main(_eval(f"http://127.0.0.1:{_closed_port()}/v1", data_file, tmp_path, "dead")) == 3
    err = capsys.readouterr().err
    assert "provider: 6, e.g. m at http://127.0.0.1:" in err and "cannot connect" in err
    assert "Connect call failed" in err  # the operating system's own words: the connection was refused
    report = _report(tmp_path, "dead")
    assert "| error kind | count | example message |" in report and "cannot connect" in report


def test_a_401_says_authentication_error_on_screen_and_in_the_report(data_file: Path, tmp_path: Path,
                                                                    capsys, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeOpenAIServer() as server:
        server.fail_next(*[401] * 6)
        assert main(_eval(server.base_url, data_file, tmp_path, "auth")) == 3
    err = capsys.readouterr().err
    assert "provider: 6, e.g. m at http://127.0.0.1:" in err and "HTTP 401" in err
    assert "OPENAI_API_KEY is not set, so the placeholder key 'EMPTY' was sent" in err
    assert "HTTP 401" in _report(tmp_path, "auth")
    summary = json.loads((tmp_path / "evals" / "network-logs--m" / "auth" / "summary.json").read_text())
    assert "HTTP 401" in summary["counts"]["error_examples"]["provider"]


def test_sv_report_rebuilds_the_examples_from_results_alone(data_file: Path, tmp_path: Path, capsys) -> None:
    assert main(_eval(f"http://127.0.0.1:{_closed_port()}/v1", data_file, tmp_path, "dead")) == 3
    run_dir = tmp_path / "evals" / "network-logs--m" / "dead"
    (run_dir / "report.md").unlink()
    assert main(["report", str(run_dir)]) == 0
    assert "cannot connect" in (run_dir / "report.md").read_text()


def test_a_run_without_errors_prints_no_error_summary(data_file: Path, tmp_path: Path, capsys) -> None:
    argv = ["eval", "network-logs", "--model", "baseline:reference", "--data", str(data_file), "--out",
            str(tmp_path), "--quiet"]
    assert main(argv) == 0
    assert "infrastructure errors" not in capsys.readouterr().err


def test_an_unexpected_failure_is_one_line_unless_sv_debug_is_set(monkeypatch, capsys) -> None:
    import security_verifiers.cli as cli

    def broken(args):
        raise OSError("No space left on device\nsecond line")

    monkeypatch.setattr(cli.envs, "cmd_envs", broken)
    monkeypatch.delenv("SV_DEBUG", raising=False)
    assert cli.main(["envs"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "sv: error: OSError: No space left on device second line" in err
    assert "SV_DEBUG=1" in err and "Traceback" not in err
    monkeypatch.setenv("SV_DEBUG", "1")
    with pytest.raises(OSError):
        cli.main(["envs"])
