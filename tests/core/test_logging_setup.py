"""``configure_logging``: the level asked for reaches stderr and nothing below it; one handler however often called."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from security_verifiers.core.logging_setup import configure_logging

LOG = logging.getLogger("security_verifiers.tests.logging_setup")


@pytest.fixture(autouse=True)
def _default_level() -> Iterator[None]:
    yield
    configure_logging("WARNING")


def say_each_level() -> None:
    LOG.debug("said at debug")
    LOG.info("said at info")
    LOG.warning("said at warning")
    LOG.error("said at error")


@pytest.mark.parametrize(("level", "shown"), [
    ("DEBUG", ["debug", "info", "warning", "error"]),
    ("info", ["info", "warning", "error"]),  # case does not matter
    ("WARNING", ["warning", "error"]),  # the default
    ("ERROR", ["error"]),
])
def test_records_at_the_level_and_above_reach_stderr(capsys: pytest.CaptureFixture[str], level: str,
                                                     shown: list[str]) -> None:
    configure_logging(level)
    say_each_level()
    err = capsys.readouterr().err
    assert [word for word in ("debug", "info", "warning", "error") if f"said at {word}" in err] == shown
    assert f"{logging.getLevelName(getattr(logging, shown[0].upper()))} security_verifiers.tests.logging_setup: " \
        f"said at {shown[0]}" in err  # level and logger named on each line


def test_a_second_call_replaces_the_handler_instead_of_doubling_lines(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("INFO")
    configure_logging("INFO")
    LOG.info("once")
    assert capsys.readouterr().err.count("once") == 1


def test_http_libraries_stay_quiet_at_info_and_speak_at_debug(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("INFO")
    logging.getLogger("httpx").info("HTTP Request: POST /chat/completions")
    assert "HTTP Request" not in capsys.readouterr().err
    configure_logging("DEBUG")
    logging.getLogger("httpx").info("HTTP Request: POST /chat/completions")
    assert "HTTP Request" in capsys.readouterr().err


def test_records_follow_stderr_when_it_is_replaced(capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A progress bar replaces sys.stderr with a proxy while it is shown: records must go through it."""
    import io
    import sys

    configure_logging("WARNING")
    proxy = io.StringIO()
    monkeypatch.setattr(sys, "stderr", proxy)
    LOG.warning("through the proxy")
    assert "through the proxy" in proxy.getvalue()


def test_an_unknown_level_is_refused() -> None:
    with pytest.raises(ValueError, match="LOUD"):
        configure_logging("LOUD")
