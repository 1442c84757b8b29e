"""`sv serve`: the HTTP reward endpoint gives exactly the scorer's verdicts, refuses what it cannot score, and runs
from the command line."""

from __future__ import annotations

import asyncio
import json
import signal
import urllib.request
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp.test_utils import TestClient, TestServer

from security_verifiers.adapters.reward_server import RewardService, build_app
from security_verifiers.core.types import Message, Transcript
from security_verifiers.envs.base import Environment, get_env
from security_verifiers.harness.scoring_pool import ScorerPool
from tests.helpers import served

ANSWERS = ['{"label": "Malicious", "p_malicious": 0.9}', '{"label": "Benign", "p_malicious": 0.05}',
           '{"label": "Abstain", "p_malicious": 0.5}', "not json at all", ""]


def _with_client(env: Environment, body: Callable[[TestClient], Awaitable[Any]], max_batch: int = 64) -> Any:
    pool = ScorerPool(env, 1)
    service = RewardService(env, env.dataset("test").items, pool, max_batch=max_batch)

    async def run() -> Any:
        async with TestClient(TestServer(build_app(service))) as client:
            return await body(client)

    try:
        return asyncio.run(run())
    finally:
        pool.close()


def test_served_rewards_are_the_scorers_own_by_id_whole_item_and_openrlhf_shape() -> None:
    env = get_env("network-logs")
    items = env.dataset("test").items[:10]
    answers = [ANSWERS[i % len(ANSWERS)] for i in range(len(items))]
    expected = [env.score(item, Transcript(messages=[*env.prompt(item), Message(role="assistant", content=a)]))
                for item, a in zip(items, answers, strict=True)]

    async def body(client: TestClient) -> tuple[Any, Any, Any, Any]:
        by_id = await client.post("/score", json={"requests": [{"item_id": i.id, "completion": a}
                                                               for i, a in zip(items, answers, strict=True)]})
        whole = await client.post("/score", json={"requests": [{"item": items[0].model_dump(mode="json"),
                                                                "completion": answers[0]}]})
        prompts = [env.prompt(i)[1].content for i in items]
        rlhf = await client.post("/openrlhf", json={"query": [p + a for p, a in zip(prompts, answers, strict=True)],
                                                    "prompts": prompts, "labels": [i.id for i in items]})
        info = await client.get("/info")
        return await by_id.json(), await whole.json(), await rlhf.json(), await info.json()

    by_id, whole, rlhf, info = _with_client(env, body)
    for got, want in zip(by_id["results"], expected, strict=True):
        assert got["reward"] == want.reward and got["components"] == want.components
        assert got["outcome"] == want.outcome and got["parse_status"] == want.parse_status.value
        assert got["error"] is None
    assert whole["results"][0] == by_id["results"][0]
    assert rlhf["rewards"] == [s.reward for s in expected]
    assert rlhf["extra_logs"]["parse_failure"] == [float(s.parse_status.value != "ok") for s in expected]
    assert info["name"] == "network-logs" and info["version"] == env.version and info["items"] == 200


def test_requests_it_cannot_score_are_refused_with_the_reason() -> None:
    env = get_env("network-logs")
    item = env.dataset("test").items[0]

    async def body(client: TestClient) -> list[tuple[int, str]]:
        sent = [{"requests": [{"item_id": "nope", "completion": "x"}]},
                {"requests": [{"item_id": item.id}]},
                {"requests": [{"item_id": item.id, "item": item.model_dump(mode="json"), "completion": "x"}]},
                {"requests": [{"item": {**item.model_dump(mode="json"), "input": {"flow": 1}}, "completion": "x"}]},
                {"requests": [{"item_id": item.id, "completion": "x"}] * 3},
                {"requests": []}]
        out = []
        for payload in sent:
            response = await client.post("/score", json=payload)
            out.append((response.status, await response.text()))
        response = await client.post("/score", data=b"{not json")
        out.append((response.status, await response.text()))
        response = await client.post("/openrlhf", json={"query": ["abc"], "prompts": ["zzz"], "labels": [item.id]})
        out.append((response.status, await response.text()))
        return out

    statuses = _with_client(env, body, max_batch=2)
    assert [s for s, _ in statuses] == [400, 400, 400, 400, 413, 400, 400, 400]
    assert "unknown item_id 'nope'" in statuses[0][1]
    assert "exactly one of completion and transcript" in statuses[1][1]
    assert "exactly one of item_id and item" in statuses[2][1]
    assert "not a valid network-logs item" in statuses[3][1]
    assert "at most 2" in statuses[4][1]
    assert "does not begin with its prompt" in statuses[7][1]


def test_a_multi_turn_environment_takes_transcripts_not_completions() -> None:
    env = get_env("redteam-defense")
    item = env.dataset("test").items[0]

    async def body(client: TestClient) -> tuple[int, str]:
        response = await client.post("/score", json={"requests": [{"item_id": item.id, "completion": "ok"}]})
        return response.status, await response.text()

    status, text = _with_client(env, body)
    assert status == 400 and "send the whole transcript" in text


def test_sv_serve_listens_scores_and_stops_on_sigterm() -> None:
    with served("network-logs", "--workers", "1") as (url, proc):
        env = get_env("network-logs")
        item = env.dataset("test").items[3]
        request = urllib.request.Request(f"{url}/score", method="POST", headers={"Content-Type": "application/json"},
                                         data=json.dumps({"requests": [{"item_id": item.id,
                                                                        "completion": ANSWERS[0]}]}).encode())
        with urllib.request.urlopen(request, timeout=60) as response:
            result = json.loads(response.read())["results"][0]
        want = env.score(item, Transcript(messages=[*env.prompt(item), Message(role="assistant", content=ANSWERS[0])]))
        assert result["reward"] == want.reward
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0 and "stopped" in err
