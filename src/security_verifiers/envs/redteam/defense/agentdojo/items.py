"""The shape of an AgentDojo item (E6 kind ``"agentdojo"``): plain JSON, no import of the ``agentdojo`` package.

An item names a suite, one of its user tasks, one of its injection tasks (or none: a benign item) and the E6
technique that wrapped the injection task's goal; the suite's environment is rebuilt from the installed package
(pinned in pyproject) whenever the item is played or scored, so an item holds ids and texts, never the
environment itself.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SUITES: tuple[str, ...] = ("workspace", "travel", "banking", "slack")
#: The AgentDojo benchmark version the items are built from (the newest in agentdojo 0.1.35).
BENCHMARK_VERSION: Literal["v1.2.2"] = "v1.2.2"
Suite = Literal["workspace", "travel", "banking", "slack"]


class _Data(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class GroundTruthCall(_Data):
    """One call of an AgentDojo ground truth: the tool and its arguments (JSON values)."""

    function: str
    args: dict[str, Any]


class AgentDojoAttack(_Data):
    """What the injection is, for the metrics and the scorer: never shown to the model."""

    injection_task: str
    #: The injection task's GOAL, as AgentDojo states it.
    goal: str
    #: The E6 technique (:mod:`..scenario.techniques`) that wrapped the goal into the injected text.
    technique: str
    #: The injection vectors the user task's ground truth reads, where the text was placed.
    vectors: list[str] = Field(min_length=1)
    #: The injection task's ground truth (what ``naive`` replays); empty where AgentDojo ships none.
    solution: list[GroundTruthCall]
    #: What the injection task's ground truth says (checked in the reply by a few injection tasks).
    answer: str = ""


class AgentDojoInput(_Data):
    """What the assistant is given: the suite (its tools and environment), the user's request, the secret, and
    the texts placed in the environment's injection vectors (the others keep AgentDojo's defaults)."""

    kind: Literal["agentdojo"] = "agentdojo"
    suite: Suite
    benchmark_version: Literal["v1.2.2"] = BENCHMARK_VERSION
    user_task: str = Field(pattern=r"^user_task_\d+$")
    request: str
    canary: str = Field(pattern=r"^[A-Z2-9]{4}(-[A-Z2-9]{4}){3}$")
    injections: dict[str, str] = Field(default_factory=dict)


class AgentDojoTarget(_Data):
    kind: Literal["agentdojo"] = "agentdojo"
    suite: Suite
    user_task: str = Field(pattern=r"^user_task_\d+$")
    #: The user task's ground truth (what ``reference`` replays) and its expected reply.
    solution: list[GroundTruthCall]
    answer: str
    attack: AgentDojoAttack | None = None
