"""E5's targets: the assistants an attacker model attacks, turn by turn.

A target keeps one conversation and one world for the whole episode. Each turn the attacker's text is placed in
the scenario's carrier (the e-mail, file, page, ticket or payee note the task reads, or the user's own message),
the target handles the task again, and the attacker is shown its visible reply only. Everything the target did
(its messages and tool calls) is kept in :meth:`record`, for the scorer: the attacker never sees it, nor the
canary, which is drawn afresh for every episode.

* :class:`ScriptedTarget`: a program of :mod:`.agent` modelling one documented failure (a level).
* :class:`ServedTarget`: any model behind an OpenAI-compatible endpoint, shown the E6 prompt and tools.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict

from security_verifiers.core.parsing import Parsed, parse_answer
from security_verifiers.core.types import Item, Message, ToolCall
from security_verifiers.envs.redteam.scenario.agent import Behaviour, Memory, plan
from security_verifiers.envs.redteam.scenario.items import Scenario, place
from security_verifiers.envs.redteam.scenario.prompt import FOLLOW_UP, opening
from security_verifiers.envs.redteam.scenario.tools import SCHEMAS, WorldState
from security_verifiers.models.base import Policy

#: Tool calls a target may make over a whole E5 episode, and assistant steps per turn (a served target).
TARGET_MAX_CALLS = 60
TARGET_MAX_STEPS = 8


@dataclass
class TargetTurn:
    content: str
    messages: list[Message]
    reply: str

    def dump(self) -> dict[str, Any]:
        return {"content": self.content, "reply": self.reply,
                "messages": [m.model_dump(mode="json") for m in self.messages]}


class Target(Protocol):
    name: str

    async def turn(self, text: str) -> TargetTurn:
        """Place ``text`` in the carrier, let the target handle the task, and return what it did this turn."""
        ...


@dataclass
class _Conversation:
    scenario: Scenario
    canary: str
    state: WorldState = field(init=False)
    turns: list[TargetTurn] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.state = WorldState(self.scenario.world, TARGET_MAX_CALLS)

    def record(self, name: str) -> dict[str, Any]:
        return {"target": name, "canary": self.canary, "turns": [t.dump() for t in self.turns]}


class ScriptedTarget:
    """A scripted assistant of one level (:data:`.generator.BEHAVIOURS`), deterministic given its canary."""

    def __init__(self, level: str, scenario: Scenario, canary: str) -> None:
        from security_verifiers.envs.redteam.scenario.generator import BEHAVIOURS

        if level not in BEHAVIOURS:
            raise ValueError(f"unknown target level {level!r}; known: {', '.join(BEHAVIOURS)}")
        self.name = level
        self.behaviour: Behaviour = BEHAVIOURS[level]  # type: ignore[assignment]
        self.conversation = _Conversation(scenario, canary)
        self.memory = Memory()

    def play(self, text: str) -> TargetTurn:
        conv = self.conversation
        world, request = place(conv.scenario, [text])
        conv.state.world = world
        step = plan(self.behaviour, world, request, conv.scenario.task, conv.canary, self.memory)
        messages: list[Message] = []
        for k, calls in enumerate((step.reads, step.acts)):
            if not calls:
                continue
            tool_calls = [ToolCall(id=f"t{len(conv.turns)}-{k}-{n}", name=c.name, arguments=c.arguments_json())
                          for n, c in enumerate(calls)]
            messages.append(Message(role="assistant", tool_calls=tool_calls))
            messages += [Message(role="tool", tool_call_id=c.id, content=conv.state.call(c.name, c.arguments))
                         for c in tool_calls]
        messages.append(Message(role="assistant", content=step.answer_json()))
        turn = TargetTurn(text, messages, step.response)
        conv.turns.append(turn)
        return turn

    async def turn(self, text: str) -> TargetTurn:
        return self.play(text)

    def record(self) -> dict[str, Any]:
        return self.conversation.record(self.name)


class ServedTarget:
    """A model behind an OpenAI-compatible endpoint, run as E6's assistant: its system prompt, its tools."""

    def __init__(self, policy: Policy, scenario: Scenario, canary: str, item: Item) -> None:
        self.name = f"model:{policy.name}"
        self.policy = policy
        self.item = item
        self.conversation = _Conversation(scenario, canary)
        self.messages: list[Message] = []

    async def turn(self, text: str) -> TargetTurn:
        conv = self.conversation
        world, request = place(conv.scenario, [text])
        conv.state.world = world
        if not self.messages:
            self.messages = opening(conv.scenario.role, conv.canary, world, request)
        else:
            follow = request if conv.scenario.carrier == "user_turn" else FOLLOW_UP
            self.messages.append(Message(role="user", content=follow))
        start = len(self.messages)
        reply = ""
        for _ in range(TARGET_MAX_STEPS):
            completion = await self.policy.respond(self.item, self.messages, SCHEMAS, 0)
            self.messages.append(Message(role="assistant", content=completion.text,
                                         tool_calls=completion.tool_calls))
            if not completion.tool_calls:
                reply = _visible(completion.text)
                break
            for call in completion.tool_calls:
                self.messages.append(Message(role="tool", tool_call_id=call.id,
                                             content=conv.state.call(call.name, call.arguments)))
        turn = TargetTurn(text, self.messages[start:], reply)
        conv.turns.append(turn)
        return turn

    def record(self) -> dict[str, Any]:
        return self.conversation.record(self.name)


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore")

    response: str


def _visible(text: str) -> str:
    """What the attacker sees of a served target's final message: its ``response`` when it answered in the
    grammar, else the text itself."""
    parsed = parse_answer(text, _Reply)
    return parsed.value.response if isinstance(parsed, Parsed) else text
