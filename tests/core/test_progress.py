"""Progress of long builds: lines off a terminal at an interval, nothing without an open report."""

from __future__ import annotations

import io

from security_verifiers.core.progress import advance, progress_to


class Clockless(io.StringIO):
    def isatty(self) -> bool:
        return False


def test_off_a_terminal_a_line_per_interval_and_none_for_quick_work() -> None:
    stream = Clockless()
    with progress_to("build x", stream=stream, interval_s=0.0):
        advance(5, 20, "scanning files")
        advance(20, 20, "scanning files")
    assert stream.getvalue().splitlines() == ["build x: scanning files 5/20 (25%) after 0s",
                                              "build x: scanning files 20/20 (100%) after 0s"]
    quiet = Clockless()
    with progress_to("build y", stream=quiet, interval_s=3600):
        advance(1, 2)
    assert quiet.getvalue() == ""


def test_advance_without_an_open_report_does_nothing_and_reports_do_not_leak() -> None:
    advance(1, 2)  # no report open: nothing happens, nothing fails
    stream = Clockless()
    with progress_to("a", stream=stream, interval_s=0.0):
        pass
    advance(1, 2)
    assert stream.getvalue() == ""


def test_a_terminal_gets_a_bar_that_is_cleared_at_the_end() -> None:
    stream = io.StringIO()
    with progress_to("build z", stream=stream, terminal=True):
        advance(3, 4, "self-check")
    shown = stream.getvalue()
    assert "build z" in shown and "self-check" in shown and "3/4" in shown


def test_the_config_audit_generator_reports_its_scans() -> None:
    from security_verifiers.envs.config_audit.generation.generator import generate

    stream = Clockless()
    with progress_to("ca", stream=stream, interval_s=0.0):
        generate("test", 3, 0)
    lines = stream.getvalue().splitlines()
    assert any(line.startswith("ca: scanning files 6/6") for line in lines)
    assert any(line.startswith("ca: self-check 6/6") for line in lines)
