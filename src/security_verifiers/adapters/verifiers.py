"""The environments as Prime Intellect's ``verifiers`` (0.4.0, its v1 API) runs them: ``vf-eval sv-network-logs``.

verifiers 0.4.0 finds an environment by its taskset id: ``vf-eval sv-network-logs`` imports the module
``sv_network_logs`` (the id with ``-`` as ``_``) and takes the :class:`~verifiers.v1.Taskset`, the
:class:`~verifiers.v1.Harness` and the :class:`~verifiers.v1.Env` subclasses its ``__all__`` exports. The six small
``sv_*`` packages beside ``security_verifiers`` are those modules; everything they export is built here.

* **Taskset**: the environment's items of one split (``--env.taskset.split``, ``test`` by default), each a task
  whose data keeps the item id (``item_id``), the environment's name and options; its prompt is the environment's own
  prompt (shown in the trace; the episode itself is played from :meth:`Environment.prompt`).
* **Harness**: the episode is :func:`~security_verifiers.harness.episode.play_episode`, the function ``sv eval`` plays,
  run in-process (verifiers lets a harness run its loop in-process as long as every model call goes through the
  rollout's interception endpoint): the model is asked through that endpoint, with the environment's tools as native
  function tools, and its tool calls run in the environment's own :class:`~security_verifiers.envs.base.Toolbox`.
  The transcript the scorer reads is therefore the one ``sv eval`` would build (``world``, what the tools recorded,
  included); it is kept in ``trace.info["sv_transcript"]``. An infrastructure error (the endpoint, a tool) fails the
  rollout, as in ``sv eval``: it is nobody's answer, so it gets no reward.
* **Rewards**: nothing here computes one. ``reward`` is the environment's own ``score`` (its total reward, weight 1);
  its components are metrics named as in :meth:`Environment.component_weights`; the parse status and the outcome go to
  ``trace.info["sv_score"]``. A scorer infrastructure error fails the rollout (its reward stays unset, never 0), as in
  ``sv eval`` and the TRL adapter. Scoring runs where ``sv eval`` runs it: in the environment's
  :class:`~security_verifiers.harness.scoring_pool.ScorerPool` (E2: worker processes under the per-rollout time
  and memory limits) or, for the others, off the event loop in a thread, one rollout at a time per environment.
* **Env**: the single-agent env, whose seat runs this harness in the ``subprocess`` runtime by default (nothing is
  executed in it; verifiers' own default is a remote sandbox).

Python: :func:`load_environment` (``load_environment("network-logs", mode=...)``) builds the same env as the CLI.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Mapping
from typing import Any, ClassVar

import httpx
import verifiers.v1 as vf
from pydantic import Field

from security_verifiers.core.errors import ErrorKind, InfraError, boundary
from security_verifiers.core.types import Completion, Item, Message, Score, Transcript
from security_verifiers.envs.base import Environment, get_env
from security_verifiers.harness.episode import play_episode, score_one
from security_verifiers.harness.scoring_pool import shared_pool
from security_verifiers.models.base import DEFAULT_MAX_REPLY_BYTES, reply_too_large
from security_verifiers.models.openai_compat import _read_capped, _Reply, _to_completion, as_function_tool

#: Prefix of the taskset ids: ``sv-network-logs`` is the ``network-logs`` environment.
ID_PREFIX = "sv-"
#: The environments with a taskset module, by name (the module is ``sv_`` + the name with ``_``).
ENVIRONMENTS = ("network-logs", "config-audit", "code-repair", "phishing", "redteam-attack", "redteam-defense")
#: Where the transcript and the verdict of a rollout are kept on its trace (``trace.info``).
TRANSCRIPT_KEY = "sv_transcript"
SCORE_KEY = "sv_score"
#: Seconds one model call may take (the endpoint's), as ``sv eval``'s default.
MODEL_TIMEOUT_S = 120.0


def taskset_id(name: str) -> str:
    """The verifiers taskset id of environment ``name`` (``network-logs`` -> ``sv-network-logs``)."""
    return f"{ID_PREFIX}{name}"


# -- environments and items, built once per (name, options) -------------------------------------------------------

_lock = threading.Lock()
_envs: dict[str, Environment] = {}
_items: dict[tuple[str, str], dict[str, Item]] = {}
_score_locks: dict[str, threading.Lock] = {}


def _options_key(name: str, options: Mapping[str, Any]) -> str:
    return json.dumps([name, options], sort_keys=True, default=str)


def environment(name: str, options: Mapping[str, Any]) -> Environment:
    """The environment ``name`` with ``options`` (one instance per distinct options, shared by its tasks)."""
    key = _options_key(name, options)
    with _lock:
        if key not in _envs:
            _envs[key] = get_env(name, dict(options))
            _score_locks[key] = threading.Lock()
        return _envs[key]


def items(name: str, options: Mapping[str, Any], split: str) -> dict[str, Item]:
    """The items of ``split`` by id."""
    key = (_options_key(name, options), split)
    with _lock:
        cached = _items.get(key)
    if cached is None:
        cached = {item.id: item for item in environment(name, options).dataset(split).items}
        with _lock:
            _items[key] = cached
    return cached


# -- the task: data, and the scorer behind @reward / @metric ------------------------------------------------------


class SvTaskData(vf.TaskData):
    """One item of one environment, by id: the environment (its name and options) and the split find it."""

    env: str
    options: dict[str, Any] = Field(default_factory=dict)
    split: str
    item_id: str


class SvTask(vf.Task[SvTaskData]):
    """An environment's item; its reward and metrics are the environment's own verdict on the rollout."""

    def resolve(self) -> tuple[Environment, Item]:
        return resolve(self.data)

    @property
    def key(self) -> str:
        return f"{self.data.env}/{self.data.split}/{self.data.item_id}"

    async def verdict(self, trace: vf.Trace) -> Score:
        """The environment's score of the rollout in ``trace``, computed once (the metrics and the reward share
        it); an infrastructure error of the scorer raises, so the rollout fails rather than scoring 0."""
        cached = trace.info.get(SCORE_KEY)
        if cached is not None:
            return Score.model_validate(cached)
        played = trace.info.get(TRANSCRIPT_KEY)
        if played is None:
            raise vf.TaskError("the rollout has no transcript to score (its episode did not finish)")
        env, item = self.resolve()
        transcript = Transcript.model_validate(played)
        pool = shared_pool(env)
        if pool is not None:  # as sv eval scores it: a worker process under the per-rollout limits
            [verdict] = await pool.score([item], [transcript])
        else:
            lock = _score_locks[_options_key(self.data.env, self.data.options)]

            def score() -> Score | InfraError:
                with lock:  # one rollout at a time per environment, as its checkers may not be thread-safe
                    return score_one(env, item, transcript)

            verdict = await asyncio.to_thread(score)
        if isinstance(verdict, InfraError):
            raise vf.TaskError(f"scorer {verdict.kind.value} error: {verdict.message}")
        trace.info[SCORE_KEY] = verdict.model_dump(mode="json")
        return verdict

    @vf.metric
    async def components(self, trace: vf.Trace) -> dict[str, float]:
        """The reward's components, named as in ``component_weights()``."""
        verdict = await self.verdict(trace)
        return {name: float(value) for name, value in verdict.components.items()}

    @vf.reward(weight=1.0)
    async def reward(self, trace: vf.Trace) -> float:
        """The environment's reward."""
        return float((await self.verdict(trace)).reward)


