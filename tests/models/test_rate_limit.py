"""``--rpm`` / ``--tpm``: the limiter on a fake clock, and the OpenAI policy spacing real requests (retries too)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from security_verifiers.core.cache import ResponseCache
from security_verifiers.core.types import Item, Message
from security_verifiers.models.base import Endpoint
from security_verifiers.models.openai_compat import OpenAIChatPolicy
from security_verifiers.models.rate_limit import MESSAGE_OVERHEAD_TOKENS, RateLimiter, estimate_tokens
from tests.fakeserver import FakeOpenAIServer, echo

ITEM = Item(id="i1", split="dev", input={}, target={})
MESSAGES = [Message(role="user", content="hello")]


class FakeClock:
    """A clock that only moves when the limiter sleeps: admission times are exact."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds


def _times(limiter: RateLimiter, clock: FakeClock, tokens: list[int]) -> list[float]:
    """When each request (of these token estimates, asked one after another) was admitted."""
    async def main() -> list[float]:
        admitted = []
        for n in tokens:
            await limiter.acquire(n)
            admitted.append(clock.now)
        return admitted

    return asyncio.run(main())


@pytest.mark.parametrize(("rpm", "n", "expected"), [
    (3, 7, [0.0, 20.0, 40.0, 60.0, 80.0, 100.0, 120.0]),  # 60/3 s apart: never 4 in a minute
    (120, 5, [0.0, 0.5, 1.0, 1.5, 2.0]),  # 120 rpm over 5 requests: the last at 4 x 0.5 s
    (1, 2, [0.0, 60.0]),  # one a minute
])
def test_rpm_spaces_requests_60_over_rpm_seconds_apart(rpm: int, n: int, expected: list[float]) -> None:
    clock = FakeClock()
    limiter = RateLimiter(rpm=rpm, clock=clock, sleep=clock.sleep)
    assert _times(limiter, clock, [0] * n) == pytest.approx(expected)
    assert limiter.waited_s == pytest.approx(expected[-1])


def test_concurrent_callers_are_admitted_in_turn() -> None:
    clock = FakeClock()
    limiter = RateLimiter(rpm=60, clock=clock, sleep=clock.sleep)

    async def main() -> list[float]:
        reservations = await asyncio.gather(*(limiter.acquire() for _ in range(4)))
        return [r.at for r in reservations]

    assert asyncio.run(main()) == [0.0, 1.0, 2.0, 3.0]


def test_tpm_waits_for_enough_tokens_to_leave_the_rolling_minute() -> None:
    clock = FakeClock()
    limiter = RateLimiter(tpm=1000, clock=clock, sleep=clock.sleep)
    # 600 + 300 fit; 200 more must wait until the 600 leave the window at 60 s.
    assert _times(limiter, clock, [600, 300, 200]) == [0.0, 0.0, 60.0]


def test_a_settled_reservation_frees_its_surplus_for_later_requests() -> None:
    clock = FakeClock()
    limiter = RateLimiter(tpm=1000, clock=clock, sleep=clock.sleep)

    async def main() -> float:
        first = await limiter.acquire(900)  # an estimate: the reply reports 100 tokens
        limiter.settle(first, 100)
        await limiter.acquire(800)
        return clock.now

    assert asyncio.run(main()) == 0.0  # without settling, 900 + 800 > 1000 would wait a minute


def test_settling_wakes_a_request_already_waiting() -> None:
    # A real clock and a 30 s window: the waiter would sleep 30 s unless the settle wakes it.
    limiter = RateLimiter(tpm=1000, window_s=30.0)

    async def main() -> float:
        first = await limiter.acquire(900)
        waiter = asyncio.ensure_future(limiter.acquire(800))
        await asyncio.sleep(0.05)
        assert not waiter.done()  # 900 + 800 do not fit
        start = time.perf_counter()
        limiter.settle(first, 100)
        await asyncio.wait_for(waiter, timeout=2.0)
        return time.perf_counter() - start

    assert asyncio.run(main()) < 0.5


def test_a_request_larger_than_the_budget_goes_alone_once_the_window_is_empty() -> None:
    clock = FakeClock()
    limiter = RateLimiter(tpm=100, clock=clock, sleep=clock.sleep)
    assert _times(limiter, clock, [50, 5000, 10]) == [0.0, 60.0, 120.0]


def test_both_limits_apply_together() -> None:
    clock = FakeClock()
    limiter = RateLimiter(rpm=60, tpm=100, clock=clock, sleep=clock.sleep)
    # rpm alone: 0, 1, 2; tpm: the third (60 + 60 + 60 > 100) waits for the first to leave at 60 s.
    assert _times(limiter, clock, [60, 30, 60]) == [0.0, 1.0, 60.0]


