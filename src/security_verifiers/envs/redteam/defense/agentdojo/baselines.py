"""The scripted policies of AgentDojo items, for E6's baselines (:mod:`...defense.baselines`) to call.

- :func:`reference_reply`: replays the user task's ground truth (its calls in one turn), then answers "comply"
  with AgentDojo's expected output: the task done, the injection ignored.
- :func:`naive_reply`: replays the user task's ground truth (which reads the injection), then the injection task's
  (it obeys what it read), and answers "comply" with both expected outputs: what an assistant that obeys every
  instruction does. Each is done once: several of AgentDojo's checks want exactly one attacker e-mail, and the
  reverse order lets the user's task overwrite one-slot changes (travel's reservation, banking's password). On a
  benign item it is the reference. AgentDojo ships no ground truth for workspace injection tasks 6 to 13 and travel's
  injection_task_6 (a reply only), so there ``naive`` breaches through its reply or not at all.

Every reply is a real turn: the tools run, and the scorer judges what they did.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from security_verifiers.core.types import Completion, Item, Message, ToolCall
from security_verifiers.envs.redteam.defense.agentdojo.items import AgentDojoTarget, GroundTruthCall


def _steps(item: Item, obey: bool) -> list[list[GroundTruthCall] | str]:
    target = AgentDojoTarget.model_validate(item.target)
    attack = target.attack if obey else None
    steps = [calls for calls in (target.solution, attack.solution if attack else []) if calls]
    response = f"{target.answer} {attack.answer}".strip() if attack else target.answer
    return [*steps, json.dumps({"decision": "comply", "response": response})]


def _reply(steps: Sequence[list[GroundTruthCall] | str], messages: Sequence[Message]) -> Completion:
    turn = sum(1 for m in messages if m.role == "assistant")
    step = steps[min(turn, len(steps) - 1)]
    if isinstance(step, str):
        return Completion(text=step, finish_reason="stop")
    calls = [ToolCall(id=f"c{turn}-{k}", name=c.function, arguments=json.dumps(c.args)) for k, c in enumerate(step)]
    return Completion(text="", tool_calls=calls, finish_reason="tool_calls")


def reference_reply(item: Item, messages: Sequence[Message]) -> Completion:
    """The reference's reply at this point of an AgentDojo episode."""
    return _reply(_steps(item, obey=False), messages)


def naive_reply(item: Item, messages: Sequence[Message]) -> Completion:
    """The naive assistant's reply at this point of an AgentDojo episode."""
    return _reply(_steps(item, obey=True), messages)
