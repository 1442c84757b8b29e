"""The progress bar's live account: errors, unparseable answers and the model client's retries, as they happen."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

import pytest

from security_verifiers.core.logging_setup import configure_logging
from security_verifiers.core.rundir import RunDir
from security_verifiers.envs.base import get_env
from security_verifiers.harness.retry_counter import OPENAI_LOGGER, RetryCounter
from security_verifiers.harness.runner import RunConfig, run_eval
from security_verifiers.harness.scheduler import Tally
from security_verifiers.models.base import Endpoint
from security_verifiers.models.openai_compat import OpenAIChatPolicy
from tests.fakeserver import FakeOpenAIServer

ANSWER = json.dumps({"label": "Benign", "p_malicious": 0.1})


def test_a_run_counts_the_clients_retries_and_records_them(tmp_path: Path) -> None:
    env = get_env("network-logs")
    dataset = env.dataset("test").head(4)
    replies = iter([ANSWER, "not json at all", ANSWER, ANSWER])
    with FakeOpenAIServer(lambda request: next(replies)) as server:
        server.fail_next(500, 429, 503)
        policy = OpenAIChatPolicy("m", endpoint=Endpoint(base_url=server.base_url, max_retries=4))
        run_dir = RunDir.for_run(tmp_path, env.name, "m", "r")
        outcome = asyncio.run(run_eval(env, policy, dataset, run_dir, RunConfig(concurrency=1), progress=False))
    assert outcome.retries == 3 and outcome.errors == 0
    metadata = json.loads((run_dir.path / "metadata.json").read_text())
    assert metadata["retries"] == 3
    assert not logging.getLogger(OPENAI_LOGGER).handlers  # the counter is gone after the run


def test_the_counter_restores_the_level_and_prints_nothing_at_the_default_level(
        capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("WARNING")
    logger = logging.getLogger(OPENAI_LOGGER)
    before = logger.level
    with RetryCounter() as counter:
        logger.info("Retrying request to %s in %f seconds", "/chat/completions", 0.5)
        logger.info("something else")
    assert counter.count == 1 and logger.level == before
    assert "Retrying" not in capsys.readouterr().err


def test_the_live_status_names_errors_by_kind_unparseable_answers_and_retries() -> None:
    from security_verifiers.core.types import ErrorRecord, ParseStatus, RolloutRecord
    from security_verifiers.harness.runner import _live_status

    tally = Tally(max_error_rate=1.0)
    base = {"schema_version": 1, "env": "e", "env_version": "1", "item_id": "i", "split": "s", "sample": 0,
            "transcript": {"messages": []}}
    tally.add(RolloutRecord(**base, parse_status=ParseStatus.NO_JSON, reward=0.0))
    tally.add(RolloutRecord(**base, error=ErrorRecord(kind="timeout", message="slow")))
    tally.add(RolloutRecord(**base, parse_status=ParseStatus.OK, reward=1.0))
    assert _live_status(tally, 7) == "errors 1 (timeout 1) · unparseable 1 · retries 7"
