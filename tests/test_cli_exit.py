"""How ``sv`` ends: :func:`security_verifiers.cli.exit_now` skips the interpreter's teardown but nothing the process
owes (a thread still working, an ``atexit`` callback, buffered output), and a closed pipe ends it quietly."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent("""
    import atexit, sys, threading, time
    from pathlib import Path
    from security_verifiers.cli import exit_now

    out = Path(sys.argv[1])
    def work() -> None:
        time.sleep(0.3)
        (out / "thread").write_text("done")
    threading.Thread(target=work).start()  # not a daemon: the process waits for it
    atexit.register(lambda: (out / "atexit").write_text("ran"))
    sys.stdout.write("buffered, no newline")
    exit_now(3)
    (out / "after").write_text("never")
""")


def test_exit_now_waits_for_threads_runs_atexit_and_flushes(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 3, proc.stderr
    assert proc.stdout == "buffered, no newline"
    assert (tmp_path / "thread").read_text() == "done" and (tmp_path / "atexit").read_text() == "ran"
    assert not (tmp_path / "after").exists()


def test_the_command_returns_its_status_through_exit_now(tmp_path: Path) -> None:
    ok = subprocess.run([sys.executable, "-m", "security_verifiers.cli", "envs"], capture_output=True, text=True,
                        timeout=120)
    assert ok.returncode == 0 and "config-audit" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "security_verifiers.cli", "eval", "no-such-env", "--model", "m"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stderr.startswith("sv: error:")


def test_a_closed_pipe_ends_the_command_quietly() -> None:
    proc = subprocess.run(f"{sys.executable} -m security_verifiers.cli envs | head -c 10", shell=True,
                          capture_output=True, text=True, timeout=120)
    assert proc.stdout == "code-repai" and proc.stderr == ""
