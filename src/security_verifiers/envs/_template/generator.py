"""The template's item generator: one summary line of an SSH server's failed logins from one address.

Each item draws a family (:data:`items.FAMILIES`), the family draws the line's numbers, and the label follows
the family (for ``stale_credentials``, the one family a line cannot settle, it is drawn with the family's
probability, stored as the target's ``p_attack``). Every split has its own random stream, seeded from the
split, the seed and the generator version, so the same seed always gives the same items and two splits never
share them by accident.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from typing import Literal

from security_verifiers.core.datasets import item_id
from security_verifiers.core.types import Item

GENERATOR_VERSION = "1.0.0"
SPLITS = ("train", "dev", "test")
#: The address block of the company's own hosts; everything else is outside.
INTERNAL_PREFIX = "10."


@dataclass(frozen=True)
class Family:
    name: str
    weight: float
    p_attack: float
    internal: bool
    users: tuple[int, int]
    guesses_per_user: tuple[int, int]
    seconds: tuple[int, int]
    p_success: float
    difficulty: Literal["easy", "ambiguous"]


FAMILY_MODELS: tuple[Family, ...] = (
    Family("brute_force", 0.3, 1.0, False, (1, 2), (15, 150), (20, 600), 0.1, "easy"),
    Family("password_spray", 0.2, 1.0, False, (10, 60), (1, 2), (120, 3600), 0.05, "easy"),
    Family("typo", 0.3, 0.0, True, (1, 1), (1, 4), (3, 60), 1.0, "easy"),
    Family("stale_credentials", 0.2, 0.3, True, (1, 1), (10, 120), (600, 7200), 0.0, "ambiguous"),
)


def _seeded(split: str, seed: int) -> random.Random:
    digest = hashlib.sha256(f"template:{GENERATOR_VERSION}:{split}:{seed}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _address(rng: random.Random, internal: bool) -> str:
    if internal:
        return f"10.{rng.randint(0, 40)}.{rng.randint(0, 255)}.{rng.randint(2, 254)}"
    return f"{rng.choice((198, 203, 185, 45))}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(2, 254)}"


def line_of(rng: random.Random, family: Family) -> str:
    """A summary line as the template's log pipeline writes it."""
    users = rng.randint(*family.users)
    failures = users * rng.randint(*family.guesses_per_user)
    success = "then a successful login" if rng.random() < family.p_success else "no successful login"
    host = f"{rng.choice(('web', 'db', 'bastion', 'ci', 'mail'))}-{rng.randint(1, 9):02d}"
    return (f"sshd on {host}: {failures} failed logins for {users} user name{'s' if users > 1 else ''} from "
            f"{_address(rng, family.internal)} in {rng.randint(*family.seconds)} s, {success}")


def generate(split: str, n: int, seed: int) -> list[Item]:
    """``n`` items of ``split``, deterministic in ``seed``."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; choose from {', '.join(SPLITS)}")
    rng = _seeded(split, seed)
    items = []
    for k in range(n):
        family = rng.choices(FAMILY_MODELS, [f.weight for f in FAMILY_MODELS])[0]
        line = line_of(rng, family)
        label = "Attack" if rng.random() < family.p_attack else "Benign"
        target = {"label": label, "family": family.name, "p_attack": family.p_attack}
        items.append(Item(id=item_id("tpl", {"split": split, "seed": seed, "k": k, "line": line}), split=split,
                          input={"line": line}, target=target,
                          meta={"generator_version": GENERATOR_VERSION, "difficulty": family.difficulty}))
    return items
