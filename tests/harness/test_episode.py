"""One episode: errors are attributed to their boundary and never scored; tools are looped."""

import asyncio
import json
from typing import Any

import pytest

from security_verifiers.core.types import Completion, Usage
from security_verifiers.envs.base import Toolbox
from security_verifiers.envs.network_logs import NetworkLogs
from security_verifiers.harness.episode import run_episode
from tests.helpers import ScriptedPolicy, e1_item, tool_call

ENV = NetworkLogs()
GOOD = {"label": "Malicious", "p_malicious": 0.9}


def play(policy: Any, env: Any = ENV, timeout_s: float = 5.0):
    return asyncio.run(run_episode(env, policy, e1_item(1), 0, timeout_s))


@pytest.mark.parametrize(
    ("reply", "kind"),
    [
        (ConnectionError("endpoint down"), "provider"),  # network failure at the model boundary
        (RuntimeError("HTTP 500"), "provider"),  # any other failure of the policy
        (TimeoutError(), "timeout"),  # a timeout raised by the client
    ],
)
def test_policy_failures_are_recorded_without_reward(reply: Exception, kind: str) -> None:
    record = play(ScriptedPolicy(lambda item: reply))
    assert record.error is not None and record.error.kind == kind
    assert record.reward is None and record.outcome == {}


def test_slow_policy_times_out() -> None:
    record = play(ScriptedPolicy(lambda item: GOOD, delay=1.0), timeout_s=0.05)
    assert record.error is not None and record.error.kind == "timeout" and record.reward is None


def test_scorer_crash_is_a_scorer_error_not_a_zero() -> None:
    class BrokenScorer(NetworkLogs):
        def score(self, item, transcript):
            raise KeyError("oops")

    record = play(ScriptedPolicy(lambda item: GOOD), env=BrokenScorer())
    assert record.error is not None and record.error.kind == "scorer" and record.reward is None


def test_good_reply_is_scored_and_recorded() -> None:
    record = play(ScriptedPolicy(lambda item: Completion(text=json.dumps(GOOD), usage=Usage(prompt_tokens=7,
                                                                                            completion_tokens=3))))
    assert record.error is None and record.reward == pytest.approx(0.7 + 0.3 * (1 - 0.01))
    assert record.usage.prompt_tokens == 7 and record.transcript.final_text == json.dumps(GOOD)


class EchoTools(Toolbox):
    def __init__(self, fail: bool = False) -> None:
        self.fail = fail

    def schemas(self):
        return [{"type": "function", "function": {"name": "echo", "parameters": {"type": "object"}}}]

    async def call(self, name: str, arguments: str) -> str:
        if self.fail:
            raise OSError("scanner crashed")
        return json.dumps({"echo": json.loads(arguments)})


class ToolEnv(NetworkLogs):
    @property
    def max_turns(self) -> int:
        return 3

    def __init__(self, fail: bool = False) -> None:
        super().__init__()
        self.fail = fail

    def tools(self, item):
        return EchoTools(self.fail)


def two_turn_policy() -> ScriptedPolicy:
    turns = iter([Completion(text="", tool_calls=[tool_call("echo", {"x": 1})]), Completion(text=json.dumps(GOOD))])
    return ScriptedPolicy(lambda item: next(turns))


def test_tool_calls_are_executed_and_recorded() -> None:
    record = play(two_turn_policy(), env=ToolEnv())
    roles = [m.role for m in record.transcript.messages]
    assert roles == ["system", "user", "assistant", "tool", "assistant"]
    assert json.loads(record.transcript.messages[3].content) == {"echo": {"x": 1}}
    assert record.transcript.tool_calls == 1 and record.reward is not None


def test_tool_crash_is_a_tool_error() -> None:
    record = play(two_turn_policy(), env=ToolEnv(fail=True))
    assert record.error is not None and record.error.kind == "tool" and record.reward is None
