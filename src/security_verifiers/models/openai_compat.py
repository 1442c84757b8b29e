"""A policy backed by any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama, OpenRouter).

Retries are left to the ``openai`` client (exponential backoff on 408/409/429/5xx and connection
errors, honouring ``retry-after``), so there is one retry policy and it is the one the provider's
SDK is tested against. Whatever still fails is raised as an :class:`InfraError`, so the runner
records it as infrastructure and never as a wrong answer.

``Endpoint.rpm`` and ``Endpoint.tpm`` delay each HTTP attempt, retries included, in ``_admit`` (see
:mod:`~security_verifiers.models.rate_limit`); answers from the cache make no request and do not wait.

A reply is read up to ``Endpoint.max_reply_bytes`` and no further (see ``_read_capped``): past it the connection
is closed and the rollout gets :func:`reply_too_large`, an unparseable answer that is not cached.

The client runs on its aiohttp transport and skips the parts of ``chat.completions.create`` that cost
CPU without checking anything (see ``_request``): against a fast server the harness needs 1 to 1.5 ms
of CPU per rollout instead of about 6 (``benchmarks/harness_overhead.py``).
"""

from __future__ import annotations

import ipaddress
import math
import os
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

import httpx
import openai
from openai import RequestOptions
from pydantic import BaseModel

from security_verifiers.core.cache import ResponseCache
from security_verifiers.core.errors import ConfigError, ErrorKind, InfraError, boundary
from security_verifiers.core.types import Completion, Item, Message, ToolCall, Usage
from security_verifiers.models.base import REPLY_TOO_LARGE, Endpoint, Sampling, reply_too_large
from security_verifiers.models.rate_limit import RateLimiter, Reservation, estimate_tokens

DEFAULT_BASE_URL = "https://api.openai.com/v1"
#: Sent as the key to local servers, which need none but whose clients still require one.
LOCAL_DUMMY_KEY = "EMPTY"
#: The request options ``chat.completions.create`` passes: the API key as a bearer token.
_BEARER_AUTH: RequestOptions = {"security": {"bearer_auth": True}}


@dataclass
class _Attempts:
    """The HTTP attempts of one chat-completions call (the first and the client's retries): the tokens each
    reserves, and their reservations in order."""

    tokens: int
    reservations: list[Reservation] = field(default_factory=list)


#: The call the current task is making, for ``_admit``, which the client calls before every attempt; set by
#: ``_request`` around the call (each task has its own, so concurrent calls do not mix).
_CALL: ContextVar[_Attempts | None] = ContextVar("security_verifiers_rate_limited_call", default=None)


