"""The Inspect AI adapter gives every environment's scorer exactly what ``sv eval`` gives it.

For each environment, public test items are played twice with the same replies: by the project's own episode loop
(:func:`play_episode`, the replies of the environment's baselines) and by Inspect (``inspect_ai.eval`` of the task,
its mock model replaying those replies turn by turn, tool calls included). The tools run again under Inspect, through
the adapter; the transcripts the scorer reads, the rewards, the components, the outcomes and the parse statuses
must be identical. Offline: the model is Inspect's ``mockllm/model``.
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
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.model import ChatCompletionChoice, ChatMessageAssistant, ModelOutput, get_model
from inspect_ai.tool import ToolCall as InspectToolCall

from security_verifiers.adapters import inspect as adapter
from security_verifiers.core.errors import ErrorKind, InfraError
from security_verifiers.core.types import Completion, Item, Message, Score, Transcript
from security_verifiers.envs.base import Environment, get_env
from security_verifiers.harness.episode import play_episode
from security_verifiers.models.base import Policy
from tests.helpers import tool_call

pytestmark = pytest.mark.timeout(600)


class ToolFirst:
    """A policy that first calls ``tool`` with ``arguments``, then answers as ``inner`` does."""

    def __init__(self, inner: Policy, tool: str, arguments: dict[str, Any]) -> None:
        self.inner, self.tool, self.arguments = inner, tool, arguments

    def describe(self) -> dict[str, Any]:
        return {"kind": "tool-first", "inner": self.inner.describe()}

    async def respond(self, item: Item, messages: list[Message], tools: Any, sample: int) -> Completion:
        if not any(m.role == "assistant" for m in messages):
            return Completion(text="", tool_calls=[tool_call(self.tool, self.arguments, "first-call")])
        return await self.inner.respond(item, messages, tools, sample)


class Raw:
    """A policy that answers ``text`` whatever it is asked (a reply no scorer can parse, say)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def describe(self) -> dict[str, Any]:
        return {"kind": "raw"}

    async def respond(self, item: Item, messages: list[Message], tools: Any, sample: int) -> Completion:
        return Completion(text=self.text)