def resolve(data: SvTaskData) -> tuple[Environment, Item]:
    """The environment and the item a task's data names."""
    env = environment(data.env, data.options)
    found = items(data.env, data.options, data.split).get(data.item_id)
    if found is None:
        raise vf.TaskError(f"{data.env} has no item {data.item_id!r} in split {data.split!r}")
    return env, found


# -- the taskset -----------------------------------------------------------------------------------------------


class SvTasksetConfig(vf.TasksetConfig):
    """Which items (``--env.taskset.split``) of the environment, built with which options (``--env.taskset.options``,
    the options of ``sv eval --env-option``)."""

    split: str = "test"
    options: dict[str, Any] = Field(default_factory=dict)


class SvTaskset(vf.Taskset[SvTask, SvTasksetConfig]):
    """The items of one environment; subclasses name it (:attr:`ENV`)."""

    ENV: ClassVar[str]

    def __init__(self, config: SvTasksetConfig) -> None:
        if config.system_prompt is not None:
            # The episode is played from the environment's own prompt, which is part of what its scores mean.
            raise ValueError(f"{taskset_id(self.ENV)} plays the environment's own prompt; it takes no system_prompt "
                             "override (change the prompt through the environment's options, e.g. prompt_style)")
        super().__init__(config)

    def load(self) -> list[SvTask]:
        options = dict(self.config.options)
        env = environment(self.ENV, options)
        tasks = []
        for item in items(self.ENV, options, self.config.split).values():
            prompt = [{"role": m.role, "content": m.content} for m in env.prompt(item)]
            data = SvTaskData(id=item.id, name=item.id, prompt=prompt, env=self.ENV, options=options,
                              split=self.config.split, item_id=item.id)
            tasks.append(SvTask(data, self.config.task))
        return tasks


# -- the harness: sv's own episode, its model calls through the rollout's endpoint ---------------------------------


