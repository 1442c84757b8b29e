"""One episode: prompt → policy (↔ tools) → the environment's scorer → one rollout record.

Each step runs inside the error boundary of its layer, so a failure is attributed (provider, tool,
scorer, timeout) and recorded with an empty reward; it never becomes a model's score of 0. The environment's own
steps (its prompt, its tools' setup) count as the scorer's: a bug there is the environment's, never the model's.

Text enters the transcript as valid Unicode: a reply that decodes to lone surrogates (a JSON ``"\\udce2"`` from
an endpoint, a tool reading bytes with ``surrogateescape``) has them replaced by U+FFFD before it is scored, so the
record that is written holds what was scored. A record that still cannot be written becomes its rollout's error
(:func:`unwritable`), never the run's.

Every reply is bounded before it is recorded: one longer than the policy's ``max_reply_bytes`` (the endpoint reads no
further; a local model or a baseline gets :data:`DEFAULT_MAX_REPLY_BYTES`) is replaced by :func:`reply_too_large`,
which its scorer reads as an unparseable answer, so a runaway reply costs neither memory nor disk.
"""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

from security_verifiers.core.errors import ErrorKind, InfraError, boundary
from security_verifiers.core.types import (
    Completion,
    ErrorRecord,
    Item,
    Message,
    RolloutRecord,
    Score,
    Transcript,
    Usage,
)
from security_verifiers.envs.base import Environment
from security_verifiers.models.base import DEFAULT_MAX_REPLY_BYTES, Policy, reply_too_large


async def play_episode(
    env: Environment, policy: Policy, item: Item, sample: int = 0, timeout_s: float = 120.0
) -> tuple[RolloutRecord, Transcript | None]:
    """Run the dialogue of one episode (policy turns and tool calls), without scoring it.

    Returns the record so far and the transcript to score, or ``None`` when an infrastructure
    error ended the episode (the record then carries the error and no reward).
    """
    usage = Usage()
    all_cached = True
    tool_calls = 0
    tool_seconds = 0.0
    start = time.perf_counter()
    record = RolloutRecord(env=env.name, env_version=env.version, item_id=item.id, split=item.split, sample=sample)
    messages: list[Message] = []
    toolbox = None
    max_reply_bytes = getattr(policy, "max_reply_bytes", DEFAULT_MAX_REPLY_BYTES)
    try:
        with boundary(ErrorKind.SCORER):  # the environment's own code, on one item (a hostile message, say)
            messages = env.prompt(item)
            toolbox = env.tools(item)
            schemas = toolbox.schemas() if toolbox is not None else None
        for _turn in range(env.max_turns):
            with boundary(ErrorKind.PROVIDER):
                async with asyncio.timeout(timeout_s):
                    completion = _capped(await policy.respond(item, messages, schemas, sample), max_reply_bytes)
            usage = usage + completion.usage
            all_cached = all_cached and completion.cached
            with boundary(ErrorKind.PROVIDER):
                reply = _valid(Message(role="assistant", content=completion.text, tool_calls=completion.tool_calls))
            messages.append(reply)
            if toolbox is None or not reply.tool_calls:
                break
            for call in reply.tool_calls:
                t0 = time.perf_counter()
                with boundary(ErrorKind.TOOL):
                    result = await toolbox.call(call.name, call.arguments)
                tool_seconds += time.perf_counter() - t0
                tool_calls += 1
                messages.append(_valid(Message(role="tool", content=result, tool_call_id=call.id)))
    except InfraError as err:
        record.error = ErrorRecord(kind=err.kind.value, message=err.message)
    world = None
    try:
        with boundary(ErrorKind.TOOL):
            world = toolbox.record() if toolbox is not None else None
    except InfraError as err:
        record.error = record.error or ErrorRecord(kind=err.kind.value, message=err.message)
    record.transcript = Transcript(messages=messages, tool_calls=tool_calls, tool_seconds=tool_seconds, world=world)
    transcript = record.transcript if record.error is None else None
    record.usage = usage
    record.cached = all_cached and record.error is None
    record.latency_s = time.perf_counter() - start
    return record, transcript


def reply_bytes(completion: Completion) -> int:
    """The UTF-8 size of what a reply says: its text and its tool calls' names and arguments.

    >>> reply_bytes(Completion(text="caf\u00e9"))
    5
    """
    parts = [completion.text, *(c.name for c in completion.tool_calls), *(c.arguments for c in completion.tool_calls)]
    return sum(len(part.encode("utf-8", "surrogatepass")) for part in parts)