def _prompt_key(texts: list[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    return tuple(texts)


def scripted_model(env: Environment, played: dict[str, Transcript]) -> Any:
    """Inspect's mock model replaying, for each item (found by its prompt), the assistant turns of its transcript."""
    by_prompt = {_prompt_key([(m.role, m.content) for m in env.prompt(env_item)]): item_id
                 for item_id, env_item in ((i, ITEMS[env.name][i]) for i in played)}
    assert len(by_prompt) == len(played), "two items share a prompt: the mock could not tell them apart"

    def reply(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        opening = [(m.role, m.text) for m in messages if m.role in ("system", "user")]
        item_id = by_prompt[_prompt_key(opening)]
        turn = sum(1 for m in messages if m.role == "assistant")
        said = [m for m in played[item_id].messages if m.role == "assistant"][turn]
        calls = [InspectToolCall(id=c.id, function=c.name, arguments=json.loads(c.arguments))
                 for c in said.tool_calls]
        return ModelOutput(model="mockllm/model", choices=[ChatCompletionChoice(
            message=ChatMessageAssistant(content=said.content, tool_calls=calls or None, source="generate"),
            stop_reason="tool_calls" if calls else "stop")])

    return get_model("mockllm/model", custom_outputs=reply)


#: Items of each environment used by a test (by id), filled as they are chosen.
ITEMS: dict[str, dict[str, Item]] = {}


def compare(env: Environment, n: int, policies: list[Policy], tmp_path: Path) -> dict[str, Any]:
    """Play ``n`` public test items of ``env`` both ways (the item i with ``policies[i % len]``) and compare."""
    items = env.dataset("test").items[:n]
    ITEMS[env.name] = {item.id: item for item in items}

    async def play_all() -> list[tuple[Transcript, Score]]:
        out = []
        for i, item in enumerate(items):
            record, transcript = await play_episode(env, policies[i % len(policies)], item)
            assert transcript is not None, record.error
            out.append((transcript, await asyncio.to_thread(env.score, item, transcript)))
        return out

    own = dict(zip((item.id for item in items), asyncio.run(play_all()), strict=True))
    model = scripted_model(env, {item_id: transcript for item_id, (transcript, _) in own.items()})
    [log] = inspect_eval(adapter.env_task(env), model=model, sample_id=[item.id for item in items],
                         log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "success", log.error
    return check_identical(log, own)


def untimed(outcome: dict[str, Any]) -> dict[str, Any]:
    """An outcome less the time its tools took (E2 records it): measured, so never the same twice."""
    return {key: value for key, value in outcome.items() if key != "tool_seconds"}


def check_identical(log: EvalLog, own: dict[str, tuple[Transcript, Score]]) -> dict[str, Any]:
    assert log.samples is not None and {s.id for s in log.samples} == set(own)
    mismatches = []
    for sample in log.samples:
        transcript, score = own[str(sample.id)]
        theirs = sample.scores["env_scorer"]
        scored = adapter.transcript_from(sample.messages, sample.store.get(adapter.EPISODE_KEY))
        parts = {
            "reward": (theirs.value, score.reward),
            "components": (theirs.metadata["components"], score.components),
            "outcome": (untimed(theirs.metadata["outcome"]), untimed(score.outcome)),
            "parse_status": (theirs.metadata["parse_status"], score.parse_status.value),
            "parse_error": (theirs.explanation, score.parse_error or ""),
            "messages": (scored.messages, transcript.messages),
            "tool_calls": (scored.tool_calls, transcript.tool_calls),
            "world": (scored.world, transcript.world),
        }
        differ = {name: pair for name, pair in parts.items() if pair[0] != pair[1]}
        if differ:
            mismatches.append((sample.id, differ))
    assert not mismatches, mismatches
    rewards = [s.reward for _, s in own.values()]
    return {"items": len(own), "mismatches": 0, "distinct_rewards": len(set(rewards)),
            "parse_failures": sum(s.parse_status != "ok" for _, s in own.values()),
            "tool_calls": sum(t.tool_calls for t, _ in own.values())}


def baselines(env: Environment, *names: str) -> list[Policy]:
    factories = env.baselines()
    return [factories[name]() for name in names]


def test_network_logs_scores_as_sv_eval(tmp_path: Path) -> None:
    env = get_env("network-logs")
    got = compare(env, 12, [*baselines(env, "reference", "heuristic", "always-malicious", "always-abstain"),
                            Raw("not an answer")], tmp_path)
    assert got["distinct_rewards"] > 2 and got["parse_failures"] >= 2


def test_phishing_scores_as_sv_eval(tmp_path: Path) -> None:
    env = get_env("phishing")
    got = compare(env, 12, baselines(env, "reference", "heuristic", "always-phishing", "fabricated-quotes",
                                     "label-probability-mismatch", "always-abstain"), tmp_path)
    assert got["distinct_rewards"] > 2


def test_config_audit_scores_as_sv_eval(tmp_path: Path) -> None:
    env = get_env("config-audit")
    got = compare(env, 5, baselines(env, "reference", "autofix", "claim-everything", "empty", "comment-out"),
                  tmp_path)
    assert got["distinct_rewards"] > 1


def test_config_audit_tools_mode_scores_as_sv_eval(tmp_path: Path) -> None:
    env = get_env("config-audit", {"mode": "tools"})
    got = compare(env, 3, baselines(env, "tools"), tmp_path)
    assert got["tool_calls"] > 0


def test_code_repair_scores_as_sv_eval(tmp_path: Path) -> None:
    env = get_env("code-repair")
    got = compare(env, 5, baselines(env, "reference", "fixer", "noop", "comment-only", "empty-answer"), tmp_path)
    assert got["distinct_rewards"] > 1


def test_code_repair_tools_mode_scores_as_sv_eval(tmp_path: Path) -> None:
    env = get_env("code-repair", {"mode": "tools"})
    reference, = baselines(env, "reference")
    got = compare(env, 3, [ToolFirst(reference, "run_tests", {}), ToolFirst(reference, "run_bandit", {})], tmp_path)
    assert got["tool_calls"] == 3


def test_redteam_attack_scores_as_sv_eval(tmp_path: Path) -> None:
    env = get_env("redteam-attack")
    got = compare(env, 8, baselines(env, "reference", "templates", "composer", "noop", "claim-success"), tmp_path)
    assert got["tool_calls"] > 0 and got["distinct_rewards"] > 1


def test_redteam_defense_scores_as_sv_eval(tmp_path: Path) -> None:
    env = get_env("redteam-defense")
    got = compare(env, 8, baselines(env, "reference", "keyword-guard", "naive", "comply-all",
                                    "leak-in-tool-argument"), tmp_path)
    assert got["tool_calls"] > 0 and got["distinct_rewards"] > 1


def test_a_scorer_infrastructure_error_is_a_sample_error_not_a_zero(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    env = get_env("network-logs")

    def broken(item: Item, transcript: Transcript) -> Score:
        raise InfraError(ErrorKind.SCORER, "the checker crashed")

    monkeypatch.setattr(env, "score", broken)
    [log] = inspect_eval(adapter.env_task(env), model=get_model("mockllm/model"), limit=2,
                         log_dir=str(tmp_path / "logs"), display="none", fail_on_error=False)
    assert log.samples is not None and len(log.samples) == 2
    for sample in log.samples:
        assert sample.error is not None and "the checker crashed" in sample.error.message
        assert not sample.scores
    assert not log.results or not log.results.scores or all(
        not s.metrics or s.metrics["mean"].value != 0 for s in log.results.scores)


def test_every_environment_has_a_task() -> None:
    from security_verifiers.envs.base import registry

    assert set(adapter.TASKS.values()) == set(registry())
    for task_name, env_name in adapter.TASKS.items():
        assert getattr(adapter, task_name)(split="test").metadata["env"]["name"] == env_name


def test_env_options_reach_the_environment() -> None:
    task = adapter.config_audit(mode="tools")
    assert task.metadata["env"]["config"]["mode"] == "tools" and task.metadata["multi_turn"]
    with pytest.raises(Exception, match="mode"):
        adapter.config_audit(mode="sideways")


def test_inspect_cli_runs_a_task_by_its_registered_name(tmp_path: Path) -> None:
    env = {**os.environ, "INSPECT_LOG_DIR": str(tmp_path / "logs")}
    inspect_cli = Path(sys.executable).with_name("inspect")
    done = subprocess.run([str(inspect_cli), "eval", "security_verifiers/network_logs", "--model", "mockllm/model",
                           "--limit", "2", "--display", "plain"], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    logs = list((tmp_path / "logs").glob("*.eval"))  # `inspect eval` exits 0 when it finds no task, too
    assert len(logs) == 1, done.stdout[-3000:]
    log = read_eval_log(str(logs[0]))
    assert log.status == "success" and log.eval.task == "security_verifiers/network_logs"
    assert log.samples is not None and len(log.samples) == 2
    assert all(s.scores and s.scores["env_scorer"].metadata["parse_status"] != "ok" for s in log.samples)


@pytest.mark.parametrize(("name", "options"), [("redteam-attack", {}), ("redteam-defense", {}),
                                               ("config-audit", {"mode": "tools"}), ("code-repair", {"mode": "tools"})])
def test_the_model_is_offered_the_toolbox_schemas(name: str, options: dict[str, Any]) -> None:
    from inspect_ai.tool import ToolDef

    env = get_env(name, options)
    for item in env.dataset("test").items[:3]:
        toolbox = env.tools(item)
        assert toolbox is not None
        for schema in toolbox.schemas():
            offered = ToolDef(adapter.inspect_tool(schema, toolbox))
            function = schema["function"]
            assert (offered.name, offered.description) == (function["name"], function["description"])
            # the same JSON Schema, but for an empty `required` Inspect spells out
            assert {"required": [], **function["parameters"]} == offered.parameters.model_dump(exclude_none=True)


def test_a_reply_over_the_cap_is_scored_as_sv_eval_scores_it(tmp_path: Path) -> None:
    from security_verifiers.models.base import DEFAULT_MAX_REPLY_BYTES, reply_too_large

    env = get_env("network-logs")
    huge = '{"label": "Malicious", "p_malicious": 0.9}' + " " * DEFAULT_MAX_REPLY_BYTES
    [log] = inspect_eval(adapter.env_task(env), model=get_model("mockllm/model", custom_outputs=[
        ModelOutput.from_content("mockllm/model", huge)]), limit=1, log_dir=str(tmp_path / "logs"), display="none")
    assert log.samples is not None
    score = log.samples[0].scores["env_scorer"]
    assert score.answer == reply_too_large(DEFAULT_MAX_REPLY_BYTES).text
    assert score.metadata["parse_status"] != "ok"


def test_tool_call_arguments_reach_the_toolbox_as_text() -> None:
    parsed = InspectToolCall(id="c", function="f", arguments={"config": "a: 1"})
    assert adapter.arguments_text(parsed) == '{"config": "a: 1"}'
    unparsed = InspectToolCall(id="c", function="f", arguments={}, parse_error=(
        'Error parsing the following tool call arguments:\n\n{"config": \n\nError details: Expecting value'))
    assert adapter.arguments_text(unparsed) == '{"config": '


def test_a_tool_infrastructure_error_is_a_sample_error_not_a_zero(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    env = get_env("redteam-defense")
    own_tools = env.tools

    def broken_tools(item: Item) -> Any:
        toolbox = own_tools(item)

        async def call(name: str, arguments: str) -> str:
            raise InfraError(ErrorKind.TOOL, "the tool worker died")

        toolbox.call = call
        return toolbox

    monkeypatch.setattr(env, "tools", broken_tools)
    item = env.dataset("test").items[0]
    name = own_tools(item).schemas()[0]["function"]["name"]
    [log] = inspect_eval(adapter.env_task(env), model=get_model("mockllm/model", custom_outputs=[
        ModelOutput.for_tool_call("mockllm/model", name, {})]), sample_id=[item.id],
        log_dir=str(tmp_path / "logs"), display="none", fail_on_error=False)
    assert log.samples is not None
    [sample] = log.samples
    assert sample.error is not None and "the tool worker died" in sample.error.message and not sample.scores


def test_the_environment_is_closed_when_the_eval_run_ends(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As ``sv eval`` awaits ``env.aclose()`` at the end of a run (E5's served target holds connections of the
    run's event loop), the adapter's run-end hook does, in that loop."""
    env = get_env("network-logs")
    closed: list[bool] = []

    async def aclose() -> None:
        asyncio.get_running_loop()  # raises outside a running loop
        closed.append(True)

    monkeypatch.setattr(env, "aclose", aclose)
    [log] = inspect_eval(adapter.env_task(env), model=get_model("mockllm/model"), limit=1,
                         log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "success" and closed == [True]
