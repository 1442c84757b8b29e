"""What every mutation operator shares: the :class:`Operator` record and the fake secrets it plants.

Fake secrets are drawn from the item's seeded ``random.Random`` so that they match the semgrep rules
(``AKIA`` + 16 base32 characters, a PEM ``PRIVATE KEY`` block, a password literal) while being
obviously invented: they never equal a documented example key and carry no real key material.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: A base under mutation (``templates_k8s.K8sBase`` or ``templates_tf.TFBase``).
Base = Any


@dataclass(frozen=True)
class Operator:
    """Injects exactly one misconfiguration of ``rule_id`` into one resource of a base.

    ``targets(base)`` lists the resource identities where the operator is meaningful (and not yet
    violated); ``apply(base, resource, rng)`` edits the base in place so that the oracle reports
    ``(rule_id, resource)`` and nothing else new. ``also``: rules that the same edit necessarily violates on
    the same resource (removing a bucket's encryption also removes its customer-managed key); they are
    injected, labelled and self-checked with it. ``spillover(base, resource)``: the (rule, resource) pairs on
    *other* resources that the edit necessarily violates, read from the edited base (deleting a namespace's
    NetworkPolicies leaves each of its pods unselected by any policy); injected and labelled the same way.
    """

    rule_id: str
    platform: str  # "kubernetes" or "terraform"
    targets: Callable[[Base], list[str]]
    apply: Callable[[Base, str, random.Random], None]
    also: tuple[str, ...] = ()
    spillover: Callable[[Base, str], list[tuple[str, str]]] | None = None

    @property
    def rules(self) -> tuple[str, ...]:
        """Every rule the operator injects on its own resource: its own first."""
        return (self.rule_id, *self.also)

    def injected(self, base: Base, resource: str) -> list[tuple[str, str]]:
        """The (rule, resource) pairs the operator injected into ``base`` (call it right after :attr:`apply`)."""
        pairs = {(rule, resource) for rule in self.rules}
        if self.spillover is not None:
            pairs.update(self.spillover(base, resource))
        return sorted(pairs)


_BASE32 = string.ascii_uppercase + "234567"
_B64 = string.ascii_letters + string.digits + "+/"


def fake_aws_key_id(rng: random.Random) -> str:
    """``AKIA`` + 16 base32 characters: the shape of a long-term access key id (invented)."""
    return "AKIA" + "".join(rng.choice(_BASE32) for _ in range(16))


def fake_aws_secret(rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_letters + string.digits + "/+") for _ in range(40))


def fake_pem(rng: random.Random) -> str:
    """A PEM private-key block of random base64 (not a key: it would not even decode to valid DER)."""
    kind = rng.choice(("RSA ", "EC ", "", "OPENSSH "))
    lines = ["".join(rng.choice(_B64) for _ in range(64)) for _ in range(rng.randint(5, 9))]
    lines.append("".join(rng.choice(_B64) for _ in range(rng.randint(8, 40))) + "==")
    return "\n".join([f"-----BEGIN {kind}PRIVATE KEY-----", *lines, f"-----END {kind}PRIVATE KEY-----"]) + "\n"


def fake_password(rng: random.Random) -> str:
    """A human-looking password literal (letters, digits, a symbol); never an ``AKIA`` key by construction."""
    words = ("summer", "Winter", "dragon", "Welcome", "admin", "Passw0rd", "letmein", "Spring", "monkey", "acme")
    return rng.choice(words) + str(rng.randint(10, 9999)) + rng.choice("!#$%&*?@")


def fake_token(rng: random.Random, prefix: str = "") -> str:
    """A random API-token-looking string (lowercase and digits, so it can never look like an AWS key)."""
    return prefix + "".join(rng.choice(string.ascii_lowercase + string.digits) for _ in range(rng.choice((24, 32,
                                                                                                        40))))
