"""One episode: prompt → policy (↔ tools) → the environment's scorer → one rollout record.

Each step runs inside the error boundary of its layer, so a failure is attributed (provider, tool,
scorer, timeout) and recorded with an empty reward; it never becomes a model's score of 0.
"""

from __future__ import annotations

import asyncio
import time

from security_verifiers.core.errors import ErrorKind, InfraError, boundary
from security_verifiers.core.types import ErrorRecord, Item, Message, RolloutRecord, Transcript, Usage
from security_verifiers.envs.base import Environment
from security_verifiers.models.base import Policy


async def run_episode(
    env: Environment, policy: Policy, item: Item, sample: int = 0, timeout_s: float = 120.0
) -> RolloutRecord:
    """Play one episode of ``env`` on ``item`` with ``policy`` and score it."""
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
        transcript = Transcript(messages=messages, tool_calls=tool_calls, tool_seconds=tool_seconds)
        with boundary(ErrorKind.SCORER):
            score = env.score(item, transcript)
    except InfraError as err:
        record.transcript = Transcript(messages=messages, tool_calls=tool_calls, tool_seconds=tool_seconds)
        record.error = ErrorRecord(kind=err.kind.value, message=err.message)
        record.usage = usage
        record.latency_s = time.perf_counter() - start
        return record
    record.transcript = transcript
    record.reward = score.reward
    record.components = score.components
    record.outcome = score.outcome
    record.parse_status = score.parse_status
    record.usage = usage
    record.latency_s = time.perf_counter() - start
    record.cached = all_cached
    return record
