"""The budgeted-toolbox kit on toy toolboxes (no environment): the budget, counted once, refused calls included,
the same way worker-backed and in process; argument errors answered as JSON; the per-call limit; who is blamed
for a failure; the schema derived from the arguments model; and an in-process episode rebuilt by replay."""

from __future__ import annotations

import asyncio
import gc
import json
import time
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel, ConfigDict, Field

from security_verifiers.core.errors import ErrorKind, InfraError
from security_verifiers.core.types import Message, ToolCall
from security_verifiers.core.workers import LimitedWorker, WorkerLimits
from security_verifiers.envs.kits.toolbox import (
    BudgetedToolbox,
    CallBudget,
    InProcessToolbox,
    Tool,
    parameters_schema,
    parse_arguments,
    parse_object,
    shared_worker,
    tool_error,
)


class TextArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str | None = Field(None, description="The text (default: the episode's).")


class ScaleArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    factor: float | None = Field(None, description="A number.")
    loud: bool | None = Field(None, description="A switch.")


class CountArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(description="Required text.")
    times: int | None = Field(None, description="How often.")


def _noop() -> None:
    return None


def _length(_state: None, text: str) -> dict[str, Any]:
    if text == "crash":
        raise RuntimeError("the tool broke")
    if text == "spin":
        time.sleep(30)
    return {"length": len(text)}


def _repeat(_state: None, text: str, times: int) -> dict[str, Any]:
    return {"text": text * times}


class ToyToolbox(BudgetedToolbox):
    tools: ClassVar[tuple[Tool, ...]] = (
        Tool("length", "Length of a text.", TextArgs, _length),
        Tool("repeat", "A text repeated.", CountArgs, _repeat),
    )
    max_text_chars: ClassVar[int] = 10
    own_input: ClassVar[str] = "the toy's text"
    draft: ClassVar[str] = "this text"

    def __init__(self, text: str, max_calls: int, worker: LimitedWorker, time_s: float = 10) -> None:
        super().__init__(CallBudget(max_calls), WorkerLimits(time_s=time_s, memory_mb=1024), worker)
        self.text = text

    def bind(self, tool: Tool, arguments: Any) -> tuple[tuple[Any, ...], bool]:
        if tool.name == "repeat":
            return (arguments.text, arguments.times or 2), False
        text = self.text if arguments.text is None else arguments.text
        return (text,), text == self.text


@pytest.fixture(scope="module")
def worker() -> Any:
    worker = LimitedWorker(_noop, (), ErrorKind.TOOL)
    yield worker
    worker.close()


class Counter(InProcessToolbox):
    """A toy world: ``add`` changes it, ``show`` reads it."""

    def __init__(self, max_calls: int) -> None:
        super().__init__(CallBudget(max_calls))
        self.total = 0

    def schemas(self) -> list[dict[str, Any]]:
        return []

    def tool_names(self) -> list[str]:
        return ["add", "show"]

    def answer(self, name: str, arguments: str) -> str:
        if name == "show":
            return json.dumps({"total": self.total})
        parsed = parse_arguments(CountArgs, arguments, self.max_text_chars)
        if isinstance(parsed, str):
            return tool_error(parsed)
        self.total += parsed.times or 1  # type: ignore[attr-defined]
        return json.dumps({"total": self.total})


def answer(box: BudgetedToolbox | InProcessToolbox, name: str, arguments: str) -> dict[str, Any]:
    return json.loads(asyncio.run(box.call(name, arguments)))


def test_schemas_come_from_the_arguments_models() -> None:
    assert ToyToolbox.tools[0].schema == {"type": "function", "function": {
        "name": "length", "description": "Length of a text.", "parameters": {
            "type": "object", "properties": {"text": {"type": "string",
                                                      "description": "The text (default: the episode's)."}},
            "additionalProperties": False}}}
    assert parameters_schema(CountArgs)["required"] == ["text"]
    assert parameters_schema(CountArgs)["properties"]["times"]["type"] == "integer"
    assert [v["type"] for v in parameters_schema(ScaleArgs)["properties"].values()] == ["number", "boolean"]


class _Nested(BaseModel):
    path: list[str]


class _OptionalWithDefault(BaseModel):
    text: str | None = "x"


@pytest.mark.parametrize("model", [_Nested, _OptionalWithDefault])
def test_an_arguments_model_the_schema_cannot_say_is_refused_when_declared(model: type[BaseModel]) -> None:
    with pytest.raises(TypeError, match="tool argument"):
        Tool("t", "d", model, _length)


@pytest.mark.parametrize(
    ("model", "text", "expected"),
    [
        (TextArgs, "", None),  # no arguments: the defaults
        (TextArgs, "  ", None),
        (TextArgs, '{"text": "abc"}', None),
        (TextArgs, "not json", "arguments are not valid JSON: Expecting value"),
        (TextArgs, "[1]", "arguments must be an object with at most the key 'text'"),
        (TextArgs, '{"path": "/etc/passwd"}', "arguments must be an object with at most the key 'text'"),
        (CountArgs, '{"x": 1}', "arguments must be an object with at most the keys 'text', 'times'"),
        (TextArgs, '{"text": null}', "text must be a string of at most 10 characters"),  # leave it out instead
        (TextArgs, '{"text": {"$ref": "x"}}', "text must be a string of at most 10 characters"),
        (TextArgs, '{"text": "01234567890"}', "text must be a string of at most 10 characters"),
        (CountArgs, "{}", "text: Field required"),
        (CountArgs, '{"text": "a", "times": "3"}', "times: Input should be a valid integer"),  # strict: no coercion
        (ScaleArgs, '{"factor": 3, "loud": true}', None),  # an integer is a number
        (ScaleArgs, '{"loud": 1}', "loud: Input should be a valid boolean"),
    ],
)
def test_arguments_are_checked(model: type[BaseModel], text: str, expected: str | None) -> None:
    parsed = parse_arguments(model, text, max_text_chars=10)
    if expected is None:
        assert isinstance(parsed, model)
    else:
        assert isinstance(parsed, str) and parsed.startswith(expected)


