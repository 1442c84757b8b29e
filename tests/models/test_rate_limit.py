"""``--rpm`` / ``--tpm``: the limiter's window on a fake clock, and the OpenAI policy spacing real requests."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from security_verifiers.core.cache import ResponseCache
from security_verifiers.core.types import Item, Message
from security_verifiers.models.base import Endpoint
from security_verifiers.models.openai_compat import OpenAIChatPolicy
from security_verifiers.models.rate_limit import RateLimiter, estimate_tokens
from tests.fakeserver import FakeOpenAIServer

ITEM = Item(id="i1", split="dev", input={}, target={})


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds


def _times(limiter: RateLimiter, clock: FakeClock, tokens: list[int]) -> list[float]:
    async def main() -> list[float]:
        admitted = []
        for n in tokens:
            await limiter.acquire(n)
            admitted.append(clock.now)
        return admitted

    return asyncio.run(main())


def test_rpm_admits_at_most_rpm_requests_in_any_window() -> None:
    clock = FakeClock()
    limiter = RateLimiter(rpm=3, clock=clock, sleep=clock.sleep)
    assert _times(limiter, clock, [0] * 7) == [0.0, 0.0, 0.0, 60.0, 60.0, 60.0, 120.0]
    assert limiter.waited_s == 120.0


def test_tpm_waits_for_enough_tokens_to_leave_the_window_and_settling_frees_them() -> None:
    clock = FakeClock()
    limiter = RateLimiter(tpm=1000, clock=clock, sleep=clock.sleep)
    assert _times(limiter, clock, [600, 300, 200]) == [0.0, 0.0, 60.0]

    clock, settled = FakeClock(), []
    limiter = RateLimiter(tpm=1000, clock=clock, sleep=clock.sleep)

    async def main() -> None:
        first = await limiter.acquire(900)  # an estimate: the reply reports 100 tokens
        limiter.settle(first, 100)
        await limiter.acquire(800)
        settled.append(clock.now)

    asyncio.run(main())
    assert settled == [0.0]


def test_a_request_larger_than_the_budget_goes_alone_once_the_window_is_empty() -> None:
    clock = FakeClock()
    limiter = RateLimiter(tpm=100, clock=clock, sleep=clock.sleep)
    assert _times(limiter, clock, [50, 5000, 10]) == [0.0, 60.0, 120.0]


def test_no_limit_never_waits_and_bad_limits_are_refused() -> None:
    clock = FakeClock()
    assert _times(RateLimiter(clock=clock, sleep=clock.sleep), clock, [10**9] * 50) == [0.0] * 50
    with pytest.raises(ValueError, match="at least 1"):
        RateLimiter(rpm=0)


def test_the_token_estimate_is_an_upper_bound_of_prompt_and_reply() -> None:
    messages = [{"role": "user", "content": "abcd"}, {"role": "assistant", "content": None,
                                                      "tool_calls": [{"id": "1"}]}]
    assert estimate_tokens(messages, 100) == 4 + len(str({"id": "1"})) + 100


def test_the_policy_spaces_requests_and_the_cache_is_not_limited(tmp_path: Path) -> None:
    messages = [Message(role="user", content="hello")]
    with FakeOpenAIServer() as server:
        cache = ResponseCache(tmp_path / "cache.sqlite")
        policy = OpenAIChatPolicy("m", endpoint=Endpoint(base_url=server.base_url, rpm=2), cache=cache)
        assert policy.limiter.rpm == 2
        policy.limiter.window_s = 0.4  # two requests per 0.4 s instead of per minute, to keep the test short

        async def main() -> tuple[float, float]:
            start = time.perf_counter()
            await asyncio.gather(*(policy.respond(ITEM, messages, None, sample) for sample in range(5)))
            fresh = time.perf_counter() - start
            start = time.perf_counter()
            await asyncio.gather(*(policy.respond(ITEM, messages, None, sample) for sample in range(5)))
            await policy.aclose()
            return fresh, time.perf_counter() - start

        fresh, cached = asyncio.run(main())
        cache.close()
    assert server.request_count == 5
    assert fresh >= 0.8  # 5 requests at 2 per 0.4 s: admitted at 0, 0, 0.4, 0.4, 0.8
    assert cached < 0.3  # answered from the cache: no request, no wait