def _capped(completion: Completion, limit: int) -> Completion:
    """``completion``, or :func:`reply_too_large` in its place when it says more than ``limit`` bytes (its usage and
    cache flag kept: the tokens were spent, and a cached reply stored under a higher cap is capped here too)."""
    if not completion.tool_calls and len(completion.text) <= limit // 4:
        return completion  # four bytes a character at most: a short reply need not be encoded to know
    if reply_bytes(completion) <= limit:
        return completion
    return reply_too_large(limit).model_copy(update={"usage": completion.usage, "cached": completion.cached})


def apply_score(record: RolloutRecord, score: Score | InfraError) -> RolloutRecord:
    """Fill a played record with its score, or with the scorer's infrastructure error."""
    if isinstance(score, InfraError):
        record.error = ErrorRecord(kind=score.kind.value, message=score.message)
        return record
    record.reward = score.reward
    record.components = score.components
    record.outcome = score.outcome
    record.parse_status = score.parse_status
    return record


def score_one(env: Environment, item: Item, transcript: Transcript) -> Score | InfraError:
    try:
        with boundary(ErrorKind.SCORER):
            return env.score(item, transcript)
    except InfraError as err:
        return err


def score_batch(env: Environment, items: list[Item], transcripts: list[Transcript]) -> list[Score | InfraError]:
    """Score several rollouts at once (an environment may batch its checkers); a failure of the whole
    batch is attributed to every rollout in it."""
    try:
        with boundary(ErrorKind.SCORER):
            scores = env.score_many(items, transcripts)
    except InfraError as err:
        return [err] * len(items)
    if len(scores) != len(items):
        return [InfraError(ErrorKind.SCORER, "score_many returned the wrong number of scores")] * len(items)
    return scores


async def run_episode(
    env: Environment, policy: Policy, item: Item, sample: int = 0, timeout_s: float = 120.0
) -> RolloutRecord:
    """Play one episode of ``env`` on ``item`` with ``policy`` and score it."""
    record, transcript = await play_episode(env, policy, item, sample, timeout_s)
    if transcript is None:
        return record
    return apply_score(record, score_one(env, item, transcript))


#: Lone surrogates: no valid text holds one, and UTF-8 (so JSON written as UTF-8) cannot encode one.
_SURROGATE = re.compile("[\ud800-\udfff]")


def writable_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (the text unchanged when it holds none).

    >>> writable_text("caf\\udce9"), writable_text("ok")
    ('caf\ufffd', 'ok')
    """
    return text if text.isascii() else _SURROGATE.sub("\ufffd", text)


def _valid(message: Message) -> Message:
    """``message`` as valid Unicode: what a reply decoded to, minus lone surrogates."""
    if message.content.isascii() and all(c.arguments.isascii() for c in message.tool_calls):
        return message
    return message.model_copy(update={
        "content": writable_text(message.content),
        "tool_calls": [c.model_copy(update={"arguments": writable_text(c.arguments)}) for c in message.tool_calls],
    })


def _writable(value: Any) -> Any:
    """``value`` (a model's dump) as JSON can hold it: strings without lone surrogates, bytes decoded, anything
    else JSON has no type for as its ``repr``."""
    if isinstance(value, str):
        return writable_text(value)
    if isinstance(value, bool | int | float) or value is None:
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, dict):
        return {writable_text(str(k)): _writable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_writable(v) for v in value]
    return writable_text(repr(value))


def unwritable(record: RolloutRecord, err: Exception) -> RolloutRecord:
    """The record to write in place of ``record``, whose JSON could not be written (``err``): the rollout's
    scorer error, with no reward or outcome, and its transcript made writable so the failure can be read. The
    outcome came from the environment's scorer, so the failure is the scorer's; a resume plays it again."""
    reason = " ".join(f"{type(err).__name__}: {err}".split())[:500]
    failed = RolloutRecord(
        env=writable_text(record.env), env_version=writable_text(record.env_version),
        item_id=writable_text(record.item_id), split=writable_text(record.split), sample=record.sample,
        error=ErrorRecord(kind=ErrorKind.SCORER.value,
                          message=writable_text(f"the rollout's record cannot be written as JSON ({reason})")),
        usage=record.usage, latency_s=record.latency_s,
    )
    if record.transcript is not None:
        try:
            failed.transcript = Transcript.model_validate(_writable(record.transcript.model_dump()))
            failed.model_dump_json()
        except Exception:  # noqa: BLE001 - the transcript is a help to read the failure, not part of it
            failed.transcript = None
    return failed