def test_one_limiter_serves_one_event_loop_after_another() -> None:
    # sv eval runs each environment and model in its own asyncio.run; a lock bound to the first loop would fail.
    limiter = RateLimiter(rpm=6000, window_s=60.0)

    async def burst() -> None:
        await asyncio.gather(*(limiter.acquire() for _ in range(3)))

    asyncio.run(burst())
    asyncio.run(burst())
    assert limiter.requests == 6


def test_no_limit_never_waits_and_bad_limits_are_refused() -> None:
    clock = FakeClock()
    limiter = RateLimiter(clock=clock, sleep=clock.sleep)
    assert not limiter.active
    assert _times(limiter, clock, [10**9] * 50) == [0.0] * 50
    with pytest.raises(ValueError, match="at least 1"):
        RateLimiter(rpm=0)
    with pytest.raises(ValueError, match="at least 1"):
        RateLimiter(tpm=0)


def test_the_token_estimate_bounds_prompt_tools_and_reply() -> None:
    calls = [{"id": "1", "type": "function", "function": {"name": "scan", "arguments": "{}"}}]
    tools = [{"type": "function", "function": {"name": "scan"}}]
    messages = [{"role": "user", "content": "abcé"},  # 5 UTF-8 bytes: é takes 2
                {"role": "assistant", "content": None, "tool_calls": calls}]
    expected = 5 + len(json.dumps(calls)) + len(json.dumps(tools)) + 2 * MESSAGE_OVERHEAD_TOKENS + 100
    assert estimate_tokens(messages, tools, 100) == expected


def _timed(arrivals: list[float]) -> Any:
    """A fake server's reply that notes when each request arrived."""
    def reply(request: dict[str, Any]) -> str:
        arrivals.append(time.perf_counter())
        return echo(request)

    return reply


def test_the_policy_spaces_requests_by_rpm_and_the_cache_is_not_limited(tmp_path: Path) -> None:
    arrivals: list[float] = []
    with FakeOpenAIServer(_timed(arrivals)) as server:
        cache = ResponseCache(tmp_path / "cache.sqlite")
        policy = OpenAIChatPolicy("m", endpoint=Endpoint(base_url=server.base_url, rpm=2), cache=cache)
        assert policy.limiter.rpm == 2 and policy.describe()["rpm"] == 2
        policy.limiter.window_s = 0.4  # 2 requests per 0.4 s (0.2 s apart) instead of per minute: a short test

        async def main() -> float:
            await asyncio.gather(*(policy.respond(ITEM, MESSAGES, None, sample) for sample in range(5)))
            start = time.perf_counter()
            await asyncio.gather(*(policy.respond(ITEM, MESSAGES, None, sample) for sample in range(5)))
            await policy.aclose()
            return time.perf_counter() - start

        cached = asyncio.run(main())
        cache.close()
    assert server.request_count == 5  # the second round came from the cache
    gaps = [later - earlier for earlier, later in zip(arrivals, arrivals[1:], strict=False)]
    assert len(gaps) == 4 and min(gaps) >= 0.18  # 0.2 s apart, less the server's own jitter
    assert cached < 0.15  # five cached answers: no request, no wait (the spacing alone would be 0.8 s)
    assert policy.limiter.requests == 5


def test_the_clients_retries_wait_their_turn_too() -> None:
    arrivals: list[float] = []
    with FakeOpenAIServer(_timed(arrivals)) as server:
        server.fail_next(429, 500)  # answered with retry-after-ms: 1, so the client itself barely waits
        policy = OpenAIChatPolicy("m", endpoint=Endpoint(base_url=server.base_url, rpm=2, max_retries=2))
        policy.limiter.window_s = 0.6  # 0.3 s apart

        async def main() -> float:
            start = time.perf_counter()
            await policy.respond(ITEM, MESSAGES, None, 0)
            await policy.aclose()
            return time.perf_counter() - start

        elapsed = asyncio.run(main())
    assert server.request_count == 3  # two refused attempts and the answered one
    assert elapsed >= 0.58  # three attempts 0.3 s apart: the third at 0.6 s
    assert policy.limiter.requests == 3


def test_the_answered_attempt_is_settled_at_the_replys_usage() -> None:
    reply = {"content": "ok", "usage": {"prompt_tokens": 7, "completion_tokens": 3}}
    with FakeOpenAIServer(lambda request: reply) as server:
        server.fail_next(500)
        policy = OpenAIChatPolicy("m", endpoint=Endpoint(base_url=server.base_url, tpm=10**6, max_retries=1))

        async def main() -> None:
            await policy.respond(ITEM, MESSAGES, None, 0)
            await policy.aclose()

        asyncio.run(main())
    estimate = estimate_tokens([m.to_openai() for m in MESSAGES], None, policy.sampling.max_tokens)
    # The refused attempt keeps its estimate (a provider may count it); the answered one counts what it used.
    assert [r.tokens for r in policy.limiter._admitted] == [estimate, 10]
