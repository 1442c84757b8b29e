"""``sv sandbox run``: the command's output and exit status through the CLI, and its usage errors."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from security_verifiers.cli import main
from security_verifiers.engines.sandbox import host as host_module
from security_verifiers.engines.sandbox import runner as runner_module


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


def test_prints_the_output_and_exits_with_the_commands_status(workdir: Path, capsys) -> None:
    code = "import sys; print('out'); print('err', file=sys.stderr); open('f', 'w').write('x'); sys.exit(3)"
    assert main(["sandbox", "run", str(workdir), "--", "python3", "-c", code]) == 3
    assert capsys.readouterr()[:2] == ("out\n", "err\n")
    assert (workdir / "f").read_text() == "x"


@pytest.mark.parametrize(("options", "code", "exit_code", "note"), [
    (["--timeout", "1"], "while True: pass", 124, "timed out after 1 s"),  # wall clock
    (["--cpu-s", "1"], "while True: pass", 137, "killed by SIGKILL"),  # CPU time
    (["--output-bytes", "1024"], "print('x' * 5000)", 0, "stdout cut at 1024 bytes"),
])
def test_limits_are_options_and_their_outcome_is_said(workdir: Path, capsys, options: list[str], code: str,
                                                      exit_code: int, note: str) -> None:
    assert main(["sandbox", "run", *options, str(workdir), "--", "python3", "-c", code]) == exit_code
    assert note in capsys.readouterr().err


def test_a_read_only_path_can_be_added(workdir: Path, tmp_path: Path, capsys) -> None:
    (tmp_path / "data.txt").write_text("shared")
    assert main(["sandbox", "run", "--ro", str(tmp_path / "data.txt"), str(workdir), "--",
                 "cat", str(tmp_path / "data.txt")]) == 0
    assert capsys.readouterr().out == "shared"


@pytest.mark.parametrize(("argv", "message"), [
    (["{w}", "--timeout", "3", "--", "true"], "--timeout after WORKDIR; options go before it"),
    (["{w}"], "no command"),
    (["{w}", "--"], "no command"),
    (["--timeout", "0", "{w}", "--", "true"], "--timeout: must be above 0"),
    (["{w}/missing", "--", "true"], "no such directory"),
])
def test_usage_errors_exit_2_with_one_line(workdir: Path, capsys, argv: list[str], message: str) -> None:
    assert main(["sandbox", "run", *(a.format(w=workdir) for a in argv)]) == 2
    assert message in capsys.readouterr().err


def test_help_explains_the_isolation(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["sandbox", "run", "--help"])
    text = capsys.readouterr().out
    for phrase in ("no network", "fresh PID namespace", "65534", "read-only", "124", "137", "125", "--memory-mb",
                   "--max-processes"):
        assert phrase in text


@pytest.fixture
def no_bwrap(workdir: Path, monkeypatch) -> Iterator[None]:
    host_module.host.cache_clear()
    runner_module.check_available.cache_clear()
    monkeypatch.setenv("PATH", str(workdir))
    yield
    host_module.host.cache_clear()
    runner_module.check_available.cache_clear()


def test_without_bubblewrap_it_exits_125_and_never_runs_the_command(no_bwrap: None, workdir: Path, capsys) -> None:
    assert main(["sandbox", "run", str(workdir), "--", "touch", "ran"]) == 125
    assert "apt-get install bubblewrap" in capsys.readouterr().err
    assert not (workdir / "ran").exists()
