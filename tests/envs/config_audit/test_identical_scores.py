"""E2 on the shared patch and toolbox kits scores exactly as before them: every reward, outcome, metric, prompt,
tool schema, tool answer and patch verdict.

The fixture (``fixtures/scores_before_kits.json.gz``, written by ``record_scores.py`` from the code before the
move) holds, for the public set under the default configuration and a tools configuration whose budget the
baselines overrun, each baseline's reply to each item, the full ``Score`` the scorer gave it and the metrics of
the run; the prompts' and tool transcripts' hashes; the toolbox's answers to bad calls; and the patch applier's
verdicts on a table of tricky diffs. The patch applier is the one E2's scorer calls (imported from its module),
the toolbox the one its ``tools()`` builds. Floats are compared exactly: the move was meant to change no
arithmetic.
"""

from __future__ import annotations

import asyncio
import gzip
import json
from functools import cache
from typing import Any

import pytest

from security_verifiers.core.types import Item, Message, Transcript
from security_verifiers.envs.config_audit import ConfigAudit
from security_verifiers.envs.config_audit.env import apply_patch
from tests.envs.config_audit.record_scores import (
    BASELINES,
    CONFIGS,
    FIXTURE,
    TOOL_BASELINES,
    TOOL_CALLS,
    _digest,
    _play,
    patch_verdicts,
)
from tests.helpers import assert_recorded_values_kept


@cache
def _fixture() -> dict[str, Any]:
    return json.loads(gzip.decompress(FIXTURE.read_bytes()))


@cache
def _env(config: str) -> ConfigAudit:
    return ConfigAudit.from_options(CONFIGS[config])  # type: ignore[return-value]


@cache
def _items() -> tuple[Item, ...]:
    return tuple(ConfigAudit().dataset("test").items)


def _json(value: Any) -> Any:
    """``value`` as the fixture stores it (tuples as lists, keys as strings)."""
    return json.loads(json.dumps(value))


def _stable(score: dict[str, Any]) -> dict[str, Any]:
    """``score`` without what differs between two runs of the same code: the seconds the tools took, and the
    list of tokens the HCL parser (lark) says it expected, which string hashing ordered differently per process
    when the fixture was recorded (the parse error now lists them sorted, on one line; a patch error quoting them
    is compared up to that list; the reward never depends on either)."""
    outcome = {k: v for k, v in score["outcome"].items() if k != "tool_seconds"}
    error = outcome.get("patch_error")
    if isinstance(error, str) and "Expected one of:" in error:
        outcome["patch_error"] = error.split("Expected one of:")[0].rstrip()
    return {**score, "outcome": outcome}


def _untimed(value: Any) -> Any:
    """Metrics without the seconds the tools took (``tool_seconds_mean`` wherever it occurs)."""
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items() if "tool_seconds" not in k}
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    return value


RUNS = [f"default/test/{b}" for b in (*BASELINES, "invalid")] + \
       [f"tools-over-budget/test/{b}" for b in (*TOOL_BASELINES, "invalid")]


def test_the_fixture_covers_every_run() -> None:
    assert sorted(_fixture()["runs"]) == sorted(RUNS)
    assert all(len(r["items"]) == 150 for r in _fixture()["runs"].values())
    over = _fixture()["runs"]["tools-over-budget/test/tools"]["scores"]
    assert all(s["outcome"]["over_budget"] == 1 for s in over)  # the budget case is really exercised


@cache
def _transcripts(key: str) -> tuple[Transcript, ...]:
    """The run's transcripts: the stored garbage replies, or the baseline played again (through the tool worker
    in tools mode), checked against the recorded hashes of its replies and whole transcripts."""
    config, _, baseline = key.split("/")
    before = _fixture()["runs"][key]
    if baseline == "invalid":
        return tuple(Transcript(messages=[Message(role="assistant", content=reply)], tool_calls=calls)
                     for reply, calls in zip(before["replies"], before["tool_calls"], strict=True))
    env = _env(config)
    transcripts = _play(env, env.baselines()[baseline](), list(_items()))
    assert [_digest(t.final_text) for t in transcripts] == before["reply_hashes"], f"{key}: other replies"
    assert [t.tool_calls for t in transcripts] == before["tool_calls"], f"{key}: other tool-call counts"
    assert [_digest([m.model_dump(mode="json") for m in t.messages]) for t in transcripts] == \
        before["transcripts"], f"{key}: other transcripts (tool answers)"
    return tuple(transcripts)


@pytest.mark.parametrize("key", RUNS)
def test_scores_and_metrics_are_unchanged(key: str) -> None:
    """The baselines play as before (same replies, same tool transcripts), and score as before, item by item."""
    config = key.split("/")[0]
    before = _fixture()["runs"][key]
    env = _env(config)
    items = _items()
    assert [i.id for i in items] == before["items"]
    scores = env.score_many(items, _transcripts(key))
    for item, score, old in zip(items, scores, before["scores"], strict=True):
        assert _stable(score.model_dump(mode="json")) == _stable(old), f"{key}: {item.id}"  # type: ignore[union-attr]
    outcomes = [s.outcome for s in scores]  # type: ignore[union-attr]
    # Keys added since (the constant floor, more intervals, row flags) are report additions; every recorded value
    # must still be there and equal.
    after = _untimed(_json(env.metrics(outcomes, [i.id for i in items])))
    assert_recorded_values_kept(_untimed(before["metrics"]), after, key)
    assert _untimed(_json(env.point_metrics(outcomes))) == _untimed(before["point_metrics"]), key


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_prompts_are_unchanged(config: str) -> None:
    env = _env(config)
    digests = [_digest([m.model_dump(mode="json") for m in env.prompt(i)]) for i in _items()]
    assert digests == _fixture()["prompts"][config]


def test_tool_schemas_and_answers_are_unchanged() -> None:
    fixture = _fixture()
    env = ConfigAudit.from_options({"mode": "tools", "max_tool_calls": len(TOOL_CALLS) - 1})
    item = next(i for i in _items() if i.id == fixture["tool_item"])
    box = env.tools(item)
    assert box is not None
    assert box.schemas() == fixture["tool_schemas"]
    for (name, arguments), answer in zip(TOOL_CALLS, fixture["tool_answers"], strict=True):
        assert asyncio.run(box.call(name, arguments)) == answer, (name, arguments[:60])


#: Verdicts changed on purpose since the fixture was recorded, each with its reason (the rest must not change).
CHANGED_VERDICTS = {
    # the message read "the patch may not deleted files" (the header's first word pasted in as a verb)
    "deleted-file": "PatchError: the patch may not delete files",
}


def test_patch_verdicts_are_unchanged() -> None:
    before = _fixture()["patches"]
    assert set(CHANGED_VERDICTS) <= set(before)
    assert all(before[name] != verdict for name, verdict in CHANGED_VERDICTS.items())  # each is a real change
    assert patch_verdicts(apply_patch) == {**before, **CHANGED_VERDICTS}
