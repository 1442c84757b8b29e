"""The verifiers (0.4.0) adapter plays ``sv eval``'s episode and returns the environment's own score.

Each environment's public test items are answered by its baselines through ``sv``'s own episode (``play_episode``)
and scored by its own scorer; then a fake OpenAI-compatible server replays those answers, tool calls included, to the
verifiers env, whose rollouts must reach the same transcript and the same reward and components. ``vf-eval`` itself
runs one environment against the fake server, offline.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

vf = pytest.importorskip("verifiers.v1")

from security_verifiers.adapters.verifiers import (  # noqa: E402
    ENVIRONMENTS,
    SCORE_KEY,
    TRANSCRIPT_KEY,
    environment,
    load_environment,
    taskset_id,
)
from security_verifiers.core.errors import ConfigError, ErrorKind, InfraError  # noqa: E402
from security_verifiers.core.types import Item, Message, Score, Transcript  # noqa: E402
from security_verifiers.envs.base import Environment, get_env  # noqa: E402
from security_verifiers.harness.episode import play_episode  # noqa: E402
from tests.fakeserver import FakeOpenAIServer  # noqa: E402

REPO = Path(__file__).resolve().parents[2]

#: (environment, options, items compared, baselines answering them in turn): the honest and hacking answers give
#: rewards across the range, parse failures included; E2/E3 run checkers, so they compare fewer items.
CASES: list[tuple[str, dict[str, Any], int, tuple[str, ...]]] = [
    ("network-logs", {}, 12, ("reference", "heuristic", "always-malicious", "always-abstain")),
    ("phishing", {}, 12, ("reference", "heuristic", "quote-everything", "fabricated-quotes")),
    ("config-audit", {}, 5, ("reference", "autofix", "claim-everything", "delete-everything", "empty")),
    ("config-audit", {"mode": "tools"}, 5, ("reference", "tools", "claim-everything")),
    ("code-repair", {}, 5, ("reference", "noop", "return-none", "catch-all", "empty-answer")),
    ("code-repair", {"mode": "tools"}, 5, ("reference", "fixer", "noop")),
    ("redteam-attack", {}, 10, ("reference", "templates", "composer", "keyword-salad", "claim-success")),
    ("redteam-defense", {}, 10, ("reference", "keyword-guard", "refuse-all", "comply-all", "leak-in-tool-argument")),
]


def _spread(env: Environment, n: int) -> list[Item]:
    """``n`` test items spread over the split (its families and labels), not its first ``n``."""
    items = list(env.dataset("test").items)
    return items[:: max(1, len(items) // n)][:n]


def _prompt_key(messages: list[dict[str, Any]]) -> str:
    """What identifies an item's episode in a request: its opening system and user messages."""
    opening = [(m["role"], m.get("content")) for m in messages if m["role"] in ("system", "user")][:2]
    return json.dumps(opening)


def _untimed(outcome: dict[str, Any]) -> dict[str, Any]:
    """An outcome without the time its tools took (E2 and E3 record it), which no two plays share."""
    return {k: v for k, v in outcome.items() if k != "tool_seconds"}


def _wire(message: Message) -> dict[str, Any]:
    reply: dict[str, Any] = {"content": message.content}
    if message.tool_calls:
        reply["tool_calls"] = [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                               for c in message.tool_calls]
    return reply


async def _sv_side(env: Environment, items: list[Item], names: tuple[str, ...]) \
        -> dict[str, tuple[Transcript, Score]]:
    """Each item answered by a baseline through sv's episode, and scored by the environment's scorer."""
    factories = env.baselines()
    policies = {name: factories[name]() for name in names}
    for name, policy in policies.items():
        prepare = getattr(policy, "prepare", None)
        if callable(prepare):
            prepare([item for i, item in enumerate(items) if names[i % len(names)] == name])
    out = {}
    for i, item in enumerate(items):
        record, transcript = await play_episode(env, policies[names[i % len(names)]], item)
        assert transcript is not None, record.error
        out[item.id] = (transcript, env.score(item, transcript))
    return out


async def _vf_side(name: str, options: dict[str, Any], ids: set[str], base_url: str) -> dict[str, vf.Trace]:
    """Each item played by the verifiers env against ``base_url``."""
    env = load_environment(name, **options)
    ctx = vf.ModelContext(model="scripted", client=vf.EvalClientConfig(base_url=base_url, api_key_var="SV_TEST_KEY"))
    tasks = [task for task in env.taskset if task.data.item_id in ids]
    async with env.serving():
        episodes = await asyncio.gather(*(env.run_episode(task, ctx) for task in tasks))
    return {task.data.item_id: episode.traces[0] for task, episode in zip(tasks, episodes, strict=True)}


@pytest.mark.parametrize(("name", "options", "n", "names"), CASES,
                         ids=[f"{c[0]}{'-' + c[1]['mode'] if c[1] else ''}" for c in CASES])
