"""The response cache: keys separate every request that could get another answer; entries persist."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from security_verifiers.core.cache import ResponseCache
from security_verifiers.core.types import Completion, ToolCall, Usage

MESSAGES = [{"role": "user", "content": "hi"}]
SAMPLING = {"temperature": 0.0, "max_tokens": 64, "top_p": None, "seed": None}
BASE: dict[str, Any] = {
    "model": "m",
    "base_url": "http://127.0.0.1:1/v1",
    "messages": MESSAGES,
    "tools": None,
    "sampling": SAMPLING,
    "sample": 0,
}
COMPLETION = Completion(
    text='  {"label": "Benign"}\n',
    tool_calls=[ToolCall(id="c1", name="scan", arguments='{"x": 1}')],
    usage=Usage(prompt_tokens=3, completion_tokens=5),
    finish_reason="stop",
)


def test_key_is_deterministic_and_ignores_dict_order() -> None:
    reordered = {**BASE, "sampling": dict(reversed(list(SAMPLING.items())))}
    assert ResponseCache.key(**BASE) == ResponseCache.key(**reordered)
    assert len(ResponseCache.key(**BASE)) == 64


@pytest.mark.parametrize(
    "change",
    [
        {"model": "other"},
        {"base_url": "http://127.0.0.1:2/v1"},
        {"messages": [{"role": "user", "content": "hi!"}]},
        {"tools": [{"type": "function", "function": {"name": "scan"}}]},
        {"sampling": {**SAMPLING, "temperature": 0.7}},
        {"sampling": {**SAMPLING, "max_tokens": 65}},
        {"sample": 1},
    ],
)
def test_every_part_of_the_request_changes_the_key(change: dict[str, Any]) -> None:
    assert ResponseCache.key(**{**BASE, **change}) != ResponseCache.key(**BASE)


def test_round_trip_marks_hits_cached(tmp_path: Path) -> None:
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        key = ResponseCache.key(**BASE)
        assert cache.get(key) is None
        cache.put(key, COMPLETION, model="m", base_url="http://x/v1")
        hit = cache.get(key)
    assert hit is not None and hit.cached
    assert hit.model_copy(update={"cached": False}) == COMPLETION  # text kept byte for byte


def test_entries_survive_reopening(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "cache.sqlite"
    key = ResponseCache.key(**BASE)
    with ResponseCache(path) as cache:
        cache.put(key, COMPLETION, model="m", base_url="http://x/v1")
    with ResponseCache(path) as cache:
        assert cache.get(key) is not None


def test_committed_entries_are_visible_before_close(tmp_path: Path) -> None:
    """Each put is committed at once, so a process killed before close() keeps its entries."""
    path = tmp_path / "cache.sqlite"
    key = ResponseCache.key(**BASE)
    cache = ResponseCache(path)
    cache.put(key, COMPLETION, model="m", base_url="http://x/v1")
    other = sqlite3.connect(path)
    try:
        assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert other.execute("SELECT COUNT(*) FROM responses WHERE key = ?", (key,)).fetchone()[0] == 1
    finally:
        other.close()
        cache.close()


def test_entry_of_an_old_layout_is_a_miss(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    key = ResponseCache.key(**BASE)
    with ResponseCache(path) as cache:
        cache.put(key, COMPLETION, model="m", base_url="http://x/v1")
        with closing(sqlite3.connect(path)) as raw, raw:
            raw.execute("UPDATE responses SET value = ? WHERE key = ?", ('{"usage": 3}', key))
        assert cache.get(key) is None
        cache.put(key, COMPLETION, model="m", base_url="http://x/v1")  # refetched answers overwrite it
        assert cache.get(key) is not None
