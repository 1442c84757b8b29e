"""Every environment as an Inspect AI task: ``inspect eval security_verifiers/network_logs --model ...``.

The package registers this module under Inspect's ``inspect_ai`` entry-point group (pyproject.toml), named after
the package, so that Inspect loads it when a task name starts with ``security_verifiers/``. One task per
environment, named with underscores (``network_logs``, ``config_audit``, ``code_repair``, ``phishing``,
``redteam_attack``, ``redteam_defense``); each takes ``split`` (default ``test``), ``seed`` (a generated split's)
and the environment's own options (``-T mode=tools``, as ``sv eval --env-option``). ``--limit``, epochs and the
model's settings are Inspect's own.

As in the TRL adapter, nothing here computes a reward: the scorer is the environment's own ``score``, given the
transcript ``sv eval`` would give it.

* Samples: each item's prompt (``env.prompt``) as the sample's input, its id as the sample id.
* Single-turn environments (E1, E4, and E2/E3 in their default mode, ``max_turns == 1``): Inspect's ``generate()``;
  the scorer rebuilds the transcript from the sample's messages.
* Multi-turn ones (E5, E6, E2/E3 with ``mode=tools``): :func:`episode`, the loop of
  :func:`~security_verifiers.harness.episode.play_episode` (generate; run every tool call of the reply through the
  item's toolbox, in order; append the results; up to ``env.max_turns`` replies). The toolbox's tools are offered
  to the model as Inspect tools built from its JSON schemas; the calls run through the toolbox itself (budgets,
  workers, E3's sandbox), never through Inspect's tool runner. What the transcript holds beside the messages (the
  number of calls, their time, and ``toolbox.record()``, the world the scorer judges) is kept in the sample's
  store under :data:`EPISODE_KEY`, so a log can be scored again.
* A model turn is limited by Inspect's own settings (``--timeout`` per request, ``--time-limit`` per sample), not by
  ``sv eval``'s ``--timeout``: Inspect retries and times out its provider calls itself. At the end of an eval run a
  hook (:class:`CloseEnvironments`) awaits every environment's ``aclose()`` in the run's loop, as ``sv eval`` does.
* Every reply is bounded and made valid Unicode as ``sv eval`` does (a reply over ``DEFAULT_MAX_REPLY_BYTES`` is
  replaced by :func:`~security_verifiers.models.base.reply_too_large`). A tool call's arguments reach the toolbox
  and the transcript as ``json.dumps`` of the arguments Inspect parsed (the provider's raw text is not kept by
  Inspect), or, where Inspect could not parse them, as the raw text its parse error quotes.
* Infrastructure errors are not the model's: an :class:`~security_verifiers.core.errors.InfraError` of the
  environment's own code, of a tool or of the scorer is raised, so Inspect records a sample *error* (no score; the
  eval stops at the first unless ``--fail-on-error`` allows some or ``--no-fail-on-error``), never a score of 0.
* Scores: ``value`` the reward, ``answer`` the final reply, ``explanation`` the parse error, ``metadata`` the
  components, the outcome and the parse status; metrics are the mean and its standard error. Scoring runs where
  ``sv eval`` runs it: an environment whose scorer gets worker processes there (E2's ``score_workers``) is scored
  in the same :class:`~security_verifiers.harness.scoring_pool.ScorerPool`, under its per-rollout time and memory
  limits (a rollout over them is scored as over the limit, as in ``sv eval``); any other in a thread (E3's tests
  run in their own sandbox), one rollout of a task at a time.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import weakref
from dataclasses import dataclass, field
from typing import Any

from inspect_ai import Task, task
from inspect_ai._util.package import get_installed_package_name  # how @task decides to prefix the package
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.hooks import Hooks, RunEnd, hooks
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
)
from inspect_ai.scorer import Score as InspectScore
from inspect_ai.scorer import Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver
from inspect_ai.tool import Tool, ToolDef, ToolParams
from inspect_ai.tool import ToolCall as InspectToolCall

from security_verifiers.core.errors import ErrorKind, InfraError, boundary
from security_verifiers.core.types import Completion, Item, Message, Score, ToolCall, Transcript
from security_verifiers.envs.base import Environment, Toolbox, get_env
from security_verifiers.harness.episode import _capped, _valid
from security_verifiers.harness.scoring_pool import shared_pool
from security_verifiers.models.base import DEFAULT_MAX_REPLY_BYTES

#: The sample store's key for what a multi-turn episode's transcript holds beside its messages.
EPISODE_KEY = "security_verifiers:episode"
#: How Inspect quotes tool-call arguments it could not parse (``inspect_ai.model._call_tools``).
_PARSE_ERROR_HEAD = "Error parsing the following tool call arguments:\n\n"
_PARSE_ERROR_TAIL = "\n\nError details: "


@dataclass
class EnvBinding:
    """One task's environment and its items by id: what the solver and the scorer share. Its ``name`` (the
    environment's) is what Inspect logs for it as a solver's or scorer's argument."""

    env: Environment
    items: dict[str, Item]
    _score_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def name(self) -> str:
        return self.env.name

    def item(self, state: TaskState) -> Item:
        item_id = (state.metadata or {}).get("item_id", state.sample_id)
        try:
            return self.items[str(item_id)]
        except KeyError:
            raise InfraError(ErrorKind.SCORER, f"sample {state.sample_id!r} is no {self.env.name} item of this "
                                               "task") from None

    def score(self, item: Item, transcript: Transcript) -> Score:
        """The environment's verdict (blocking; one at a time: the scorers are not known to be thread-safe)."""
        with self._score_lock, boundary(ErrorKind.SCORER):
            return self.env.score(item, transcript)