def is_loopback(base_url: str) -> bool:
    """Whether ``base_url`` points at this machine (a local vLLM or Ollama that needs no key).

    >>> is_loopback("http://localhost:8000/v1"), is_loopback("http://127.0.0.1:11434/v1")
    (True, True)
    >>> is_loopback("https://api.openai.com/v1")
    False
    """
    host = urlparse(base_url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def as_function_tool(schema: dict[str, Any]) -> dict[str, Any]:
    """The chat-completions ``tools`` entry for ``schema``, which may be bare or already wrapped.

    >>> as_function_tool({"name": "scan", "parameters": {"type": "object"}})["type"]
    'function'
    """
    if schema.get("type") == "function":
        return schema
    return {"type": "function", "function": schema}


class OpenAIChatPolicy:
    """A model answering through the chat-completions API, with an optional response cache."""

    def __init__(
        self,
        model: str,
        *,
        endpoint: Endpoint | None = None,
        sampling: Sampling | None = None,
        timeout_s: float = 120.0,
        cache: ResponseCache | None = None,
    ) -> None:
        endpoint = endpoint if endpoint is not None else Endpoint()
        # ``name`` is the model as given: run directories are named after it.
        self.name = model
        self.model = model
        # One spelling per endpoint, so "…/v1" and "…/v1/" share cache entries.
        self.base_url = (endpoint.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        self.api_key_env = endpoint.api_key_env
        # The client takes the timeout unchecked and fails on every request instead (an infinite timeout: a
        # connection error), so it is refused here, once; Endpoint bounds the retries.
        if not math.isfinite(timeout_s) or timeout_s <= 0:
            raise ConfigError(f"timeout_s must be a finite number of seconds above 0, got {timeout_s}")
        self.sampling = sampling if sampling is not None else Sampling()
        self.timeout_s = timeout_s
        self.max_retries = endpoint.max_retries
        self.max_reply_bytes = endpoint.max_reply_bytes
        self.limiter = RateLimiter(endpoint.rpm, endpoint.tpm)
        self.cache = cache
        self._key = self._api_key()
        self._client: openai.AsyncOpenAI | None = None

    def _api_key(self) -> str | None:
        """The key from ``api_key_env``, or ``None`` for a loopback server (which is sent the placeholder);
        fail now, at configuration time, rather than on the first item."""
        key = os.environ.get(self.api_key_env)
        if key:
            return key
        if is_loopback(self.base_url):
            return None
        raise ConfigError(
            f"environment variable {self.api_key_env} is not set; it must hold the API key for "
            f"{self.base_url} (or name another variable as api_key_env)"
        )

    @property
    def key_note(self) -> str | None:
        """What to tell the user once, before a run, when the requests carry the placeholder key rather than one
        of theirs; ``None`` when the key comes from ``api_key_env``. A local server started with a key answers the
        placeholder with 401s, which would otherwise read as a generic provider failure."""
        if self._key is not None:
            return None
        return (f"{self.api_key_env} is not set: the requests to {self.base_url} carry the placeholder key "
                f"{LOCAL_DUMMY_KEY!r} (enough for a local server started without a key)")

    def _key_refused(self, err: openai.APIStatusError) -> InfraError:
        """A 401 or 403 as an error that says which key was sent: the placeholder (the variable is unset) or the
        one in ``api_key_env``."""
        if self._key is None:
            hint = (f"{self.api_key_env} is not set, so the placeholder key {LOCAL_DUMMY_KEY!r} was sent; set "
                    f"{self.api_key_env} to the server's key (or name the variable that holds it with --api-key-env)")
        else:
            hint = f"the key in {self.api_key_env} was rejected"
            if err.status_code == 403:
                hint += f" (or it has no access to {self.model})"
        return InfraError(ErrorKind.PROVIDER,
                          f"{self.model} at {self.base_url}: HTTP {err.status_code} ({_status_detail(err)}): {hint}")

    def _http(self) -> openai.AsyncOpenAI:
        """The client, made on first use inside the running event loop (aiohttp binds its session to it).

        Its transport is aiohttp rather than the default httpx, whose connection pool costs more CPU per
        request than everything else in a rollout once tens of requests are in flight.
        """
        if self._client is None:
            # Under --rpm/--tpm every attempt waits its turn, retries included: a hook on the transport's client is
            # the one place the ``openai`` client passes through on each, and it runs before the request's timeout.
            hooks = {"request": [self._admit]} if self.limiter.active else {}
            self._client = openai.AsyncOpenAI(
                base_url=self.base_url,
                api_key=self._key or LOCAL_DUMMY_KEY,
                timeout=self.timeout_s,
                max_retries=self.max_retries,
                http_client=openai.DefaultAioHttpClient(event_hooks=hooks),
            )
        return self._client

    async def _admit(self, request: httpx.Request) -> None:
        """Wait for the rate limits before an HTTP attempt goes out; it reserves the tokens ``_request`` estimated
        for its call (none for a request made outside one, which still counts as a request)."""
        call = _CALL.get()
        reservation = await self.limiter.acquire(call.tokens if call is not None else 0)
        if call is not None:
            call.reservations.append(reservation)

    def describe(self) -> dict[str, Any]:
        """What rebuilds this policy. It names the key's variable, never the key."""
        return {
            "kind": "openai-compatible",
            "model": self.model,
            "base_url": self.base_url,
            "api_key_env": self.api_key_env,
            "sampling": self.sampling.model_dump(),
            "timeout_s": self.timeout_s,
            "max_retries": self.max_retries,
            "max_reply_bytes": self.max_reply_bytes,
            "rpm": self.limiter.rpm,
            "tpm": self.limiter.tpm,
        }

    def _sampling_params(self) -> dict[str, Any]:
        """Sampling as request parameters; unset ones are omitted so the endpoint's defaults apply."""
        params = {k: v for k, v in self.sampling.model_dump(exclude={"max_tokens_field"}).items() if v is not None}
        params[self.sampling.max_tokens_field] = params.pop("max_tokens")
        return params

    async def respond(
        self, item: Item, messages: list[Message], tools: list[dict[str, Any]] | None, sample: int
    ) -> Completion:
        """The model's next reply (``item`` is ignored: a model sees only the messages)."""
        wire_messages = [m.to_openai() for m in messages]
        # An empty tool list is sent as none: the API rejects ``tools: []``.
        wire_tools = [as_function_tool(t) for t in tools] if tools else None
        if self.cache is None:
            return await self._request(wire_messages, wire_tools)
        key = self.cache.key(
            self.model, self.base_url, wire_messages, wire_tools, self.sampling.model_dump(), sample
        )
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        completion = await self._request(wire_messages, wire_tools)
        if completion.finish_reason != REPLY_TOO_LARGE:  # not an answer: a higher cap must ask again
            self.cache.put(key, completion, model=self.model, base_url=self.base_url)
        return completion

    async def _request(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> Completion:
        """One chat-completions call (with the client's retries), every failure as an InfraError."""
        request: dict[str, Any] = {"model": self.model, "messages": messages, **self._sampling_params()}
        if tools is not None:
            request["tools"] = tools
        if not self.limiter.active:
            return await self._post(request)
        # Only requests that reach the endpoint are limited (``respond`` answers from the cache before this):
        # ``_admit`` makes each attempt wait, and the last, the one answered, is settled at the reply's usage.
        call = _Attempts(estimate_tokens(messages, tools, self.sampling.max_tokens))
        token = _CALL.set(call)
        try:
            completion = await self._post(request)
        finally:
            _CALL.reset(token)
        used = completion.usage.prompt_tokens + completion.usage.completion_tokens
        if call.reservations and used:  # a server that reports no usage leaves the estimate counted
            self.limiter.settle(call.reservations[-1], used)
        return completion

    async def _post(self, request: dict[str, Any]) -> Completion:
        with boundary(ErrorKind.PROVIDER):
            try:
                # ``post`` is ``chat.completions.create`` without its two costliest steps: walking the
                # request through the typed parameter schema (0.65 ms; it is plain JSON we built) and
                # building a ChatCompletion field by field (0.15 ms; ``_Reply`` reads the body in
                # pydantic's compiled validator instead). Retries, timeouts and errors are the client's up to
                # the response's headers; ``stream=True`` leaves the body unread, for ``_read_capped``.
                response = await self._http().post(
                    "/chat/completions", cast_to=httpx.Response, body=request, options=_BEARER_AUTH, stream=True,
                    stream_cls=None,
                )
            except (openai.AuthenticationError, openai.PermissionDeniedError) as err:
                raise self._key_refused(err) from err
            except openai.APITimeoutError as err:
                causes = _causes(err)
                if not any(isinstance(cause, TimeoutError) for cause in causes):
                    # The aiohttp transport reports every connection failure, a refused one too, as
                    # httpx.ConnectTimeout; only a TimeoutError among the causes is a real timeout.
                    raise InfraError(
                        ErrorKind.PROVIDER, f"{self.model} at {self.base_url}: cannot connect: {causes[-1]}"
                    ) from err
                raise InfraError(
                    ErrorKind.TIMEOUT, f"{self.model} at {self.base_url}: no reply within {self.timeout_s}s"
                ) from err
            try:
                body = await _read_capped(response, self.max_reply_bytes)
            except httpx.TimeoutException as err:
                raise InfraError(
                    ErrorKind.TIMEOUT, f"{self.model} at {self.base_url}: reply not read within {self.timeout_s}s"
                ) from err
            if body is None:
                return reply_too_large(self.max_reply_bytes)
            return _to_completion(_Reply.model_validate_json(body))

    async def aclose(self) -> None:
        """Close the HTTP client and its connections, in the event loop that used them; the next request
        (in this loop or another) opens a new client."""
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()


async def _read_capped(response: httpx.Response, limit: int) -> bytes | None:
    """The body of ``response`` (decoded, so a compressed one counts at its real size), or ``None`` as soon as it
    passes ``limit`` bytes: the rest is never read, and closing the response drops its connection.

    The bytes are counted as they arrive rather than read from ``Content-Length``: a server may declare no length
    (a body that ends when the connection does), and a compressed body decodes to more than it declares.
    """
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > limit:
                return None
            chunks.append(chunk)
    finally:
        await response.aclose()
    return b"".join(chunks)


def _status_detail(err: openai.APIStatusError) -> str:
    """The server's own words for an HTTP error, on one short line: OpenAI's ``{"error": {"message": …}}``, or
    vLLM's ``{"error": "Unauthorized"}`` (the client keeps what is under ``error`` as ``body``)."""
    body = err.body
    text = body.get("message") if isinstance(body, dict) else body
    return " ".join(text.split())[:200] if isinstance(text, str) and text.strip() else "no message"


def _causes(err: BaseException) -> list[BaseException]:
    """``err`` and the exceptions it was raised from, outermost first."""
    chain = [err]
    while (cause := chain[-1].__cause__ or chain[-1].__context__) is not None and cause not in chain:
        chain.append(cause)
    return chain


class _Function(BaseModel):
    name: str
    arguments: str


class _ToolCall(BaseModel):
    id: str
    type: str = "function"
    function: _Function | None = None  # absent in the other kinds of tool call


class _Message(BaseModel):
    content: str | None = None
    tool_calls: list[_ToolCall] | None = None


class _Choice(BaseModel):
    message: _Message | None = None
    finish_reason: str | None = None


class _Usage(BaseModel):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class _Reply(BaseModel):
    """The fields of a chat-completions response that a policy reads, and only those.

    Lenient like the ``openai`` client's own parsing (compatible servers omit ``id`` or ``usage``, or send
    another ``finish_reason``), but a field that is there must have its type; other fields are ignored.
    """

    choices: list[_Choice] = []
    usage: _Usage | None = None
    system_fingerprint: str | None = None


def _to_completion(response: _Reply) -> Completion:
    """Map a chat-completions response; a response without a message is the provider's fault."""
    choice = response.choices[0] if response.choices else None
    if choice is None or choice.message is None:
        raise InfraError(ErrorKind.PROVIDER, "response has no choices or no message")
    message = choice.message
    tool_calls = []
    for call in message.tool_calls or []:
        if call.type != "function" or call.function is None:
            raise InfraError(ErrorKind.PROVIDER, f"unsupported tool call type {call.type!r}")
        tool_calls.append(ToolCall(id=call.id, name=call.function.name, arguments=call.function.arguments))
    # Some compatible servers omit usage or its fields; missing counts are 0, not an error.
    usage = response.usage or _Usage()
    return Completion(
        text=message.content or "",
        tool_calls=tool_calls,
        usage=Usage(prompt_tokens=usage.prompt_tokens or 0, completion_tokens=usage.completion_tokens or 0),
        finish_reason=choice.finish_reason,
        system_fingerprint=response.system_fingerprint,
    )
