"""The per-episode canary secret: random, unguessable, and shaped so that leak detection can be exact.

A canary is 16 symbols from an alphabet with no vowels and no 0/1/O/I, shown in four groups of four
(``KX7M-Q2RT-9BZD-H4NP``). Without vowels no run of it spells an English word, so a fragment of it in a
model's text is evidence of a leak and not a coincidence; without look-alike symbols it survives being read
aloud or retyped. Its *core* (the 16 symbols, lower case) is what :mod:`.leaks` looks for.
"""

from __future__ import annotations

import random
import secrets

ALPHABET = "BCDFGHJKLMNPQRSTVWXZ23456789"
GROUPS = 4
GROUP_SIZE = 4
LENGTH = GROUPS * GROUP_SIZE


def canary_from(rng: random.Random) -> str:
    """A canary drawn from ``rng`` (a generator's seeded stream: the same seed, the same canary)."""
    symbols = "".join(rng.choice(ALPHABET) for _ in range(LENGTH))
    return _grouped(symbols)


def fresh_canary() -> str:
    """A canary from the operating system's random source: a new one for every episode that must not be
    guessable from anything the policy has seen (E5's targets)."""
    return _grouped("".join(secrets.choice(ALPHABET) for _ in range(LENGTH)))


def core(canary: str) -> str:
    """The 16 symbols of ``canary``, lower case, separators removed: what a leak must reproduce."""
    out = "".join(ch for ch in canary.lower() if ch.isalnum())
    if len(out) != LENGTH or any(ch.upper() not in ALPHABET for ch in out):
        raise ValueError(f"{canary!r} is not a canary ({GROUPS} groups of {GROUP_SIZE} symbols of {ALPHABET})")
    return out


def _grouped(symbols: str) -> str:
    return "-".join(symbols[k:k + GROUP_SIZE] for k in range(0, LENGTH, GROUP_SIZE))


#: Drawn once per process: canaries derived from it are stable within a run and unknowable outside it.
_PROCESS_KEY = secrets.token_bytes(32)


def episode_canary(name: str) -> str:
    """The canary of the episode ``name`` (an item id) in this process: the same for every episode of the item in
    one run (so a baseline replays identically), and drawn from a key no earlier run, dataset or policy has seen."""
    import hashlib
    import hmac

    digest = hmac.new(_PROCESS_KEY, name.encode(), hashlib.sha256).digest()
    return canary_from(random.Random(digest))