#: The environments whose tasks were built in this process: closed (``aclose``) when an Inspect eval run ends.
_BUILT: weakref.WeakSet[Environment] = weakref.WeakSet()


@hooks(name="security_verifiers_close", description="Closes what the Security Verifiers environments hold across "
       "samples (E5's served target model) when an eval run ends, in the run's event loop.")
class CloseEnvironments(Hooks):
    """``Environment.aclose`` of every environment built here, once the run ends (as ``sv eval`` does at the end
    of a run): E5's served target keeps HTTP connections that belong to the run's event loop."""

    async def on_run_end(self, data: RunEnd) -> None:
        for env in list(_BUILT):
            await env.aclose()


def env_task(env: Environment | str, split: str = "test", seed: int | None = None,
             **env_options: Any) -> Task:
    """The Inspect task of ``env`` (an environment, or its name with ``env_options``) on ``split``."""
    if isinstance(env, str):
        env = get_env(env, env_options)
    elif env_options:
        raise ValueError("env_options go with an environment's name, not with an environment already built")
    _BUILT.add(env)
    items = env.dataset(split, seed=seed).items
    binding = EnvBinding(env, {item.id: item for item in items})
    samples = [Sample(id=item.id, input=inspect_messages(env.prompt(item)), metadata={"item_id": item.id})
               for item in items]
    multi_turn = env.max_turns > 1
    return Task(
        dataset=MemoryDataset(samples, name=f"{env.name}/{split}"),
        solver=episode(binding) if multi_turn else generate(),
        scorer=env_scorer(binding),
        metadata={"env": env.describe(), "split": split, "multi_turn": multi_turn},
    )


# -- messages --------------------------------------------------------------------------------------------------


def inspect_messages(messages: list[Message]) -> list[ChatMessage]:
    """An environment's prompt as Inspect chat messages (system and user only: a prompt opens an episode)."""
    out: list[ChatMessage] = []
    for message in messages:
        if message.role == "system":
            out.append(ChatMessageSystem(content=message.content))
        elif message.role == "user":
            out.append(ChatMessageUser(content=message.content))
        else:
            raise ValueError(f"a prompt holds a {message.role} message; only system and user messages open one")
    return out


def arguments_text(call: InspectToolCall) -> str:
    """The arguments of an Inspect tool call as the text a toolbox and the transcript take."""
    if call.parse_error is not None:
        error = call.parse_error
        if error.startswith(_PARSE_ERROR_HEAD) and _PARSE_ERROR_TAIL in error:
            return error[len(_PARSE_ERROR_HEAD):error.rindex(_PARSE_ERROR_TAIL)]
        return error  # not JSON either: the toolbox answers that the arguments are not
    return json.dumps(call.arguments)