def test_calls_run_in_the_worker_with_the_episode_defaults(worker: LimitedWorker) -> None:
    box = ToyToolbox("hello", 5, worker)
    assert answer(box, "length", "{}") == {"length": 5}
    assert answer(box, "length", '{"text": "hi"}') == {"length": 2}
    assert answer(box, "repeat", '{"text": "ab", "times": 3}') == {"text": "ababab"}
    assert box.calls == 3


def test_every_call_counts_and_the_budget_refuses_past_it(worker: LimitedWorker) -> None:
    box = ToyToolbox("hello", 3, worker)
    assert "unknown tool 'rm'; available: length, repeat" in answer(box, "rm", "{}")["error"]
    assert "not valid JSON" in answer(box, "length", "{")["error"]
    assert answer(box, "length", "{}") == {"length": 5}  # the third call, still within the budget
    refused = answer(box, "length", "{}")
    assert refused == {"error": "tool budget exceeded: at most 3 calls per episode; answer now"}
    assert box.calls == 4 and box.budget.over(box.calls) == 1  # what the scorer will cost, from the same rule


def test_in_process_calls_count_and_refuse_as_the_worker_backed_ones() -> None:
    box = Counter(3)
    assert answer(box, "rm", "{}") == {"error": "unknown tool 'rm'; available: add, show"}
    assert answer(box, "add", "{") == {"error": "arguments are not valid JSON: Expecting property name enclosed in "
                                                "double quotes"}
    assert answer(box, "add", '{"text": "a", "times": 2}') == {"total": 2}
    assert answer(box, "show", "") == {"error": "tool budget exceeded: at most 3 calls per episode; answer now"}
    assert box.calls == 4 and box.budget.over(box.calls) == 1 and box.total == 2


def test_replay_rebuilds_an_in_process_episode_refusals_included() -> None:
    calls = [ToolCall(id=str(k), name="add", arguments='{"text": "a"}') for k in range(3)]
    messages = [Message(role="assistant", tool_calls=calls), Message(role="tool", content="ignored"),
                Message(role="user", content="no calls here"), Message(role="assistant", content="done")]
    box = Counter(2).replay(messages)
    assert (box.calls, box.total) == (3, 2)  # the third add was refused unexecuted, and counted


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", {}),  # no arguments
        ('{"ids": [1, 2], "when": null}', {"ids": [1, 2], "when": None}),  # any keys and values: the tool checks
        ("[1]", "arguments must be a JSON object"),
        ("nope", "arguments are not valid JSON: Expecting value"),
        ('{"a": "' + "x" * 30 + '"}', "arguments over 30 characters"),  # the whole text, refused unread
    ],
)
def test_parse_object(text: str, expected: object) -> None:
    assert parse_object(text, max_chars=30) == expected


@pytest.mark.parametrize(("calls", "budget", "over"), [(0, 0, 0), (3, 3, 0), (4, 3, 1), (9, 6, 3), (2, 0, 2)])
def test_call_budget_over(calls: int, budget: int, over: int) -> None:
    assert CallBudget(budget).over(calls) == over


def test_a_failure_on_model_written_input_is_an_answer(worker: LimitedWorker) -> None:
    box = ToyToolbox("hello", 5, worker, time_s=2)
    assert answer(box, "length", '{"text": "crash"}')["error"].startswith(
        "length failed on this text: RuntimeError: the tool broke")
    assert answer(box, "length", '{"text": "spin"}') == {
        "error": "length was stopped on this text: it exceeded the time limit of 2 s"}
    assert answer(box, "length", "{}") == {"length": 5}  # a fresh worker took over


def test_a_failure_on_the_episodes_own_input_is_an_infrastructure_error(worker: LimitedWorker) -> None:
    with pytest.raises(InfraError, match="RuntimeError: the tool broke") as raised:
        asyncio.run(ToyToolbox("crash", 5, worker).call("length", "{}"))
    assert raised.value.kind == ErrorKind.TOOL
    with pytest.raises(InfraError, match="length on the toy's text: it exceeded the time limit of 2 s"):
        asyncio.run(ToyToolbox("spin", 5, worker, time_s=2).call("length", "{}"))


def test_a_worker_that_cannot_start_is_an_infrastructure_error() -> None:
    worker = LimitedWorker(_noop, (), ErrorKind.TOOL)
    worker.close()
    with pytest.raises(InfraError, match="the tool worker could not start"):
        asyncio.run(ToyToolbox("hello", 5, worker).call("length", '{"text": "x"}'))


def test_shared_worker_is_one_per_owner_and_closes_with_it() -> None:
    class Owner:
        pass

    first, second = Owner(), Owner()
    worker = shared_worker(first, _noop)
    assert shared_worker(first, _noop) is worker and shared_worker(second, _noop) is not worker
    worker.start()
    process = worker._process
    del first
    gc.collect()
    process.join(10)
    assert not process.is_alive()  # the owner is gone: its worker was killed
