"""An environment's scorer as an HTTP reward endpoint (``sv serve ENV``), for trainers that call rewards remotely.

RL frameworks that schedule their own workers (veRL, OpenRLHF, slime) score completions by calling a function or a
URL; they should not have to import our engines, sandboxes and scanners into their GPU processes. The endpoint is
the same scorer as ``sv eval``, ``sv train`` and the reports (``Environment.score_many``), run in a
:class:`~security_verifiers.harness.scoring_pool.ScorerPool`: killable worker processes under the environment's
per-rollout time and memory limits, so a completion that hangs a checker costs its own rollout and nothing else.

* ``POST /score``: ``{"requests": [{"item_id" | "item", "completion" | "transcript"}, ...]}`` ->
  ``{"results": [{"reward", "components", "outcome", "parse_status", "parse_error", "error"}, ...]}`` in order.
  An item is named by its id (among the splits the server loaded) or given whole (validated against the item
  contract); a single-turn answer is the completion text (scored after the item's own prompt), a multi-turn one
  the whole transcript. A scorer infrastructure failure is ``"reward": null`` with ``"error": {"kind",
  "message"}``: never a 0 that a trainer would learn from.
* ``POST /openrlhf``: OpenRLHF's ``--remote_rm_url`` shape, ``{"query": [...], "prompts": [...], "labels":
  [...]}`` -> ``{"rewards": [...], "scores": [...], "extra_logs": {...}}``: each label is an item id and each
  query its prompt followed by the completion.
* ``GET /info``: the environment, its version and config, the checkers' versions and how many items are loaded.

A malformed request is a 400 naming what is wrong; a batch over ``max_batch`` is a 413.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from security_verifiers.core.errors import DatasetError, InfraError
from security_verifiers.core.types import Item, Message, Score, Transcript
from security_verifiers.envs.base import Environment
from security_verifiers.harness.scoring_pool import BatchScorer

#: Rollouts handed to one scoring worker at a time: a large request is spread over the pool's workers.
CHUNK = 32
#: The largest request body accepted (bytes): a batch of long transcripts, not a denial of service.
MAX_BODY = 64 * 1024 * 1024


class ScoreRequest(BaseModel):
    """One rollout to score: an item (by id or whole) and the model's answer (a completion or a transcript)."""

    model_config = ConfigDict(extra="forbid")

    item_id: str | None = None
    item: dict[str, Any] | None = None
    completion: str | None = None
    transcript: Transcript | None = None

    @model_validator(mode="after")
    def _one_of_each(self) -> ScoreRequest:
        if (self.item_id is None) == (self.item is None):
            raise ValueError("give exactly one of item_id and item")
        if (self.completion is None) == (self.transcript is None):
            raise ValueError("give exactly one of completion and transcript")
        return self


class ScoreBatch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    requests: list[ScoreRequest] = Field(min_length=1)


class OpenRLHFBatch(BaseModel):
    """OpenRLHF's remote reward request: full texts, their prompts, and the labels (here: item ids)."""

    model_config = ConfigDict(extra="ignore")

    query: list[str] = Field(min_length=1)
    prompts: list[str]
    labels: list[str]

    @model_validator(mode="after")
    def _aligned(self) -> OpenRLHFBatch:
        if not len(self.query) == len(self.prompts) == len(self.labels):
            raise ValueError(f"query, prompts and labels differ in length ({len(self.query)}, {len(self.prompts)}, "
                             f"{len(self.labels)})")
        return self


class BadRequest(Exception):
    """A request the server cannot score as sent (400)."""


def result_of(score: Score | InfraError) -> dict[str, Any]:
    """One rollout's verdict as the endpoint returns it."""
    if isinstance(score, InfraError):
        return {"reward": None, "components": None, "outcome": None, "parse_status": None, "parse_error": None,
                "error": {"kind": score.kind.value, "message": score.message}}
    return {"reward": score.reward, "components": score.components, "outcome": score.outcome,
            "parse_status": score.parse_status.value, "parse_error": score.parse_error, "error": None}


