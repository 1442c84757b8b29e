"""E3's item generator: programs from every family, balanced by weakness, each checked before it is kept.

``train``, ``dev`` and ``test`` draw from the families' in-distribution variants; ``ood`` only from their
``ood_variants`` (program shapes and weakness forms never seen in training). Items cycle through the families in a
shuffled order, so every split holds each weakness about equally often; each item has its own random stream,
seeded from the split, the seed, its index and the generator version, so the same seed gives the same items.

Every program passes the self-check (:mod:`.selfcheck`: it runs the vulnerable version and the reference fix in the
sandbox) before it becomes an item: a program that fails it is a bug in its family and stops the build, naming it.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable

from security_verifiers.core.datasets import item_id
from security_verifiers.core.errors import DatasetError
from security_verifiers.core.progress import advance
from security_verifiers.core.types import Item
from security_verifiers.envs.code_repair.families import Family, families
from security_verifiers.envs.code_repair.program import Program, as_target
from security_verifiers.envs.code_repair.selfcheck import self_check

GENERATOR_VERSION = "2.0.0"
SPLITS = ("train", "dev", "test", "ood")
#: How many programs one self-check batch holds (progress is reported per batch).
CHECK_BATCH = 32


def _rng(*parts: object) -> random.Random:
    digest = hashlib.sha256(":".join(["code-repair", GENERATOR_VERSION, *map(str, parts)]).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def variants_of(family: Family, split: str) -> tuple[str, ...]:
    return family.ood_variants if split == "ood" else family.variants


def programs(split: str, n: int, seed: int) -> list[Program]:
    """``n`` programs of ``split`` (unchecked): the families in turn, a variant each, all from ``seed``."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; choose from {', '.join(SPLITS)}")
    names = sorted(families())
    out: list[Program] = []
    order: list[str] = []
    for k in range(n):
        if not order:
            order = names[:]
            _rng(split, seed, "order", k).shuffle(order)
        family = families()[order.pop()]
        rng = _rng(split, seed, k)
        variant = rng.choice(variants_of(family, split))
        out.append(family.build(rng, variant))
    return out


def to_item(program: Program, split: str, origin: dict[str, object]) -> Item:
    return Item(id=item_id("cr", {"files": program.files, "cwe": program.cwe, **origin}), split=split,
                input={"files": program.files, "description": program.description}, target=as_target(program),
                meta={"generator_version": GENERATOR_VERSION, "lines": program.lines(), "domain": program.domain})


def generate(split: str, n: int, seed: int, progress: Callable[[int, int], None] | None = None) -> list[Item]:
    """``n`` self-checked items of ``split``, deterministic in ``seed``."""
    built = programs(split, n, seed)
    for start in range(0, len(built), CHECK_BATCH):
        batch = built[start:start + CHECK_BATCH]
        for offset, (program, result) in enumerate(zip(batch, self_check(batch), strict=True)):
            if not result.ok:
                raise DatasetError(f"code-repair generator: item {start + offset} of {split} (seed {seed}), family "
                                   f"{program.family} variant {program.variant}, fails its self-check: "
                                   f"{'; '.join(result.problems)}")
            built[start + offset] = program.model_copy(update={
                "trivial": sorted(result.trivial),
                "static_ids": sorted({*program.static_ids, *result.semgrep_rules})})
        if progress is not None:
            progress(min(start + CHECK_BATCH, len(built)), len(built))
        advance(min(start + CHECK_BATCH, len(built)), len(built), "self-checking programs")
    return [to_item(p, split, {"split": split, "seed": seed, "k": k}) for k, p in enumerate(built)]
