"""The remote-reward clients in examples/ against a live `sv serve`: their rewards are the scorer's own."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

from security_verifiers.core.types import Message, Transcript
from security_verifiers.envs.base import get_env
from tests.helpers import served

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ANSWERS = ['{"label": "Malicious", "p_malicious": 0.8}', '{"label": "Benign", "p_malicious": 0.1}', "garbage"]


def _module(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_verl_slime_and_export_clients_give_the_scorers_rewards(tmp_path: Path) -> None:
    exported = tmp_path / "prompts.jsonl"
    assert _module(EXAMPLES / "remote_reward" / "export_prompts.py").export("network-logs", "test", exported) == 200
    rows = [json.loads(line) for line in exported.read_text().splitlines()]
    env = get_env("network-logs")
    items = env.dataset("test").items
    assert [r["item_id"] for r in rows] == [i.id for i in items]
    assert rows[0]["prompt"] == [{"role": m.role, "content": m.content} for m in env.prompt(items[0])]

    with served("network-logs", "--workers", "1") as (url, _):
        verl = _module(EXAMPLES / "remote_reward" / "verl_reward.py")
        slime = _module(EXAMPLES / "remote_reward" / "slime_reward.py")
        for item, answer in zip(items[:6], ANSWERS * 2, strict=True):
            want = env.score(item, Transcript(messages=[*env.prompt(item), Message(role="assistant", content=answer)]))
            got = verl.score_remote(item.id, answer, url=url)
            assert got["reward"] == want.reward and got["components"] == want.components
            sample = SimpleNamespace(label=item.id, response=answer)
            assert asyncio.run(slime.score_remote(sample.label, sample.response, url=url)) == want.reward
        with pytest.raises(Exception, match="400"):
            verl.score_remote("no-such-item", "x", url=url)
