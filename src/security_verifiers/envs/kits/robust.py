"""Robustness splits: named, label-preserving rewrites of the public test items.

A score that moves when the input is rewritten in a way that does not change its answer measures the surface, not
the task. Each environment names its rewrites (:meth:`Environment.rewrites`: E1 renumbers addresses and shifts the
clock, ...); ``sv eval ENV --split test,robust`` scores the clean items and every rewrite of each in one run, and
``sv robust RUN`` reports each metric on the clean items and on each rewrite kind, paired item by item, with a
bootstrap interval of the change.

A rewrite must not change the label: every rewritten item is checked by the environment
(:meth:`Environment.rewrite_problems`: E1 requires the features its baselines read to be identical), and a set with
one rewrite that fails its check is not built. Rewritten items keep the clean item's label: their target is the clean
item's, or, where the target points into the input (E3's weakness is a line of the source, its reference fix a
rewritten source), the clean target rewritten alike (:attr:`Rewrite.apply_item`). Their id is the clean id, ``~``
and the kind, so a report pairs them without the items at hand.

A rewrite that has nothing to change in an item (E4's base64 re-encoding of a message already in base64, E6's move
of an injection into another carrier on an item without one, E2's YAML quoting on a Terraform file) returns None
for it, and that item has no rewrite of that kind: a copy of the clean item would only pull the kind's change
towards 0. ``sv robust`` pairs each kind over the items it has.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from security_verifiers.core.errors import DatasetError
from security_verifiers.core.types import Item

if TYPE_CHECKING:
    from security_verifiers.envs.base import Environment

#: The split of rewritten items, built from the public ``test`` split.
ROBUST_SPLIT = "robust"
#: Between a clean item's id and the rewrite kind in a rewritten item's id.
SEPARATOR = "~"


@dataclass(frozen=True)
class Rewrite:
    """One kind of label-preserving rewrite: ``apply(input, rng)`` returns the rewritten copy of an item's input, or
    None where the rewrite does not apply to the item.

    A rewrite whose target points into the input gives ``apply_item(input, target, rng)`` instead, returning both
    rewritten with the one random draw (or None), e.g. E3 renames the vulnerable program and its reference fix with
    the same map."""

    kind: str
    what: str
    apply: Callable[[dict[str, Any], random.Random], dict[str, Any] | None] | None = None
    apply_item: Callable[[dict[str, Any], dict[str, Any], random.Random],
                         tuple[dict[str, Any], dict[str, Any]] | None] | None = None
    #: Which items it rewrites, when that is known from the input alone (E2 quotes YAML, not Terraform): the others
    #: get no copy of this kind, as when ``apply`` returns None.
    applies: Callable[[dict[str, Any]], bool] | None = None

    def __post_init__(self) -> None:
        if (self.apply is None) == (self.apply_item is None):
            raise ValueError(f"rewrite {self.kind!r} needs exactly one of apply and apply_item")

    def rewrite(self, item_input: dict[str, Any], target: dict[str, Any],
                rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """(input, target) rewritten (the target as it is unless the rewrite has ``apply_item``), or None."""
        if self.applies is not None and not self.applies(item_input):
            return None
        if self.apply_item is not None:
            return self.apply_item(item_input, target, rng)
        assert self.apply is not None
        new_input = self.apply(item_input, rng)
        return None if new_input is None else (new_input, target)


def rewrite_item(item: Item, rewrite: Rewrite) -> Item | None:
    """``item`` rewritten, deterministically (its random stream is seeded by the item's id and the kind); None where
    the rewrite does not apply to it."""
    seed = int.from_bytes(hashlib.sha256(f"{item.id}\0{rewrite.kind}".encode()).digest()[:8], "big")
    rewritten = rewrite.rewrite(copy.deepcopy(item.input), copy.deepcopy(item.target), random.Random(seed))
    if rewritten is None:
        return None
    new_input, target = rewritten
    return Item(id=f"{item.id}{SEPARATOR}{rewrite.kind}", split=ROBUST_SPLIT, input=new_input, target=target,
                meta={**item.meta, "rewrite": rewrite.kind, "of": item.id})


def rewrites_of(env: Environment, items: Sequence[Item]) -> Iterator[tuple[Item, Item]]:
    """(clean item, rewritten item) for each rewrite of each item in turn, made as they are asked for: making one is
    cheap, checking it may not be (E3 runs it in the sandbox), so the first n are made without the others."""
    rewrites = env.rewrites()
    if not rewrites:
        raise DatasetError(f"{env.name} has no robustness rewrites yet (no `{ROBUST_SPLIT}` split)")
    for item in items:
        for rewrite in rewrites:
            new = rewrite_item(item, rewrite)
            if new is not None:
                yield item, new


def robust_items(env: Environment, items: Sequence[Item], limit: int | None = None) -> list[Item]:
    """Every rewrite of every item it applies to, all checked (in one batch: a check may run tools or a sandbox) to
    keep their labels; a DatasetError names the ones that do not. ``limit``: the first that many only (``sv eval
    --limit N`` builds and checks no more than it scores)."""
    pairs = list(itertools.islice(rewrites_of(env, items), limit))
    checked = env.rewrite_problems(pairs)
    problems = [f"{new.id}: {problem}" for (_, new), problem in zip(pairs, checked, strict=True) if problem is not None]
    if problems:
        raise DatasetError(f"{len(problems)} {env.name} rewrite(s) would change what is scored (first: "
                           f"{problems[0]})")
    return [new for _, new in pairs]


def clean_id(item_id: str) -> tuple[str, str | None]:
    """(the clean item's id, the rewrite kind or None for a clean item)."""
    clean, sep, kind = item_id.rpartition(SEPARATOR)
    return (clean, kind) if sep else (item_id, None)
