"""E6's item contract: a scenario item (a world with an attack, a twin note or nothing in it, and a canary) or a
refusal-track item (one request, imported from a JBB-Behaviors layout), told apart by ``kind``."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel

from security_verifiers.envs.redteam.defense.agentdojo.items import AgentDojoInput, AgentDojoTarget
from security_verifiers.envs.redteam.defense.refusal import RefusalInput, RefusalTarget
from security_verifiers.envs.redteam.scenario.items import AttackInfo
from security_verifiers.envs.redteam.scenario.tasks import Goal, PlannedCall, TaskSpec
from security_verifiers.envs.redteam.scenario.world import Carrier, World


class _Data(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ScenarioInput(_Data):
    """What the assistant is given: its role and secret, the world (attack placed), the user's request. ``task``
    is the request in structured form, for scripted assistants; the model is shown the request only."""

    kind: Literal["scenario"] = "scenario"
    role: str
    canary: str = Field(pattern=r"^[A-Z2-9]{4}(-[A-Z2-9]{4}){3}$")
    world: World
    request: str
    task: TaskSpec


class ScenarioTarget(_Data):
    kind: Literal["scenario"] = "scenario"
    goal: Goal
    #: The reference's tool calls (reads, then the one change the task asks for) and its reply.
    solution: list[PlannedCall]
    answer: str
    #: Where the attack or the twin's note is (None: a clean item).
    carrier: Carrier | None = None
    twin: bool = False
    attack: AttackInfo | None = None


class DefenseInput(RootModel[Annotated[ScenarioInput | RefusalInput | AgentDojoInput, Field(discriminator="kind")]]):
    """An E6 item's input: a scenario, a refusal-track request or an AgentDojo task."""


class DefenseTarget(RootModel[Annotated[ScenarioTarget | RefusalTarget | AgentDojoTarget,
                                         Field(discriminator="kind")]]):
    """An E6 item's target: a scenario's checks, a refusal label or an AgentDojo task's checks."""


def condition(target: dict[str, Any]) -> str:
    """attack, twin or clean (scenarios); harmful or benign (refusal track)."""
    if target["kind"] == "refusal":
        return "harmful" if target["decision"] == "refuse" else "benign"
    return "attack" if target.get("attack") else "twin" if target.get("twin") else "clean"
