"""``--rpm`` / ``--tpm``: stay under a provider's requests and tokens per minute instead of drawing its 429s.

Requests are spaced evenly, ``60 / rpm`` seconds apart, rather than let through ``rpm`` at once and then stopped for
the rest of the minute: the same rate over a minute, and still under the limit where a provider enforces it over
shorter periods (OpenAI documents 60 rpm as possibly enforced as 1 per second). Any 60 s then holds at most
``rpm`` requests.

Tokens are counted over a rolling 60 s, as providers count them. A request's tokens are not known before its
reply, so it reserves an upper bound (:func:`estimate_tokens`: its prompt at one token per UTF-8 byte, which a
byte-level tokenizer cannot exceed, plus the whole reply budget ``max_tokens``) and the reservation is replaced
by the tokens the reply reports (:meth:`RateLimiter.settle`), which wakes the requests waiting for room. A
request that fails keeps its reservation, as a provider may have counted it. The bound is chosen over a guess
because a low guess draws the 429s the limit is there to avoid; settling gives the surplus back as soon as the
reply comes, so it costs throughput only while requests are in flight.

Callers wait in the order they asked (one lock), so a large request is not starved by small ones. The limiter
only delays: concurrency is unchanged. :class:`~security_verifiers.models.openai_compat.OpenAIChatPolicy` admits
every HTTP attempt, the ``openai`` client's retries included (providers count refused requests against the
limit too).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

WINDOW_S = 60.0
#: Tokens a chat template adds around each message (role markers, separators): 3 to 4 in OpenAI's; 8 is above
#: the templates of the open models served by vLLM too.
MESSAGE_OVERHEAD_TOKENS = 8


@dataclass
class Reservation:
    """One admitted request: when, and how many tokens it counts for (the estimate until settled)."""

    at: float
    tokens: int


class RateLimiter:
    """Admits requests under ``rpm`` and ``tpm`` (``None``: no limit) per ``window_s`` seconds.

    ``clock`` and ``sleep`` are injectable so tests run on a fake clock; ``window_s`` is 60 s except in tests.
    """

    def __init__(self, rpm: int | None = None, tpm: int | None = None, *, window_s: float = WINDOW_S,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        if rpm is not None and rpm < 1 or tpm is not None and tpm < 1:
            raise ValueError("rpm and tpm must be at least 1 (or None: unlimited)")
        self.rpm, self.tpm, self.window_s = rpm, tpm, window_s
        self._clock, self._sleep = clock, sleep
        self._admitted: deque[Reservation] = deque()
        self._last_at: float | None = None
        # Made on first use, inside the event loop that uses them (again in another: a policy may serve several).
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock: asyncio.Lock | None = None
        self._settled: asyncio.Event | None = None
        #: Requests admitted and seconds callers spent waiting, in all: what the limit cost the run.
        self.requests = 0
        self.waited_s = 0.0

    @property
    def active(self) -> bool:
        return self.rpm is not None or self.tpm is not None

    def _expire(self, now: float) -> None:
        while self._admitted and self._admitted[0].at <= now - self.window_s:
            self._admitted.popleft()

    def _wait_for(self, tokens: int, now: float) -> float:
        """Seconds until a request of ``tokens`` may go (0: now)."""
        waits = [0.0]
        if self.rpm is not None and self._last_at is not None:
            waits.append(self._last_at + self.window_s / self.rpm - now)
        if self.tpm is not None and self._admitted:
            # A request larger than the whole budget goes alone, once the window is empty.
            excess = sum(r.tokens for r in self._admitted) + min(tokens, self.tpm) - self.tpm
            for reservation in self._admitted:
                if excess <= 0:
                    break
                excess -= reservation.tokens
                waits.append(reservation.at + self.window_s - now)
        return max(waits)

    async def acquire(self, tokens: int = 0) -> Reservation:
        """Wait until a request estimated at ``tokens`` fits both limits; returns its reservation for
        :meth:`settle`."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop or self._lock is None:  # a lock is bound to the loop it first waited in
            self._loop, self._lock, self._settled = loop, asyncio.Lock(), asyncio.Event()
        async with self._lock:
            while True:
                now = self._clock()
                self._expire(now)
                wait = self._wait_for(tokens, now)
                if wait <= 0:
                    reservation = Reservation(at=now, tokens=tokens)
                    self._admitted.append(reservation)
                    self._last_at = now
                    self.requests += 1
                    return reservation
                await self._pause(wait)
                self.waited_s += self._clock() - now

    async def _pause(self, seconds: float) -> None:
        """Sleep ``seconds``, or less if a reply settles its reservation meanwhile (it may free enough tokens)."""
        assert self._settled is not None
        self._settled.clear()
        sleeping = asyncio.ensure_future(self._sleep(seconds))
        if self.tpm is None:  # nothing to settle: spacing alone
            await sleeping
            return
        settled = asyncio.ensure_future(self._settled.wait())
        try:
            await asyncio.wait({sleeping, settled}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (sleeping, settled):
                task.cancel()

    def settle(self, reservation: Reservation, tokens: int) -> None:
        """Count the request for the tokens its reply reports instead of the estimate, and wake the waiters."""
        reservation.tokens = tokens
        if self._settled is not None:
            self._settled.set()


def estimate_tokens(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, max_tokens: int) -> int:
    """A request's tokens as an upper bound: one per UTF-8 byte of the messages (tool calls included) and of the
    tool schemas, a chat template's markers per message, and the whole reply budget.

    >>> estimate_tokens([{"role": "user", "content": "héllo"}], None, 100)
    114
    """
    size = 0
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            size += len(content.encode())
        elif content is not None:  # a list of parts
            size += len(json.dumps(content, ensure_ascii=False).encode())
        if message.get("tool_calls"):
            size += len(json.dumps(message["tool_calls"], ensure_ascii=False).encode())
        size += MESSAGE_OVERHEAD_TOKENS
    if tools:
        size += len(json.dumps(tools, ensure_ascii=False).encode())
    return size + max_tokens