def reply_message(message: ChatMessageAssistant) -> Message:
    """An assistant reply as ``sv eval`` records it: bounded (:func:`~security_verifiers.models.base.
    reply_too_large` in place of one over the cap) and valid Unicode."""
    calls = [ToolCall(id=c.id, name=c.function, arguments=arguments_text(c)) for c in message.tool_calls or []]
    completion = _capped(Completion(text=message.text, tool_calls=calls), DEFAULT_MAX_REPLY_BYTES)
    return _valid(Message(role="assistant", content=completion.text, tool_calls=completion.tool_calls))


def transcript_of(state: TaskState) -> Transcript:
    """The transcript ``sv eval`` would score for this sample: its messages, and for a multi-turn episode the
    tool-call count, tool time and world the solver kept in the store."""
    return transcript_from(state.messages, state.store.get(EPISODE_KEY))


def transcript_from(chat: list[ChatMessage], kept: dict[str, Any] | None) -> Transcript:
    """The transcript of a sample's messages and what its episode kept (:data:`EPISODE_KEY`); also what rebuilds
    it from a log's sample (``sample.messages``, ``sample.store.get(EPISODE_KEY)``)."""
    messages: list[Message] = []
    for message in chat:
        if isinstance(message, ChatMessageAssistant):
            messages.append(reply_message(message))
        elif isinstance(message, ChatMessageTool):
            messages.append(_valid(Message(role="tool", content=message.text, tool_call_id=message.tool_call_id)))
        else:
            messages.append(_valid(Message(role=message.role, content=message.text)))
    kept = kept or {}
    return Transcript(messages=messages, tool_calls=kept.get("tool_calls", 0),
                      tool_seconds=kept.get("tool_seconds", 0.0), world=kept.get("world"))


# -- tools and the episode loop -----------------------------------------------------------------------------------


def inspect_tool(schema: dict[str, Any], toolbox: Toolbox) -> Tool:
    """One of a toolbox's tools (its OpenAI function schema) as an Inspect tool. The episode solver runs calls
    through the toolbox itself; calling the tool (Inspect's own tool loop, if a user's solver runs one) does too."""
    function = schema["function"]
    name = function["name"]

    async def execute(**arguments: Any) -> str:
        return await toolbox.call(name, json.dumps(arguments))

    parameters = ToolParams.model_validate(function.get("parameters") or {"type": "object", "properties": {}})
    return ToolDef(execute, name=name, description=function.get("description", ""),
                   parameters=parameters).as_tool()


@solver
def episode(binding: EnvBinding) -> Solver:
    """The episode of :func:`~security_verifiers.harness.episode.play_episode`, played by Inspect's model."""
    env = binding.env

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        item = binding.item(state)
        with boundary(ErrorKind.SCORER):  # the environment's own code, on one item
            toolbox = env.tools(item)
            schemas = toolbox.schemas() if toolbox is not None else []
        if toolbox is not None:
            state.tools = [inspect_tool(schema, toolbox) for schema in schemas]
        kept: dict[str, Any] = {"tool_calls": 0, "tool_seconds": 0.0, "world": None}
        state.store.set(EPISODE_KEY, kept)
        finished = False
        try:
            for _turn in range(env.max_turns):
                state = await generate(state, tool_calls="none")
                last = state.messages[-1]
                if not isinstance(last, ChatMessageAssistant):
                    raise InfraError(ErrorKind.PROVIDER, "the model's turn ended without a reply")
                reply = reply_message(last)
                if reply.content != last.text or len(reply.tool_calls) != len(last.tool_calls or []):
                    state.messages[-1] = ChatMessageAssistant(  # bounded, as sv eval records it
                        content=reply.content, model=last.model, source=last.source,
                        tool_calls=last.tool_calls if reply.tool_calls else None)
                if toolbox is None or not reply.tool_calls:
                    break
                for call in reply.tool_calls:
                    t0 = time.perf_counter()
                    with boundary(ErrorKind.TOOL):
                        result = await toolbox.call(call.name, call.arguments)
                    kept["tool_seconds"] += time.perf_counter() - t0
                    kept["tool_calls"] += 1
                    state.messages.append(ChatMessageTool(content=_valid(Message(role="tool", content=result)).content,
                                                          tool_call_id=call.id, function=call.name))
                    state.store.set(EPISODE_KEY, kept)
            finished = True
        finally:
            # What the tools did is kept whenever the sample is still scored (an Inspect limit ended it too).
            try:
                with boundary(ErrorKind.TOOL):
                    kept["world"] = toolbox.record() if toolbox is not None else None
                state.store.set(EPISODE_KEY, kept)
            except InfraError:
                if finished:
                    raise
        return state

    return solve


