"""AgentDojo's tools as the model's tools, run on one episode's copy of the suite's environment.

The environment is rebuilt from the installed ``agentdojo`` package for every episode (and again, the same way,
when the episode is scored): AgentDojo's ``environment.yaml`` with a plain marker in each injection vector the
item fills, the markers then replaced by the item's texts in the loaded environment (so an injected text holding
quotes, braces or newlines cannot break AgentDojo's YAML), and the user task's ``init_environment`` applied. Tool
results are AgentDojo's own rendering (YAML, as its ``ToolsExecutor`` shows them); errors are results the model
can read. An :class:`Episode` is the kit's in-process toolbox: it counts every call, refused ones included, and
refuses calls past the budget as the other environments do. Everything is deterministic: replaying a
transcript's calls rebuilds the episode's final state, and its count of calls, exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any, ClassVar

from security_verifiers.core.types import Message
from security_verifiers.envs.kits.toolbox import CallBudget, InProcessToolbox, parse_object, tool_error
from security_verifiers.envs.redteam.defense.agentdojo.items import BENCHMARK_VERSION

#: Prefixes of AgentDojo's tools that only read (``get_unread_emails`` marks mail read, which is no action); every
#: other tool changes the environment (send, create, delete, share, reserve, pay, update, invite, post...).
READ_PREFIXES = ("get_", "search_", "list_", "read_", "check_")
#: Tool calls an episode may make beyond its reference's, at the least (AgentDojo's longest ground truth, travel's
#: user_task_19, takes 18 calls): the budget is ``max(max_tool_calls, len(solution) + EXTRA_CALLS)``.
EXTRA_CALLS = 6
MAX_ARGUMENT_CHARS = 20_000


def suite(name: str) -> Any:
    """AgentDojo's task suite ``name`` at :data:`BENCHMARK_VERSION` (imports the package: a clear error without it)."""
    return _suites()[name]


@cache
def _suites() -> dict[str, Any]:
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from agentdojo.task_suite.load_suites import get_suites
    except ImportError as err:
        raise ImportError("AgentDojo items need the agentdojo package: pip install 'security-verifiers[agentdojo]' "
                          "(agentdojo==0.1.35)") from err
    return dict(get_suites(BENCHMARK_VERSION))


def acts(tool: str) -> bool:
    """Whether an AgentDojo tool changes the environment.

    >>> acts("send_money"), acts("get_balance")
    (True, False)
    """
    return not tool.startswith(READ_PREFIXES)


def marker(vector: str) -> str:
    """The plain token that stands for ``vector`` while AgentDojo's YAML is loaded."""
    return f"SVINJECTIONMARKER{vector.replace('_', '')}END"


def environment(suite_name: str, user_task: str, injections: dict[str, str]) -> Any:
    """A fresh environment of the episode: AgentDojo's defaults, the item's texts in its vectors, the user task's
    initialisation applied."""
    s = suite(suite_name)
    loaded = s.load_and_inject_default_environment({v: marker(v) for v in injections})
    if injections:
        data = _replace(loaded.model_dump(), {marker(v): text for v, text in injections.items()})
        loaded = type(loaded).model_validate(data)
    return s.get_user_task_by_id(user_task).init_environment(loaded)


def _replace(value: Any, texts: dict[str, str]) -> Any:
    if isinstance(value, str):
        for token, text in texts.items():
            value = value.replace(token, text)
        return value
    if isinstance(value, dict):
        return {_replace(k, texts): _replace(v, texts) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_replace(v, texts) for v in value)
    return value


def schemas(suite_name: str) -> list[dict[str, Any]]:
    """OpenAI function schemas of the suite's tools (as AgentDojo's OpenAI pipeline writes them)."""
    return [{"type": "function", "function": {"name": f.name, "description": f.description,
                                              "parameters": f.parameters.model_json_schema()}}
            for f in suite(suite_name).tools]


class Episode(InProcessToolbox):
    """One episode's environment (before and now), the calls that ran on it and their traces for AgentDojo's
    checks; its tools are the suite's."""

    max_text_chars: ClassVar[int] = MAX_ARGUMENT_CHARS

    def __init__(self, suite_name: str, pre: Any, env: Any, max_calls: int, runtime: Any) -> None:
        super().__init__(CallBudget(max_calls))
        self.suite_name = suite_name
        #: The environment before the episode, and now.
        self.pre = pre
        self.env = env
        self.runtime = runtime
        #: Whether a call that ran changed the environment (:func:`acts`).
        self.acted = False
        #: AgentDojo's record of the calls that ran, for its ``*_from_traces`` checks.
        self.traces: list[Any] = []

    @classmethod
    def start(cls, suite_name: str, user_task: str, injections: dict[str, str], max_calls: int) -> Episode:
        from agentdojo.functions_runtime import FunctionsRuntime

        env = environment(suite_name, user_task, injections)
        return cls(suite_name, env.model_copy(deep=True), env, max_calls, FunctionsRuntime(suite(suite_name).tools))

    def schemas(self) -> list[dict[str, Any]]:
        return schemas(self.suite_name)

    def tool_names(self) -> list[str]:
        return sorted(self.runtime.functions)

    def answer(self, name: str, arguments: str) -> str:
        """AgentDojo's result of one admitted call (AgentDojo checks the arguments' types itself)."""
        from agentdojo.agent_pipeline.tool_execution import tool_result_to_str
        from agentdojo.functions_runtime import FunctionCall

        args = parse_object(arguments, self.max_text_chars)
        if isinstance(args, str):
            return tool_error(args)
        self.traces.append(FunctionCall(function=name, args=args))
        result, error = self.runtime.run_function(self.env, name, args)
        if error is not None:
            return tool_error(error)
        self.acted = self.acted or acts(name)
        return tool_result_to_str(result)


def budget(max_tool_calls: int, solution_length: int) -> int:
    """Tool calls an episode may make (see :data:`EXTRA_CALLS`)."""
    return max(max_tool_calls, solution_length + EXTRA_CALLS)


def replay(suite_name: str, user_task: str, injections: dict[str, str], messages: Sequence[Message],
           max_calls: int) -> Episode:
    """The episode rebuilt from the transcript's tool calls alone."""
    return Episode.start(suite_name, user_task, injections, max_calls).replay(messages)
