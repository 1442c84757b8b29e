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


def test_one_price_alone_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A cost from the prompt price alone would read as the whole cost; a free side is given as 0.
    assert main(["eval", "network-logs", "--model", "baseline:heuristic", "--price-in", "1",
                 "--out", str(tmp_path)]) == 2
    assert "--price-out: a cost needs both prices" in capsys.readouterr().err


def test_the_summary_prices_the_tokens_with_the_runs_stored_prices(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``regenerate`` reads the prices from metadata.json's invocation, so a rebuilt summary keeps the cost."""
    from security_verifiers.report import regenerate

    monkeypatch.setenv("OPENAI_API_KEY", "test")
    reply = {"content": ANSWER, "usage": {"prompt_tokens": 300, "completion_tokens": 20}}
    with FakeOpenAIServer(lambda request: reply) as server:
        assert main(["eval", "network-logs", "--model", "m", "--base-url", server.base_url, "--limit", "3",
                     "--quiet", "--no-cache", "--price-in", "0.15", "--price-out", "0.6", "--out", str(tmp_path)]) == 0
    (run_dir,) = [p.parent for p in tmp_path.glob("evals/*/*/metadata.json")]
    metadata = json.loads((run_dir / "metadata.json").read_text())
    assert {k: metadata["invocation"]["endpoint"][k] for k in ("price_in", "price_out")} == {
        "price_in": 0.15, "price_out": 0.6}
    (run_dir / "summary.json").unlink()
    usage = regenerate(run_dir)["usage"]
    assert usage["cost_usd"] == pytest.approx((900 * 0.15 + 60 * 0.6) / 1e6)  # 0.000171
    assert (usage["cached_prompt_tokens"], usage["cached_completion_tokens"]) == (0, 0)
    # Other prices in the metadata, another cost: the summary reads them, it does not keep a figure of its own.
    metadata["invocation"]["endpoint"].update(price_in=1.0, price_out=2.0)
    (run_dir / "metadata.json").write_text(json.dumps(metadata))
    assert regenerate(run_dir)["usage"]["cost_usd"] == pytest.approx((900 * 1.0 + 60 * 2.0) / 1e6)


@pytest.mark.parametrize(("usage", "expected"), [
    # paid and cached tokens, with prices: the cost is of the paid ones only
    ({"prompt_tokens": 12345, "completion_tokens": 6789, "cached_prompt_tokens": 900, "cached_completion_tokens": 100,
      "price_in": 0.15, "price_out": 0.6, "cost_usd": 0.0123},
     "tokens: 12,345 prompt + 6,789 completion (1,000 of them from cached answers, not billed); cost $0.0123 at "
     "$0.15 in / $0.6 out per million tokens"),
    # no prices: the line says how to get a cost
    ({"prompt_tokens": 5, "completion_tokens": 1, "cached_prompt_tokens": 0, "cached_completion_tokens": 0,
      "price_in": None, "price_out": None, "cost_usd": None},
     "tokens: 5 prompt + 1 completion; give --price-in and --price-out (USD per million tokens) for the cost"),
])
def test_usage_line(usage: dict, expected: str) -> None:
    assert usage_line({"usage": usage}) == expected