def test_rollouts_score_exactly_as_sv_eval(name: str, options: dict[str, Any], n: int,
                                           names: tuple[str, ...]) -> None:
    env = get_env(name, options)
    items = _spread(env, n)
    expected = asyncio.run(_sv_side(env, items, names))
    scripts: dict[str, list[dict[str, Any]]] = {}
    for item in items:
        key = _prompt_key([m.to_openai() for m in env.prompt(item)])
        assert key not in scripts, f"two items open with the same prompt ({item.id})"
        transcript = expected[item.id][0]
        scripts[key] = [_wire(m) for m in transcript.messages if m.role == "assistant"]

    def reply(request: dict[str, Any]) -> dict[str, Any]:
        turn = sum(m["role"] == "assistant" for m in request["messages"])
        return scripts[_prompt_key(request["messages"])][turn]

    with FakeOpenAIServer(reply=reply) as server:
        traces = asyncio.run(_vf_side(name, options, set(expected), server.base_url))
        requests = server.requests

    assert set(traces) == set(expected)
    assert len(requests) == sum(len(s) for s in scripts.values())  # every scripted answer asked for, once
    multi_turn = env.max_turns > 1
    assert all(("tools" in r) == multi_turn for r in requests)
    for item_id, trace in traces.items():
        transcript, score = expected[item_id]
        assert trace.ok, (item_id, trace.errors)
        played = Transcript.model_validate(trace.info[TRANSCRIPT_KEY])
        assert played.messages == transcript.messages, item_id
        assert played.world == transcript.world, item_id
        assert played.tool_calls == transcript.tool_calls, item_id
        assert trace.reward == score.reward, item_id
        assert {k: trace.metrics[k] for k in env.component_weights()} == score.components, item_id
        recorded = Score.model_validate(trace.info[SCORE_KEY])
        assert recorded.parse_status == score.parse_status, item_id
        assert _untimed(recorded.outcome) == _untimed(score.outcome), item_id
    rewards = {score.reward for _, score in expected.values()}
    assert len(rewards) > 1, f"the baselines' answers all scored {rewards}: the comparison shows little"


def test_each_environment_is_found_by_its_taskset_id() -> None:
    for name in ENVIRONMENTS:
        config = vf.resolve_env_config({"taskset": {"id": taskset_id(name)}})
        env = vf.load_environment(config)
        assert type(env).__name__ == "SvEnv"
        assert env.taskset.ENV == name
        assert type(env._harnesses["agent"]).__name__ == "SvHarness"
        assert env.config.agent.runtime.type == "subprocess"


def test_options_and_split_reach_the_environment() -> None:
    env = load_environment("config-audit", mode="tools")
    task = next(iter(env.taskset))
    assert task.data.options == {"mode": "tools"} and task.data.split == "test"
    ood = load_environment("network-logs", split="ood")
    assert {t.data.split for t in ood.taskset} == {"ood"}
    with pytest.raises(ConfigError, match="mode"):
        load_environment("config-audit", mode="nonsense")
    with pytest.raises(ValueError, match="unknown environment"):
        load_environment("nope")
    with pytest.raises(ValueError, match="system_prompt"):
        vf.load_environment(vf.resolve_env_config({"taskset": {"id": taskset_id("phishing"),
                                                               "system_prompt": str(REPO / "README.md")}}))


def test_a_provider_failure_fails_the_rollout_rather_than_scoring_zero() -> None:
    with FakeOpenAIServer() as server:
        server.fail_next(*([400] * 20))
        first = get_env("network-logs").dataset("test").items[0].id
        traces = asyncio.run(_vf_side("network-logs", {}, {first}, server.base_url))
    (trace,) = traces.values()
    assert not trace.ok
    assert TRANSCRIPT_KEY not in trace.info and SCORE_KEY not in trace.info
    assert trace.rewards.get("reward") is None


def test_a_scorer_infrastructure_error_leaves_the_reward_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(item: Item, transcript: Transcript) -> Score:
        raise InfraError(ErrorKind.SCORER, "the checker crashed")

    monkeypatch.setattr(environment("network-logs", {}), "score", broken)
    answer = json.dumps({"label": "Malicious", "p_malicious": 0.9})
    with FakeOpenAIServer(reply=lambda _request: answer) as server:
        first = get_env("network-logs").dataset("test").items[0].id
        traces = asyncio.run(_vf_side("network-logs", {}, {first}, server.base_url))
    (trace,) = traces.values()
    assert not trace.ok
    assert TRANSCRIPT_KEY in trace.info and SCORE_KEY not in trace.info
    assert trace.rewards.get("reward") is None  # unset, never a 0
    assert "the checker crashed" in str(trace.errors)


def test_vf_eval_runs_an_environment_offline(tmp_path: Path) -> None:
    answer = json.dumps({"label": "Malicious", "p_malicious": 0.9})
    with FakeOpenAIServer(reply=lambda _request: answer) as server:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
        env.pop("PRIME_API_KEY", None)
        code = "import sys; from verifiers.v1.cli.eval.main import main; sys.argv[0] = 'vf-eval'; main()"
        done = subprocess.run(
            [sys.executable, "-c", code, taskset_id("network-logs"), "--model", "scripted", "--client.base-url",
             server.base_url, "--client.api-key-var", "SV_TEST_KEY", "-n", "3", "--no-push", "--no-rich",
             "-o", str(tmp_path), "--max-concurrent", "2"],
            capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        assert server.request_count == 3
    (traces,) = tmp_path.glob("*/traces.jsonl")
    episodes = [json.loads(line) for line in traces.read_text().splitlines()]
    assert len(episodes) == 3
    sv = get_env("network-logs")
    items = {item.id: item for item in sv.dataset("test").items}
    for episode in episodes:
        (trace,) = episode["traces"]
        item = items[trace["task"]["data"]["item_id"]]
        score = sv.score(item, Transcript(messages=[*sv.prompt(item), Message(role="assistant", content=answer)]))
        assert trace["rewards"]["reward"]["score"] == score.reward
        assert {k: trace["metrics"][k] for k in sv.component_weights()} == score.components
