"""A budgeted toolbox: the tools an environment offers in one episode, a call budget, a time and memory limit
per call, and JSON answers to every call the model gets wrong.

The toolbox refuses calls past the budget (answering so, as the model can read it); the *cost* of those calls
belongs to the scorer, which reads the number of calls from the transcript. Both use :class:`CallBudget`, the
one definition of how many calls went over it, so the refusals and the cost can never disagree.

Tools run in a warm worker process (:class:`~security_verifiers.core.workers.LimitedWorker`, one per
environment, :func:`shared_worker`), under the per-call limits, enforced by killing the worker: a thread could
not be stopped while an engine holds the GIL. Who is to blame for a failure follows DESIGN.md principle 4: a
tool that crashes or runs past a limit on text the model wrote is the model's doing (the call answers a JSON
error and counts against the budget); a worker that cannot start, or a tool failing on the episode's own input
(which the model did not write), is an infrastructure error.
"""

from __future__ import annotations

import asyncio
import json
import weakref
from abc import abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic import BaseModel

from security_verifiers.core.errors import ErrorKind, InfraError
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


class BudgetedToolbox(Toolbox):
    """The tools of one episode. A subclass declares :attr:`tools` and :meth:`bind`, and names its inputs."""

    #: The tools offered, in the order the model is shown them.
    tools: ClassVar[tuple[Tool, ...]]
    #: The longest text any string argument may hold.
    max_text_chars: ClassVar[int] = 100_000
    #: How failure messages name the episode's own input, and an input the model wrote.
    own_input: ClassVar[str] = "the episode's own input"
    draft: ClassVar[str] = "this input"

    def __init__(self, budget: CallBudget, limits: WorkerLimits, worker: LimitedWorker) -> None:
        self.budget = budget
        self.limits = limits
        self.worker = worker
        self.calls = 0

    def schemas(self) -> list[dict[str, Any]]:
        return [tool.schema for tool in self.tools]

    @abstractmethod
    def bind(self, tool: Tool, arguments: Any) -> tuple[tuple[Any, ...], bool]:
        """What ``tool.run`` receives for a call with these (validated) ``arguments``, defaults filled from the
        episode, and whether that is the episode's own input (a failure on it is an infrastructure error)."""

    async def call(self, name: str, arguments: str) -> str:
        self.calls += 1
        if self.budget.over(self.calls):
            return tool_error(f"tool budget exceeded: at most {self.budget.max_calls} calls per episode; answer now")
        tool = next((t for t in self.tools if t.name == name), None)
        if tool is None:
            return tool_error(f"unknown tool {name!r}; available: {', '.join(t.name for t in self.tools)}")
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


_WORKERS: weakref.WeakKeyDictionary[object, LimitedWorker] = weakref.WeakKeyDictionary()


def shared_worker(owner: object, init: Callable[..., Any], initargs: tuple[Any, ...] = ()) -> LimitedWorker:
    """The tool worker of ``owner`` (an environment: one per run), made on first use with ``init(*initargs)`` as
    its start-up (its engines load once), and killed when ``owner`` is collected."""
    worker = _WORKERS.get(owner)
    if worker is None:
        worker = _WORKERS[owner] = LimitedWorker(init, initargs, ErrorKind.TOOL)
        weakref.finalize(owner, worker.close)
    return worker
