"""Off a terminal a long run prints a status line at an interval (done/total, rate, errors, unparseable, retries);
a short one prints none; a retry shows while its rollout still waits."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from security_verifiers.core.datasets import Dataset
from security_verifiers.core.errors import ErrorKind, InfraError
from security_verifiers.core.rundir import RunDir
from security_verifiers.envs.network_logs import NetworkLogs
from security_verifiers.harness import runner
from security_verifiers.harness.runner import RunConfig, run_eval
from security_verifiers.models.base import Endpoint
from security_verifiers.models.openai_compat import OpenAIChatPolicy
from tests.fakeserver import FakeOpenAIServer
from tests.helpers import ScriptedPolicy, e1_item

ENV = NetworkLogs()
DATA = Dataset(id="toy", items=[e1_item(i) for i in range(8)], splits=("test",))
LINE = re.compile(r"^network-logs · (\S+): (\d+)/(\d+) \(\d+%\) · (\d+\.\d\d) rollouts/s · errors (\d+)(?: \([^)]*\))?"
                  r" · unparseable (\d+) · retries (\d+) · \d+s$")


def reply(item):
    """Every third item an infrastructure error, every other one unreadable, the rest a right answer."""
    n = int(item.id[-4:])
    if n % 3 == 2:
        return InfraError(ErrorKind.PROVIDER, "503 from the endpoint")
    return "no json here" if n % 2 else {"label": "Malicious", "p_malicious": 1.0}


def status_lines(err: str) -> list[re.Match[str]]:
    return [m for m in map(LINE.match, err.splitlines()) if m]


def test_a_long_run_off_a_terminal_prints_status_lines_with_its_counts(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "STATUS_LINE_INTERVAL_S", 0.05)
    monkeypatch.setattr(runner, "REFRESH_S", 0.02)
    policy = ScriptedPolicy(reply, delay=0.04)
    outcome = asyncio.run(run_eval(ENV, policy, DATA, RunDir(tmp_path / "r"), RunConfig(concurrency=1,
                                                                                         max_error_rate=1.0)))
    lines = status_lines(capsys.readouterr().err)
    assert len(lines) >= 3  # ~0.35 s of playing at a line per 0.05 s
    done = [int(m[2]) for m in lines]
    assert done == sorted(done) and all(m[3] == "8" for m in lines) and done[0] < 8
    assert any(float(m[4]) > 0 for m in lines)  # a rate once something finished
    last = lines[-1]
    # The counts in a line are those of the rollouts done by then (errors and unparseable only grow with done).
    assert int(last[5]) <= outcome.errors and int(last[6]) <= 3 and last[7] == "0"
    assert outcome.errors == 2 and outcome.errors_by_kind == {"provider": 2}


def test_a_short_run_off_a_terminal_prints_only_the_final_bar(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    asyncio.run(run_eval(ENV, ScriptedPolicy(reply), DATA, RunDir(tmp_path / "r"),
                         RunConfig(concurrency=2, max_error_rate=1.0)))
    err = capsys.readouterr().err
    assert not status_lines(err)
    assert "8/8" in err and "errors 2 (provider 2)" in err and "unparseable 3" in err and "rollouts/s" in err


def test_a_retry_shows_while_its_rollout_still_waits(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "STATUS_LINE_INTERVAL_S", 0.05)
    monkeypatch.setattr(runner, "REFRESH_S", 0.02)
    answer = json.dumps({"label": "Benign", "p_malicious": 0.1})
    with FakeOpenAIServer(lambda request: answer, delay_s=0.4) as server:
        server.fail_next(500)
        policy = OpenAIChatPolicy("m", endpoint=Endpoint(base_url=server.base_url, max_retries=2))
        outcome = asyncio.run(run_eval(ENV, policy, DATA.head(1), RunDir(tmp_path / "r"), RunConfig(concurrency=1)))
    assert outcome.retries == 1 and outcome.errors == 0
    lines = status_lines(capsys.readouterr().err)
    assert any(m[2] == "0" and m[7] == "1" for m in lines), [m[0] for m in lines]
