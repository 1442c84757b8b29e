"""A budgeted toolbox: the tools an environment offers in one episode, a call budget, and JSON answers to every
call the model gets wrong.

Every toolbox counts each call the model makes, refused ones included, and refuses calls past the budget
(answering so, as the model can read it); the *cost* of those calls belongs to the scorer, which reads the number
of calls from the transcript (or from replaying it). Both use :class:`CallBudget`, the one definition of how many
calls went over it, so the refusals and the cost can never disagree. :class:`CountingToolbox` holds what every
toolbox shares (the count, the refusal, the unknown-tool answer); two kinds build on it:

- :class:`BudgetedToolbox` runs tools in a warm worker process (:class:`~security_verifiers.core.workers.
  LimitedWorker`, one per environment, :func:`shared_worker`), under per-call time and memory limits enforced
  by killing the worker: a thread could not be stopped while an engine holds the GIL (E2's scanners, E3's tests).
  Who is to blame for a failure follows DESIGN.md principle 4: a tool that crashes or runs past a limit on text
  the model wrote is the model's doing (the call answers a JSON error and counts against the budget); a worker
  that cannot start, or a tool failing on the episode's own input (which the model did not write), is an
  infrastructure error.
- :class:`InProcessToolbox` runs cheap, deterministic simulations in this process and synchronously (E6's
  world and AgentDojo tools), so the scorer can rebuild an episode by replaying the transcript's calls on a fresh
  toolbox (:meth:`InProcessToolbox.replay`): the refusals there are the episode's own.
"""

from __future__ import annotations

import asyncio
import json
import weakref
from abc import abstractmethod
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self

from pydantic import BaseModel

from security_verifiers.core.errors import ErrorKind, InfraError
from security_verifiers.core.types import Message
from security_verifiers.core.workers import (
    LimitedWorker,
    LimitExceeded,
    WorkerLimits,
    WorkerRaised,
    WorkerStartFailed,
)
from security_verifiers.envs.base import Toolbox
from security_verifiers.envs.kits.toolbox.arguments import parameters_schema, parse_arguments


@dataclass(frozen=True)
class CallBudget:
    """The tool calls one episode may make.

    >>> CallBudget(6).over(4), CallBudget(6).over(9)
    (0, 3)
    """

    max_calls: int

    def over(self, calls: int) -> int:
        """How many of ``calls`` went over the budget: refused by the toolbox, costed by the scorer."""
        return max(0, calls - self.max_calls)


@dataclass(frozen=True)
class Tool:
    """One tool: its name and description as the model sees them, its arguments (a pydantic model whose fields
    are the JSON Schema's properties), and ``run``, a module-level function the worker calls as
    ``run(worker_state, *bound)`` with the arguments :meth:`BudgetedToolbox.bind` makes of the call's."""

    name: str
    description: str
    arguments: type[BaseModel]
    run: Callable[..., dict[str, Any]]
    schema: dict[str, Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "schema", {"type": "function", "function": {
            "name": self.name, "description": self.description, "parameters": parameters_schema(self.arguments)}})


def tool_error(message: str) -> str:
    """What a refused or failed call answers: a JSON object with the reason."""
    return json.dumps({"error": message})


class CountingToolbox(Toolbox):
    """What every toolbox shares: the episode's :class:`CallBudget`, the count of calls made, and the answers that
    refuse a call before it runs (over the budget, or no such tool). A subclass names its tools
    (:meth:`tool_names`) and calls :meth:`admit` first thing in every call."""

    #: What a call past the budget is answered (``{max_calls}`` is filled in).
    refusal: ClassVar[str] = "tool budget exceeded: at most {max_calls} calls per episode; answer now"
    #: The longest text any string argument may hold.
    max_text_chars: ClassVar[int] = 100_000

    def __init__(self, budget: CallBudget) -> None:
        self.budget = budget
        #: Every call the model made, refused ones included (what the scorer counts in the transcript).
        self.calls = 0

    @abstractmethod
    def tool_names(self) -> Sequence[str]:
        """The tools' names, in the order the model is shown them."""

    def admit(self, name: str) -> str | None:
        """Count one call of ``name``, and return the JSON error that refuses it (past the budget, or an unknown
        tool), or ``None`` when it may run. A refused call counts too, in every environment, so a toolbox and a
        scorer that counts the transcript's calls agree on :meth:`CallBudget.over`.

        >>> class Box(CountingToolbox):
        ...     def tool_names(self): return ["echo"]
        ...     def schemas(self): return []
        ...     async def call(self, name, arguments): return ""
        >>> box = Box(CallBudget(1))
        >>> box.admit("echo"), box.admit("echo"), box.calls
        (None, '{"error": "tool budget exceeded: at most 1 calls per episode; answer now"}', 2)
        >>> print(Box(CallBudget(1)).admit("nope"))
        {"error": "unknown tool 'nope'; available: echo"}
        """
        self.calls += 1
        if self.budget.over(self.calls):
            return tool_error(self.refusal.format(max_calls=self.budget.max_calls))
        names = self.tool_names()
        if name not in names:
            return tool_error(f"unknown tool {name!r}; available: {', '.join(names)}")
        return None


