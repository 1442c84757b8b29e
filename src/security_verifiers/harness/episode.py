"""One episode: prompt → policy (↔ tools) → the environment's scorer → one rollout record.

Each step runs inside the error boundary of its layer, so a failure is attributed (provider, tool,
scorer, timeout) and recorded with an empty reward; it never becomes a model's score of 0.
"""

from __future__ import annotations

import asyncio
import time

from security_verifiers.core.errors import ErrorKind, InfraError, boundary
from security_verifiers.core.types import ErrorRecord, Item, Message, RolloutRecord, Score, Transcript, Usage
from security_verifiers.envs.base import Environment
from security_verifiers.models.base import Policy


async def play_episode(
    env: Environment, policy: Policy, item: Item, sample: int = 0, timeout_s: float = 120.0
) -> tuple[RolloutRecord, Transcript | None]:
    """Run the dialogue of one episode (policy turns and tool calls), without scoring it.

    Returns the record so far and the transcript to score, or ``None`` when an infrastructure
    error ended the episode (the record then carries the error and no reward).
    """
    messages: list[Message] = env.prompt(item)
    toolbox = env.tools(item)
    schemas = toolbox.schemas() if toolbox is not None else None
    usage = Usage()
    all_cached = True
    tool_calls = 0
    tool_seconds = 0.0
    start = time.perf_counter()
    record = RolloutRecord(env=env.name, env_version=env.version, item_id=item.id, split=item.split, sample=sample)
    try:
        for _turn in range(env.max_turns):
            with boundary(ErrorKind.PROVIDER):
                async with asyncio.timeout(timeout_s):
                    completion = await policy.respond(item, messages, schemas, sample)
            usage = usage + completion.usage
            all_cached = all_cached and completion.cached
            messages.append(Message(role="assistant", content=completion.text, tool_calls=completion.tool_calls))
            if toolbox is None or not completion.tool_calls:
                break
            for call in completion.tool_calls:
                t0 = time.perf_counter()
                with boundary(ErrorKind.TOOL):
                    result = await toolbox.call(call.name, call.arguments)
                tool_seconds += time.perf_counter() - t0
                tool_calls += 1
                messages.append(Message(role="tool", content=result, tool_call_id=call.id))
    except InfraError as err:
        record.error = ErrorRecord(kind=err.kind.value, message=err.message)
    record.transcript = Transcript(messages=messages, tool_calls=tool_calls, tool_seconds=tool_seconds,
                                   world=toolbox.record() if toolbox is not None else None)
    transcript = record.transcript if record.error is None else None
    record.usage = usage
    record.cached = all_cached and record.error is None
    record.latency_s = time.perf_counter() - start
    return record, transcript


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
