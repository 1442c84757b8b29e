"""``--rpm`` / ``--tpm``: stay under a provider's requests and tokens per minute instead of hitting its 429s.

Providers count both over a rolling minute, so the limiter keeps the requests it let through in the last 60 s
with their tokens. A request's tokens are not known before its reply, so it reserves an estimate that cannot be
low (its prompt at one token per character, which no tokenizer exceeds for these texts, plus the whole
``max_tokens`` budget) and the reservation is replaced by the reply's reported usage when it comes back; a failed
request keeps its reservation, as a provider counts it. Callers wait in the order they asked (one lock), so a
large request is not starved by small ones. The limiter only delays requests; concurrency is unchanged. Retries
the ``openai`` client makes inside one request follow the server's ``retry-after`` and are not counted here.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

WINDOW_S = 60.0


@dataclass
class Reservation:
    """One admitted request: when, and how many tokens it counts for (the estimate until settled)."""

    at: float
    tokens: int


class RateLimiter:
    def __init__(self, rpm: int | None = None, tpm: int | None = None, *, window_s: float = WINDOW_S,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        if rpm is not None and rpm < 1 or tpm is not None and tpm < 1:
            raise ValueError("rpm and tpm must be at least 1 (or None: unlimited)")
        self.rpm, self.tpm, self.window_s = rpm, tpm, window_s
        self._clock, self._sleep = clock, sleep
        self._admitted: deque[Reservation] = deque()
        self._lock: asyncio.Lock | None = None
        #: Seconds callers spent waiting, in all: what the limit cost the run.
        self.waited_s = 0.0

    @property
    def active(self) -> bool:
        return self.rpm is not None or self.tpm is not None

    def _expire(self, now: float) -> None:
        while self._admitted and self._admitted[0].at <= now - self.window_s:
            self._admitted.popleft()

    def _wait_for(self, tokens: int, now: float) -> float:
        """Seconds until a request of ``tokens`` fits the window (0: now)."""
        waits = [0.0]
        if self.rpm is not None and len(self._admitted) >= self.rpm:
            waits.append(self._admitted[-self.rpm].at + self.window_s - now)
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
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            while True:
                now = self._clock()
                self._expire(now)
                wait = self._wait_for(tokens, now)
                if wait <= 0:
                    reservation = Reservation(at=now, tokens=tokens)
                    self._admitted.append(reservation)
                    return reservation
                self.waited_s += wait
                await self._sleep(wait)

    @staticmethod
    def settle(reservation: Reservation, tokens: int) -> None:
        """Count the request for the tokens its reply reports instead of the estimate."""
        reservation.tokens = tokens


def estimate_tokens(messages: list[dict], max_tokens: int) -> int:
    """A request's tokens as an upper bound: one per character of the messages' text, plus the reply's budget."""
    chars = 0
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            chars += len(content)
        elif isinstance(content, list):
            chars += sum(len(str(part.get("text", ""))) for part in content if isinstance(part, dict))
        for call in message.get("tool_calls") or ():
            chars += len(str(call))
    return chars + max_tokens