class BudgetedToolbox(CountingToolbox):
    """The tools of one episode, run in a worker. A subclass declares :attr:`tools` and :meth:`bind`, and names its
    inputs."""

    #: The tools offered, in the order the model is shown them.
    tools: ClassVar[tuple[Tool, ...]]
    #: How failure messages name the episode's own input, and an input the model wrote.
    own_input: ClassVar[str] = "the episode's own input"
    draft: ClassVar[str] = "this input"

    def __init__(self, budget: CallBudget, limits: WorkerLimits, worker: LimitedWorker) -> None:
        super().__init__(budget)
        self.limits = limits
        self.worker = worker

    def tool_names(self) -> list[str]:
        return [tool.name for tool in self.tools]

    def schemas(self) -> list[dict[str, Any]]:
        return [tool.schema for tool in self.tools]

    @abstractmethod
    def bind(self, tool: Tool, arguments: Any) -> tuple[tuple[Any, ...], bool]:
        """What ``tool.run`` receives for a call with these (validated) ``arguments``, defaults filled from the
        episode, and whether that is the episode's own input (a failure on it is an infrastructure error)."""

    async def call(self, name: str, arguments: str) -> str:
        refused = self.admit(name)
        if refused is not None:
            return refused
        tool = next(t for t in self.tools if t.name == name)
        parsed = parse_arguments(tool.arguments, arguments, self.max_text_chars)
        if isinstance(parsed, str):
            return tool_error(parsed)
        bound, own = self.bind(tool, parsed)
        try:
            result = await asyncio.to_thread(self.worker.call, tool.run, bound, self.limits)
        except WorkerStartFailed as err:
            raise InfraError(ErrorKind.TOOL, f"the tool worker could not start: {err}") from err
        except LimitExceeded as err:
            if own:
                raise InfraError(ErrorKind.TOOL, f"{name} on {self.own_input}: {err.reason}") from err
            return tool_error(f"{name} was stopped on {self.draft}: {err.reason}")
        except WorkerRaised as err:
            if own:
                raise err.error from err
            return tool_error(f"{name} failed on {self.draft}: {err.error.message}")
        return json.dumps(result, sort_keys=True)


class InProcessToolbox(CountingToolbox):
    """The tools of one episode, run in this process, synchronously and deterministically: cheap simulations of a
    world. A subclass names its tools and answers an admitted call (:meth:`answer`); :meth:`play` is the call
    (sync, for the scorer's replay and scripted players) and :meth:`call` the same for the harness."""

    @abstractmethod
    def answer(self, name: str, arguments: str) -> str:
        """The result text of an admitted call of ``name`` (a call with bad arguments answers :func:`tool_error`,
        as does a tool's own refusal)."""

    def play(self, name: str, arguments: str) -> str:
        """Run one call: counted, refused past the budget or for an unknown tool, otherwise answered."""
        refused = self.admit(name)
        return refused if refused is not None else self.answer(name, arguments)

    async def call(self, name: str, arguments: str) -> str:
        return self.play(name, arguments)

    def replay(self, messages: Iterable[Message]) -> Self:
        """Play every tool call the assistant made in ``messages``, in order, on this (fresh) toolbox: the episode
        rebuilt from the transcript alone, refusals included."""
        for message in messages:
            for call in message.tool_calls if message.role == "assistant" else ():
                self.play(call.name, call.arguments)
        return self


_WORKERS: weakref.WeakKeyDictionary[object, LimitedWorker] = weakref.WeakKeyDictionary()


def shared_worker(owner: object, init: Callable[..., Any], initargs: tuple[Any, ...] = ()) -> LimitedWorker:
    """The tool worker of ``owner`` (an environment: one per run), made on first use with ``init(*initargs)`` as
    its start-up (its engines load once), and killed when ``owner`` is collected."""
    worker = _WORKERS.get(owner)
    if worker is None:
        worker = _WORKERS[owner] = LimitedWorker(init, initargs, ErrorKind.TOOL)
        weakref.finalize(owner, worker.close)
    return worker
