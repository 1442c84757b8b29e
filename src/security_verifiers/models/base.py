"""The policy protocol: a model backend or a built-in baseline, interchangeable in the harness."""

from __future__ import annotations

from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from security_verifiers.core.types import Completion, Item, Message

#: The most bytes of one reply that are read, recorded and cached: a thousand times what 1,024 tokens take, yet an
#: endpoint that answers with 20 MB costs 1 MiB per rollout, not 20 MB of memory, results file and cache each.
DEFAULT_MAX_REPLY_BYTES = 1024 * 1024
#: The ``finish_reason`` of the reply that stands in for one past the cap (:func:`reply_too_large`).
REPLY_TOO_LARGE = "max_reply_bytes"


def reply_too_large(limit: int) -> Completion:
    """What is recorded and scored in place of a reply longer than ``limit`` bytes: a short text that no scorer
    reads as an answer (no JSON object), so the rollout is the model's parse failure at the minimum reward, and
    the transcript says why. It is never cached: the cap is not part of the cache key.

    >>> reply_too_large(1048576).text
    'reply exceeded --max-reply-bytes (1048576) and was not kept'
    """
    return Completion(text=f"reply exceeded --max-reply-bytes ({limit}) and was not kept",
                      finish_reason=REPLY_TOO_LARGE)


class Sampling(BaseModel):
    """Sampling parameters sent to a model; part of the response-cache key and of the run metadata."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: float | None = Field(
        0.0, ge=0.0, le=2.0,
        description="Sampling temperature (OpenAI's reasoning models accept only their own default: pass none).",
    )
    max_tokens: int = Field(1024, gt=0, description="Maximum tokens in one reply.")
    top_p: float | None = Field(None, gt=0.0, le=1.0, description="Nucleus sampling cut-off.")
    seed: int | None = Field(None, description="Seed passed to the endpoint, where it supports one.")
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = Field(
        "max_tokens",
        description="Request field that carries max_tokens: max_tokens (vLLM and most OpenAI-compatible servers) "
        "or max_completion_tokens (OpenAI's newer models, whose reasoning models reject max_tokens).",
    )


class Endpoint(BaseModel):
    """Where an OpenAI-compatible model is served and how to reach it: the one place these defaults live (the
    CLI derives its options from it). The key itself is never here, only the variable that holds it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str | None = Field(
        None, min_length=1,
        description="Endpoint base URL, e.g. http://localhost:8000/v1 ($OPENAI_BASE_URL, else OpenAI's, when unset).",
    )
    api_key_env: str = Field(
        "OPENAI_API_KEY", min_length=1, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
        description="Name of the environment variable holding the API key (never the key itself); a loopback "
        "endpoint needs none.",
    )
    max_retries: int = Field(
        4, ge=0, le=20,
        description="Retries with exponential backoff for transient endpoint errors (408, 409, 429, 5xx, "
        "connection failures), honouring retry-after.",
    )
    max_reply_bytes: int = Field(
        DEFAULT_MAX_REPLY_BYTES, gt=0,
        description="Most bytes of one reply read from the endpoint: a server that answers a short request with "
        "megabytes would otherwise fill memory, results.jsonl and the cache. Reading stops at the cap, and the "
        "reply is recorded as an unparseable answer (reward at the minimum, not an infrastructure error), noted "
        "in its transcript and not cached.",
    )
    rpm: int | None = Field(
        None, gt=0,
        description="Requests per minute at most: requests (the client's retries too) go 60/rpm seconds apart, "
        "waiting rather than drawing 429s. Answers from the cache are not requests. None: no limit.",
    )
    tpm: int | None = Field(
        None, gt=0,
        description="Tokens (prompt and reply) per rolling minute at most: each request reserves an upper bound "
        "(its prompt at a token per byte plus max_tokens) until its reply reports the real count. None: no limit.",
    )
    price_in: float | None = Field(
        None, ge=0, allow_inf_nan=False,
        description="Price of a million prompt tokens (USD), given with price_out: the run's cost is shown on the "
        "console and kept in summary.json (cached answers are not billed). None: no cost is computed.",
    )
    price_out: float | None = Field(
        None, ge=0, allow_inf_nan=False, validate_default=True,
        description="Price of a million completion tokens (USD), given with price_in.",
    )

    @field_validator("price_out")
    @classmethod
    def _both_prices(cls, price_out: float | None, info: ValidationInfo) -> float | None:
        """A cost from one price would read as the whole cost; a free side is given as 0."""
        if "price_in" not in info.data:  # price_in was itself refused: that error says enough
            return price_out
        if (info.data["price_in"] is None) != (price_out is None):
            raise ValueError("a cost needs both prices: give --price-in and --price-out (0 for a side that is free)")
        return price_out


@runtime_checkable
class Policy(Protocol):
    """Anything that answers an episode's messages.

    ``item`` is passed so that baselines can be written as plain functions of the task (the
    ``reference`` baseline reads the target); model backends must ignore it. The runner also calls two
    optional methods when a policy has them: ``prepare(items)`` before a run and ``await aclose()`` at
    its end (a model closes its HTTP connections in the event loop that opened them). An optional
    ``max_reply_bytes`` attribute sets the cap the episode puts on its replies (:data:`DEFAULT_MAX_REPLY_BYTES`
    where absent).
    """

    name: str

    def describe(self) -> dict[str, Any]:
        """What rebuilds this policy (written to metadata.json); no secrets."""
        ...

    async def respond(
        self, item: Item, messages: list[Message], tools: list[dict[str, Any]] | None, sample: int
    ) -> Completion:
        """The next assistant reply. ``sample`` distinguishes repeated rollouts of one item."""
        ...


class Baseline:
    """Base of built-in baselines: a synchronous ``answer(item, messages)`` wrapped as a policy."""

    name: str = "baseline"

    def describe(self) -> dict[str, Any]:
        return {"kind": "baseline", "name": self.name}

    def prepare(self, items: list[Item]) -> None:  # noqa: B027 - optional hook
        """Optional batch hook called once before a run, e.g. to predict all items at once."""

    def answer(self, item: Item, messages: list[Message]) -> str:
        raise NotImplementedError

    async def respond(
        self, item: Item, messages: list[Message], tools: list[dict[str, Any]] | None, sample: int
    ) -> Completion:
        return Completion(text=self.answer(item, messages), finish_reason="stop")
