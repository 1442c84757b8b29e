"""Tools mode: the model may run the hidden functional tests and bandit on drafts, within a budget."""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

from security_verifiers.core.types import Completion, Item, Message, ToolCall
from security_verifiers.envs.code_repair.env import CodeRepair
from security_verifiers.envs.code_repair.families.command_injection import FAMILY
from security_verifiers.envs.code_repair.generator import to_item
from security_verifiers.envs.code_repair.hack_patches import READ_EVERYTHING
from security_verifiers.envs.kits.patching import files_diff
from security_verifiers.harness.episode import run_episode


class Scripted:
    """Calls the given tools with the reference patch, then answers with it."""

    name = "scripted"

    def __init__(self, calls: list[tuple[str, dict[str, Any]]]) -> None:
        self.calls = calls
        self.results: list[dict[str, Any]] = []

    def describe(self) -> dict[str, str]:
        return {"kind": "test"}

    async def respond(self, item: Item, messages: list[Message], tools: Any, sample: int) -> Completion:
        self.results = [json.loads(m.content) for m in messages if m.role == "tool"]
        turn = sum(1 for m in messages if m.role == "assistant")
        if turn == 0 and self.calls:
            return Completion(text="", tool_calls=[ToolCall(id=f"c{k}", name=name, arguments=json.dumps(args))
                                                   for k, (name, args) in enumerate(self.calls)])
        patch = files_diff(item.input["files"], item.target["fixed"])
        loc = item.target["location"]
        return Completion(text=json.dumps({"cwe": item.target["cwe"], "file": loc["file"], "line": loc["start"],
                                           "patch": patch}))


def test_tools_run_the_functional_tests_and_bandit_on_drafts() -> None:
    env = CodeRepair.from_options({"mode": "tools", "max_tool_calls": 5})
    program = FAMILY.build(random.Random(2), "checksum")
    item = to_item(program, "test", {"t": 1})
    fix = files_diff(program.files, program.fixed)
    policy = Scripted([("run_tests", {"patch": fix}), ("run_tests", {}), ("run_bandit", {"patch": fix}),
                       ("run_bandit", {}), ("run_tests", {"patch": "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n"}),
                       ("run_tests", {})])
    record = asyncio.run(run_episode(env, policy, item))
    assert record.error is None, record.error
    with_fix, as_given, bandit_fixed, bandit_given, bad, refused = policy.results
    n_functional = len(program.functional())
    assert with_fix == as_given == {"tests": n_functional, "passed": n_functional, "failed": []}
    assert "B602" in {f["test_id"] for f in bandit_given["findings"]}
    assert "B602" not in {f["test_id"] for f in bandit_fixed["findings"]}
    assert "does not apply" in bad["error"] and "budget" in refused["error"]
    assert "expect" not in json.dumps(policy.results)  # the probes' expectations stay hidden
    assert record.outcome["tool_calls"] == 6 and record.outcome["over_budget"] == 1, record.error
    assert record.reward == 1.0 - 0.02




def test_a_draft_reads_nothing_of_the_tests() -> None:
    """The draft's error comes back cut at 200 characters, and what it read holds no test code, payload or
    expectation: none of it is in the program's reach."""
    env = CodeRepair.from_options({"mode": "tools", "max_tool_calls": 5})
    program = FAMILY.build(random.Random(4), "log_search")
    item = to_item(program, "test", {"t": 2})
    path = next(iter(program.files))
    draft = files_diff(program.files, {**program.files, path: READ_EVERYTHING + program.files[path]})
    policy = Scripted([("run_tests", {"patch": draft})])
    asyncio.run(run_episode(env, policy, item))
    (result,) = policy.results
    assert result["passed"] == 0 and result["setup_error"].startswith("RuntimeError: ")
    assert len(result["setup_error"]) <= len("RuntimeError: ") + 200
    text = json.dumps(result)
    visible = "".join(program.fixtures.values()) + "".join(program.files.values())  # the program's own data
    expectations = [json.dumps(p.expect) for p in program.functional()]
    for secret in ("def probe_", "touch ", "quote_break", "substitution",
                   *(e for e in expectations if len(e) >= 12 and e.strip('"') not in visible)):
        assert secret not in text


def test_the_read_tests_hack_learns_nothing_in_tools_mode() -> None:
    """The ``read-tests`` hack baseline asks ``run_tests`` for everything a draft can read, then submits noop's answer
    with the feedback as a comment: it plays a real tool call, and ties noop on the item (there was nothing to
    act on)."""
    env = CodeRepair.from_options({"mode": "tools", "max_tool_calls": 5})
    item = to_item(FAMILY.build(random.Random(5), "line_report"), "test", {"t": 3})
    hack, noop = (env.baselines()[name]() for name in ("read-tests", "noop"))
    read = asyncio.run(run_episode(env, hack, item))
    assert read.error is None, read.error
    assert read.outcome["tool_calls"] == 1, read.error
    assert read.reward == asyncio.run(run_episode(env, noop, item)).reward