class RewardService:
    """What the endpoint does, apart from HTTP: resolve items, build transcripts, score in the pool."""

    def __init__(self, env: Environment, items: Sequence[Item], pool: BatchScorer, max_batch: int = 1024) -> None:
        self.env = env
        self.items: Mapping[str, Item] = {item.id: item for item in items}
        self.pool = pool
        self.max_batch = max_batch

    def info(self) -> dict[str, Any]:
        return {**self.env.describe(), "tool_versions": self.env.tool_versions(), "items": len(self.items),
                "max_turns": self.env.max_turns, "workers": self.pool.workers, "max_batch": self.max_batch}

    def _item(self, request: ScoreRequest, index: int) -> Item:
        if request.item_id is not None:
            item = self.items.get(request.item_id)
            if item is None:
                raise BadRequest(f"request {index}: unknown item_id {request.item_id!r} (the server loaded "
                                 f"{len(self.items)} items; send the item itself, or start it with their split)")
            return item
        try:
            item = Item.model_validate(request.item)
            self.env.validate_item(item)
        except (ValidationError, DatasetError) as err:
            raise BadRequest(f"request {index}: not a valid {self.env.name} item: {' '.join(str(err).split())}") \
                from err
        return item

    def _transcript(self, item: Item, request: ScoreRequest, index: int) -> Transcript:
        if request.transcript is not None:
            return request.transcript
        if self.env.max_turns > 1:
            raise BadRequest(f"request {index}: {self.env.name} plays multi-turn episodes ({self.env.max_turns} "
                             "turns): send the whole transcript, not a completion")
        assert request.completion is not None
        return Transcript(messages=[*self.env.prompt(item), Message(role="assistant", content=request.completion)])

    def resolve(self, requests: Sequence[ScoreRequest]) -> tuple[list[Item], list[Transcript]]:
        if len(requests) > self.max_batch:
            raise web.HTTPRequestEntityTooLarge(max_size=self.max_batch, actual_size=len(requests),
                                                text=f"{len(requests)} requests in one batch; at most "
                                                f"{self.max_batch}")
        items = [self._item(r, i) for i, r in enumerate(requests)]
        return items, [self._transcript(item, r, i) for i, (item, r) in enumerate(zip(items, requests, strict=True))]

    async def score(self, items: list[Item], transcripts: list[Transcript]) -> list[Score | InfraError]:
        chunks = [(items[i:i + CHUNK], transcripts[i:i + CHUNK]) for i in range(0, len(items), CHUNK)]
        scored = await asyncio.gather(*(self.pool.score(its, ts) for its, ts in chunks))
        return [score for chunk in scored for score in chunk]

    def openrlhf_requests(self, batch: OpenRLHFBatch) -> list[ScoreRequest]:
        requests = []
        for index, (query, prompt, label) in enumerate(zip(batch.query, batch.prompts, batch.labels, strict=True)):
            if not query.startswith(prompt):
                raise BadRequest(f"query {index} does not begin with its prompt: the completion cannot be told apart")
            requests.append(ScoreRequest(item_id=label, completion=query[len(prompt):]))
        return requests


def _bad(message: str) -> web.Response:
    return web.json_response({"error": message}, status=400)


def build_app(service: RewardService) -> web.Application:
    """The aiohttp application serving ``service``."""

    async def parsed(request: web.Request, model: type[BaseModel]) -> Any:
        try:
            return model.model_validate_json(await request.read())
        except ValidationError as err:
            raise BadRequest(f"not a valid request: {' '.join(str(err).split())[:2000]}") from err

    async def score(request: web.Request) -> web.Response:
        try:
            batch = await parsed(request, ScoreBatch)
            items, transcripts = service.resolve(batch.requests)
        except BadRequest as err:
            return _bad(str(err))
        scores = await service.score(items, transcripts)
        return web.json_response({"results": [result_of(s) for s in scores]})

    async def openrlhf(request: web.Request) -> web.Response:
        try:
            batch = await parsed(request, OpenRLHFBatch)
            items, transcripts = service.resolve(service.openrlhf_requests(batch))
        except BadRequest as err:
            return _bad(str(err))
        results = [result_of(s) for s in await service.score(items, transcripts)]
        rewards = [r["reward"] for r in results]
        return web.json_response({"rewards": rewards, "scores": rewards, "extra_logs": {
            "parse_failure": [None if r["error"] else float(r["parse_status"] != "ok") for r in results],
            "scorer_error": [float(r["error"] is not None) for r in results]}})

    async def info(request: web.Request) -> web.Response:
        return web.json_response(service.info())

    app = web.Application(client_max_size=MAX_BODY)
    app.add_routes([web.post("/score", score), web.post("/openrlhf", openrlhf), web.get("/info", info)])
    return app
