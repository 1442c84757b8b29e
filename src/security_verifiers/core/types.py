"""The data that crosses layer boundaries: items, messages, completions, scores, rollout records.

These are pydantic models because they are written to and read from disk (``results.jsonl``,
datasets) and cross from one layer to the next; validation at the boundary is what lets
``sv report`` rebuild a report from ``results.jsonl`` alone.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

#: Version of the ``results.jsonl`` record layout. Bump it when a field changes meaning.
RESULTS_SCHEMA_VERSION = 1


class Item(BaseModel):
    """One task instance. ``input`` is what the model may see; ``target`` is what the scorer checks."""

    model_config = ConfigDict(frozen=True)

    id: str
    split: str
    input: dict[str, Any]
    target: dict[str, Any]
    meta: dict[str, Any] = Field(default_factory=dict)


class ToolCall(BaseModel):
    id: str
    name: str
    arguments: str  # raw JSON text, exactly as the model produced it


class Message(BaseModel):
    role: Literal["system", "user", "assistant", "tool"]
    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None

    def to_openai(self) -> dict[str, Any]:
        """The chat-completions wire form of this message."""
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        return out


class Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
        )


class Completion(BaseModel):
    """One reply of a policy (a model or a baseline)."""

    text: str
    tool_calls: list[ToolCall] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    finish_reason: str | None = None
    cached: bool = False
    #: The endpoint's ``system_fingerprint`` (its backend configuration), where it sends one: kept with the
    #: cached answer, so ``sv cache info`` can show that a model name was served by more than one deployment.
    system_fingerprint: str | None = None


class Transcript(BaseModel):
    """Everything the model saw and said in one episode; the scorer reads only this and the item."""

    messages: list[Message]
    tool_calls: int = 0
    tool_seconds: float = 0.0
    #: What the environment's tools recorded out of the model's sight (``Toolbox.record``): E5 keeps here what the
    #: target it attacked did, which the attacker never sees and the scorer judges. ``None`` for most environments.
    world: dict[str, Any] | None = None

    @property
    def final_text(self) -> str:
        """The last assistant message: the answer that is scored."""
        for message in reversed(self.messages):
            if message.role == "assistant":
                return message.content
        return ""


class ParseStatus(StrEnum):
    """Whether the reply could be read as an answer. Anything but ``ok`` earns the minimum reward."""

    OK = "ok"
    EMPTY = "empty"
    NO_JSON = "no_json"
    INVALID_JSON = "invalid_json"
    NOT_OBJECT = "not_object"
    SCHEMA = "schema"


class Score(BaseModel):
    """The single scorer's verdict: the RL reward and the ``outcome`` every metric is computed from."""

    reward: float
    components: dict[str, float] = Field(default_factory=dict)
    outcome: dict[str, Any] = Field(default_factory=dict)
    parse_status: ParseStatus = ParseStatus.OK
    parse_error: str | None = None


class ErrorRecord(BaseModel):
    kind: str
    message: str


class RolloutRecord(BaseModel):
    """One line of ``results.jsonl``. ``reward`` is ``None`` when an infrastructure error occurred."""

    schema_version: int = RESULTS_SCHEMA_VERSION
    env: str
    env_version: str
    item_id: str
    split: str
    sample: int = 0
    transcript: Transcript | None = None
    reward: float | None = None
    components: dict[str, float] = Field(default_factory=dict)
    outcome: dict[str, Any] = Field(default_factory=dict)
    parse_status: ParseStatus | None = None
    error: ErrorRecord | None = None
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    cached: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None