class EndpointPolicy:
    """A model behind the rollout's interception endpoint (an OpenAI-compatible chat-completions API), as a
    :class:`~security_verifiers.models.base.Policy`. The run owns the model and the sampling (verifiers overlays them
    on every request), so the request carries only the messages and the tools."""

    def __init__(self, endpoint: str, secret: str, model: str, timeout_s: float = MODEL_TIMEOUT_S) -> None:
        self.name = model
        self.model = model
        self.url = endpoint.rstrip("/") + "/chat/completions"
        self.secret = secret
        self.timeout_s = timeout_s
        self.max_reply_bytes = DEFAULT_MAX_REPLY_BYTES
        self._client: httpx.AsyncClient | None = None

    def describe(self) -> dict[str, Any]:
        return {"kind": "verifiers-interception", "model": self.model}

    async def respond(self, item: Item, messages: list[Message], tools: list[dict[str, Any]] | None,
                      sample: int) -> Completion:
        body: dict[str, Any] = {"model": self.model, "messages": [m.to_openai() for m in messages]}
        if tools:
            body["tools"] = [as_function_tool(t) for t in tools]
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self.timeout_s)
        with boundary(ErrorKind.PROVIDER):
            request = self._client.build_request("POST", self.url, json=body,
                                                 headers={"Authorization": f"Bearer {self.secret}"})
            response = await self._client.send(request, stream=True)
            try:
                if response.status_code >= 400:
                    text = (await response.aread())[:500].decode("utf-8", "replace")
                    raise InfraError(ErrorKind.PROVIDER, f"{self.model}: HTTP {response.status_code}: {text}")
                raw = await _read_capped(response, self.max_reply_bytes)
            finally:
                await response.aclose()
            if raw is None:
                return reply_too_large(self.max_reply_bytes)
            return _to_completion(_Reply.model_validate_json(raw))

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.aclose()


class SvHarnessConfig(vf.HarnessConfig):
    """The in-process harness of the Security Verifiers environments (no knobs)."""


class SvHarness(vf.Harness[SvHarnessConfig]):
    """Plays one episode as ``sv eval`` does (:func:`play_episode`): the environment's prompt, the model through the
    rollout's endpoint, the tools in the environment's own toolbox; its transcript goes to ``trace.info``."""

    APPENDS_SYSTEM_PROMPT = True
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def launch(self, ctx: vf.ModelContext, trace: vf.Trace, runtime: vf.Runtime, endpoint: str, secret: str,
                     mcp_urls: dict[str, str], data: vf.TaskData) -> vf.ProgramResult:
        if not isinstance(data, SvTaskData):
            data = SvTaskData.model_validate(data.model_dump())
        env, item = resolve(data)
        policy = EndpointPolicy(endpoint, secret, ctx.model)
        try:
            record, transcript = await play_episode(env, policy, item)
        finally:
            await policy.aclose()
        if transcript is None:
            error = record.error
            detail = f"{error.kind}: {error.message}" if error is not None else "no transcript"
            if record.transcript is not None:  # what was played before the failure, to read it
                trace.info["sv_partial_transcript"] = record.transcript.model_dump(mode="json")
            raise vf.HarnessError(f"the episode ended on an infrastructure error ({detail})")
        trace.info[TRANSCRIPT_KEY] = transcript.model_dump(mode="json")
        return vf.ProgramResult(exit_code=0, stdout="", stderr="")


# -- the env: one seat, this harness, a local runtime ------------------------------------------------------------


class SvEnvConfig(vf.EnvConfig):
    """The single seat, run by the in-process harness in the local ``subprocess`` runtime (nothing runs in it)."""

    agent: vf.AgentConfig = vf.AgentConfig(runtime=vf.SubprocessConfig(), network_notice=False)


class SvEnv(vf.Env[SvEnvConfig]):
    """One agent playing the seed taskset; at the end of a run the environments release what they hold (E5's served
    target's connections)."""

    async def run(self, task: vf.Task, agents: vf.Agents) -> None:
        await agents.agent.run(task)

    async def stop(self) -> None:
        with _lock:
            envs = list(_envs.values())
        for env in envs:
            await env.aclose()


def load_environment(name: str, split: str = "test", **env_options: Any) -> vf.Env:
    """The verifiers env of environment ``name`` on ``split``, built with ``env_options`` (``sv eval
    --env-option``): what ``vf-eval sv-NAME --env.taskset.split SPLIT --env.taskset.options '{...}'`` runs."""
    if name not in ENVIRONMENTS:
        raise ValueError(f"unknown environment {name!r}; choose from {', '.join(ENVIRONMENTS)}")
    environment(name, env_options)  # an invalid option fails here, with sv's message
    config = vf.resolve_env_config({"taskset": {"id": taskset_id(name), "split": split, "options": env_options}})
    return vf.load_environment(config)

