"""E1 on the abstaining-classifier kit scores exactly as before it: every reply, reward, outcome and metric.

The fixture (``fixtures/scores_before_kit.json.gz``, written by ``record_scores.py`` from the code before the
move) holds, for the public splits under the default and a custom cost profile, each baseline's reply to each
item, the full ``Score`` the scorer gave it, and the metrics of the run. Floats are compared exactly: JSON
keeps a float's shortest round-tripping form, and the move was meant to change no arithmetic.
"""

from __future__ import annotations

import gzip
import json
from functools import cache
from typing import Any

import pytest

from security_verifiers.core.types import Item, Message, Transcript
from security_verifiers.envs.network_logs import NetworkLogs
from tests.envs.network_logs.record_scores import BASELINES, CONFIGS, FIXTURE, SPLITS
from tests.helpers import assert_recorded_values_kept


@cache
def _fixture() -> dict[str, Any]:
    return json.loads(gzip.decompress(FIXTURE.read_bytes()))


@cache
def _items(split: str) -> tuple[Item, ...]:
    return tuple(NetworkLogs().dataset(split).items)


def _json(value: Any) -> Any:
    """``value`` as the fixture stores it (tuples as lists, keys as strings)."""
    return json.loads(json.dumps(value))


RUNS = [f"{c}/{s}/{b}" for c in CONFIGS for s in SPLITS for b in (*BASELINES, "invalid")]


def test_the_fixture_covers_every_run() -> None:
    assert sorted(_fixture()["runs"]) == sorted(RUNS)
    assert sum(len(r["items"]) for r in _fixture()["runs"].values()) == 2 * (200 + 100) * 7


@pytest.mark.parametrize("key", RUNS)
def test_scores_and_metrics_are_unchanged(key: str) -> None:
    config, split, baseline = key.split("/")
    before = _fixture()["runs"][key]
    env = NetworkLogs.from_options(CONFIGS[config])
    items = _items(split)
    assert [i.id for i in items] == before["items"]
    scores = [env.score(item, Transcript(messages=[Message(role="assistant", content=reply)]))
              for item, reply in zip(items, before["replies"], strict=True)]
    for item, score, old in zip(items, scores, before["scores"], strict=True):
        assert score.model_dump(mode="json") == old, f"{key}: {item.id}"
    outcomes = [s.outcome for s in scores]
    assert_recorded_values_kept(before["metrics"], _json(env.metrics(outcomes, [i.id for i in items])), key)
    assert _json(env.point_metrics(outcomes)) == before["point_metrics"], key


def test_recorded_values_kept_catches_a_changed_or_missing_value() -> None:
    assert_recorded_values_kept({"a": {"b": 1.0}}, {"a": {"b": 1.0, "new": 2}, "more": 3}, "ok")
    for changed in ({"a": {"b": 1.0000001}}, {"a": {}}, {"a": 1.0}):
        with pytest.raises(AssertionError):
            assert_recorded_values_kept({"a": {"b": 1.0}}, changed, "changed")


@pytest.mark.parametrize("key", [k for k in RUNS if not k.endswith("/invalid")])
def test_baselines_answer_as_before(key: str) -> None:
    """The baselines (now built from the kit) give the replies the old ones gave, under either cost profile."""
    config, split, baseline = key.split("/")
    env = NetworkLogs.from_options(CONFIGS[config])
    items = list(_items(split))
    policy = env.baselines()[baseline]()
    policy.prepare(items)
    assert [policy.answer(i, env.prompt(i)) for i in items] == _fixture()["runs"][key]["replies"]