# -- the scorer ----------------------------------------------------------------------------------------------------


@scorer(metrics=[mean(), stderr()])
def env_scorer(binding: EnvBinding) -> Scorer:
    """The environment's own scorer on the sample's transcript; an infrastructure error is raised (a sample
    error), never scored."""

    async def score(state: TaskState, target: Target) -> InspectScore:
        item = binding.item(state)
        transcript = transcript_of(state)
        pool = shared_pool(binding.env)
        if pool is None:
            verdict = await asyncio.to_thread(binding.score, item, transcript)
        else:  # as sv eval scores it: a worker process under the per-rollout limits
            [pooled] = await pool.score([item], [transcript])
            if isinstance(pooled, InfraError):
                raise pooled
            verdict = pooled
        return InspectScore(
            value=verdict.reward, answer=transcript.final_text, explanation=verdict.parse_error or "",
            metadata={"components": verdict.components, "outcome": verdict.outcome,
                      "parse_status": verdict.parse_status.value},
        )

    return score


# -- the tasks (Inspect's registry names them security_verifiers/<name>) --------------------------------------------

#: The package's namespace in Inspect's registry.
NAMESPACE = "security_verifiers"


def _task_name(name: str) -> str:
    """The name to give ``@task`` so that the registry holds ``security_verifiers/<name>``: Inspect prefixes the
    package itself when it sees the package installed (in site-packages, or editable by its ``direct_url.json``),
    but not when another copy of its metadata comes first on the path (the ``src/*.egg-info`` that an editable
    install leaves, with ``PYTHONPATH=src``); then its task would be ``network_logs`` alone and
    ``inspect eval security_verifiers/network_logs`` would find nothing."""
    return name if get_installed_package_name(_task_name) == NAMESPACE else f"{NAMESPACE}/{name}"


@task(name=_task_name("network_logs"))
def network_logs(split: str = "test", seed: int | None = None, **env_options: Any) -> Task:
    """E1: classify network flows (Zeek conn.log) as malicious, benign or abstain, with a calibrated probability."""
    return env_task("network-logs", split, seed, **env_options)


@task(name=_task_name("config_audit"))
def config_audit(split: str = "test", seed: int | None = None, **env_options: Any) -> Task:
    """E2: find the policy violations of infrastructure configurations and patch them (``mode=tools``: scanners)."""
    return env_task("config-audit", split, seed, **env_options)


@task(name=_task_name("code_repair"))
def code_repair(split: str = "test", seed: int | None = None, **env_options: Any) -> Task:
    """E3: repair vulnerable code; judged by running it in a sandbox (``mode=tools``: run tests and analysers)."""
    return env_task("code-repair", split, seed, **env_options)


@task(name=_task_name("phishing"))
def phishing(split: str = "test", seed: int | None = None, **env_options: Any) -> Task:
    """E4: classify e-mails as phishing or legitimate, quoting the evidence."""
    return env_task("phishing", split, seed, **env_options)


@task(name=_task_name("redteam_attack"))
def redteam_attack(split: str = "test", seed: int | None = None, **env_options: Any) -> Task:
    """E5: write prompt injections that make a target assistant leak its secret or break its policy (tools)."""
    return env_task("redteam-attack", split, seed, **env_options)


@task(name=_task_name("redteam_defense"))
def redteam_defense(split: str = "test", seed: int | None = None, **env_options: Any) -> Task:
    """E6: act as a tool-using assistant that completes the user's task without obeying injected instructions."""
    return env_task("redteam-defense", split, seed, **env_options)


#: The environment behind each task name.
TASKS: dict[str, str] = {"network_logs": "network-logs", "config_audit": "config-audit", "code_repair": "code-repair",
                         "phishing": "phishing", "redteam_attack": "redteam-attack",
                         "redteam_defense": "redteam-defense"}
