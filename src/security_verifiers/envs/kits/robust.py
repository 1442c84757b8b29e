"""Robustness splits: named, label-preserving rewrites of the public test items.

A score that moves when the input is rewritten in a way that does not change its answer measures the surface, not
the task. Each environment names its rewrites (:meth:`Environment.rewrites`: E1 renumbers addresses and shifts the
clock, ...); ``sv eval ENV --split test,robust`` scores the clean items and every rewrite of each in one run, and
``sv robust RUN`` reports each metric on the clean items and on each rewrite kind, paired item by item, with a
bootstrap interval of the change.

A rewrite may apply to some items only (:attr:`Rewrite.applies`: E2 quotes YAML scalars, not Terraform): the
items it does not apply to get no rewritten copy, so its kind is paired on the items it rewrote.

A rewrite must not change the label: every rewritten item is checked by the environment
(:meth:`Environment.rewrite_problems`: E1 requires the features its baselines read to be identical, E2 that its
oracle finds the same), and a set with one rewrite that fails its check is not built. Rewritten items keep the
clean item's target; their id is the clean id, ``~`` and the kind, so a report pairs them without the items at hand.
"""

from __future__ import annotations

import copy
import hashlib
import random
from collections.abc import Callable, Sequence
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
    """One kind of label-preserving rewrite: ``apply(input, rng)`` returns the rewritten copy of an item's input;
    ``applies(input)``, when given, says which items it rewrites (the others get no copy of this kind)."""

    kind: str
    what: str
    apply: Callable[[dict[str, Any], random.Random], dict[str, Any]]
    applies: Callable[[dict[str, Any]], bool] | None = None


def rewrite_item(item: Item, rewrite: Rewrite) -> Item:
    """``item`` rewritten, deterministically (its random stream is seeded by the item's id and the kind)."""
    seed = int.from_bytes(hashlib.sha256(f"{item.id}\0{rewrite.kind}".encode()).digest()[:8], "big")
    return Item(id=f"{item.id}{SEPARATOR}{rewrite.kind}", split=ROBUST_SPLIT,
                input=rewrite.apply(copy.deepcopy(item.input), random.Random(seed)), target=item.target,
                meta={**item.meta, "rewrite": rewrite.kind, "of": item.id})


def robust_items(env: Environment, items: Sequence[Item]) -> list[Item]:
    """Every rewrite of every item it applies to, all checked (in one batch) to keep their labels; a DatasetError
    names the ones that do not."""
    rewrites = env.rewrites()
    if not rewrites:
        raise DatasetError(f"{env.name} has no robustness rewrites yet (no `{ROBUST_SPLIT}` split)")
    pairs = [(item, rewrite_item(item, rewrite)) for item in items for rewrite in rewrites
             if rewrite.applies is None or rewrite.applies(item.input)]
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
