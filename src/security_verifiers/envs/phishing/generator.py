"""Deterministic generator of E4 items: one raw RFC 5322 message to classify, and the recipient's organisation.

Each item is a message of one family (:mod:`families`, :mod:`legit`) written for one fictional organisation
(:mod:`world`) and encoded by the standard library (:mod:`mime`). The ``ood`` split is written for other
organisations, with phishing lures never used in the other splits (OAuth consent, reply-chain hijack, IDN
homographs) and two legitimate kinds of its own. Only ``random.Random`` instances seeded from a SHA-256 of the
split and seed are used, so the output is byte-identical on every machine.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import random

from security_verifiers.core.errors import DatasetError
from security_verifiers.core.types import Item
from security_verifiers.envs.phishing.families import FAMILIES, Family
from security_verifiers.envs.phishing.items import PhishingInput, PhishingTarget
from security_verifiers.envs.phishing.message import parse
from security_verifiers.envs.phishing.text import Ctx
from security_verifiers.envs.phishing.verifiers import Context, confirm
from security_verifiers.envs.phishing.world import IN_DIST_ORGS, OOD_ORGS, Organisation

GENERATOR_VERSION = "1.1.0"
SPLITS = ("train", "dev", "test", "ood")
IN_DIST_FAMILIES = tuple(f for f in FAMILIES if not f.ood)
OOD_FAMILIES = tuple(f for f in FAMILIES if f.ood or f.shared)
#: Families that appear in the ``ood`` split only.
OOD_ONLY = frozenset(f.name for f in FAMILIES if f.ood)

_T_START = dt.datetime(2024, 1, 8, tzinfo=dt.UTC)
_T_SPAN = 540 * 86400
_OFFSETS = (-8, -7, -5, -4, 0, 0, 0, 1, 1, 2, 3, 5.5, 8, 9, 10)


def _seeded(split: str, seed: int) -> random.Random:
    """The split's own stream: a SHA-256 of split and seed, so splits never share items by accident."""
    digest = hashlib.sha256(f"phishing:{GENERATOR_VERSION}:{split}:{seed}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _make_item(rng: random.Random, split: str, index: int, orgs: tuple[Organisation, ...],
               families: tuple[Family, ...]) -> Item:
    family = rng.choices(families, [f.weight for f in families])[0]
    org = rng.choice(orgs)
    tz = dt.timezone(dt.timedelta(hours=rng.choice(_OFFSETS)))
    when = (_T_START + dt.timedelta(seconds=rng.randrange(_T_SPAN))).astimezone(tz)
    draft = family.build(Ctx(rng, org, rng.choice(org.staff), when))
    inp = PhishingInput.model_validate({"raw": draft.raw, "raw_encoding": "text", "mailbox": org.mailbox()})
    target = PhishingTarget.model_validate({"label": draft.label, "family": draft.family, "source": "generated",
                                            "planted": [{"indicator": i, "quote": q} for i, q in draft.planted]})
    self_check(inp, target, f"{split} #{index} ({family.name})")
    return Item(id=f"phishing-{split}-{index:06d}", split=split, input=inp.model_dump(mode="json"),
                target=target.model_dump(mode="json"),
                meta={"generator_version": GENERATOR_VERSION, "difficulty": draft.difficulty, "lure": draft.lure,
                      "organisation": org.name})


def self_check(inp: PhishingInput, target: PhishingTarget, where: str) -> None:
    """Every planted piece of evidence is confirmed by the scorer's own verifier on the parsed message: an item
    whose reference answer the scorer would reject is a generator bug, raised here rather than shipped."""
    ctx = Context(mail=parse(inp.message_bytes()), mailbox=inp.mailbox, planted=target.planted)
    for planted in target.planted:
        if not confirm(planted.indicator, planted.quote, ctx):
            raise DatasetError(f"generator bug in {where}: planted {planted.indicator} {planted.quote!r} is not "
                               "confirmed by its verifier")


def generate(split: str, n: int, seed: int) -> list[Item]:
    """``n`` items of ``split``, a pure function of its arguments (and of :data:`GENERATOR_VERSION`)."""
    if split not in SPLITS:
        raise DatasetError(f"unknown split {split!r} for phishing; choose from {', '.join(SPLITS)}")
    if n < 0:
        raise DatasetError(f"n must be non-negative, got {n}")
    orgs, families = (OOD_ORGS, OOD_FAMILIES) if split == "ood" else (IN_DIST_ORGS, IN_DIST_FAMILIES)
    rng = _seeded(split, seed)
    return [_make_item(random.Random(rng.getrandbits(64)), split, i, orgs, families) for i in range(n)]
