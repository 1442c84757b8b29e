"""Tokens and cost: summary.json and the console, at the run's --price-in/--price-out; cached answers unbilled."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from security_verifiers.cli import main
from security_verifiers.report.summary import usage_line
from tests.fakeserver import FakeOpenAIServer

ANSWER = json.dumps({"label": "Benign", "p_malicious": 0.1})


def _summary(out: Path) -> dict:
    (path,) = sorted(out.glob("evals/*/*/summary.json"))[-1:]
    return json.loads(path.read_text())


def test_cost_counts_paid_tokens_at_the_given_prices_and_not_cached_ones(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    reply = {"content": ANSWER, "usage": {"prompt_tokens": 1000, "completion_tokens": 50}}
    with FakeOpenAIServer(lambda request: reply) as server:
        argv = ["eval", "network-logs", "--model", "m", "--base-url", server.base_url, "--limit", "4", "--quiet",
                "--cache-dir", str(tmp_path / "cache"), "--price-in", "2.5", "--price-out", "10"]
        assert main([*argv, "--out", str(tmp_path / "a")]) == 0
        first = _summary(tmp_path / "a")
        assert main([*argv, "--out", str(tmp_path / "b")]) == 0  # every answer from the cache
        second = _summary(tmp_path / "b")
    usage = first["usage"]
    assert (usage["prompt_tokens"], usage["completion_tokens"]) == (4000, 200)
    assert usage["cost_usd"] == pytest.approx((4000 * 2.5 + 200 * 10) / 1e6)
    assert (usage["price_in"], usage["price_out"]) == (2.5, 10)
    assert second["usage"]["cached_prompt_tokens"] == 4000 and second["usage"]["cost_usd"] == 0
    err = capsys.readouterr().err
    assert "tokens: 4,000 prompt + 200 completion; cost $0.0120 at $2.5 in / $10 out per million" in err
    assert "(4,200 of them from cached answers, not billed); cost $0.0000" in err


def test_no_price_no_cost_and_baselines_print_no_token_line(tmp_path: Path) -> None:
    summary = {"usage": {"prompt_tokens": 10, "completion_tokens": 2, "cost_usd": None}}
    assert "give --price-in and --price-out" in usage_line(summary)
    assert usage_line({"usage": {"prompt_tokens": 0, "completion_tokens": 0}}) is None
    assert main(["eval", "network-logs", "--model", "baseline:heuristic", "--limit", "2", "--quiet",
                 "--out", str(tmp_path)]) == 0
    assert _summary(tmp_path)["usage"]["cost_usd"] is None


def test_negative_prices_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["eval", "network-logs", "--model", "baseline:heuristic", "--price-in", "-1",
                 "--out", str(tmp_path)]) == 2
    assert "--price-in" in capsys.readouterr().err
