"""``--log-level``: INFO shows the model client's retries on stderr; the default keeps them quiet."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from security_verifiers.cli import main
from security_verifiers.core.logging_setup import configure_logging
from tests.fakeserver import FakeOpenAIServer

ANSWER = json.dumps({"label": "Benign", "p_malicious": 0.1})


@pytest.fixture(autouse=True)
def _restore_logging():
    yield
    configure_logging("WARNING")


@pytest.mark.parametrize(("level", "shown"), [("INFO", True), ("WARNING", False)])
def test_info_names_each_retry_of_the_model_client(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch, level: str, shown: bool) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with FakeOpenAIServer(lambda request: ANSWER) as server:
        server.fail_next(500, 503)
        code = main(["eval", "network-logs", "--model", "m", "--base-url", server.base_url, "--limit", "1",
                     "--no-cache", "--quiet", "--concurrency", "1", "--out", str(tmp_path), "--log-level", level])
    assert code == 0 and server.request_count == 3
    err = capsys.readouterr().err
    assert ("Retrying request" in err) is shown


def test_the_flag_before_the_command_and_bad_levels(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--log-level", "LOUD", "envs"])
    assert exc.value.code == 2 and "invalid choice" in capsys.readouterr().err
    assert main(["--log-level", "debug", "envs"]) == 0
    assert logging.getLogger().level == logging.DEBUG
