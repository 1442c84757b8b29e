"""The robustness kit: rewrites that apply to some items only, and one batch check for the whole split."""

from __future__ import annotations

import random
from typing import Any

import pytest

from security_verifiers.core.errors import DatasetError
from security_verifiers.core.types import Item
from security_verifiers.envs.kits.robust import Rewrite, robust_items


def _upper(item_input: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    return {**item_input, "text": item_input["text"].upper()}


class _Env:
    """What ``robust_items`` reads of an environment: its name, its rewrites and its batch check."""

    name = "stub"

    def __init__(self, rewrites: tuple[Rewrite, ...], refuse: str | None = None) -> None:
        self._rewrites, self.refuse = rewrites, refuse
        self.batches: list[list[str]] = []

    def rewrites(self) -> tuple[Rewrite, ...]:
        return self._rewrites

    def rewrite_problems(self, pairs: list[tuple[Item, Item]]) -> list[str | None]:
        self.batches.append([new.id for _, new in pairs])
        return [("no" if new.id == self.refuse else None) for _, new in pairs]


ITEMS = [Item(id=f"i{n}", split="test", input={"kind": kind, "text": f"t{n}"}, target={"y": n})
         for n, kind in enumerate(("yaml", "hcl", "yaml"))]


def test_a_rewrite_that_applies_to_some_items_rewrites_only_those_checked_in_one_batch() -> None:
    env = _Env((Rewrite("everywhere", "all", _upper),
                Rewrite("yaml_only", "yaml", _upper, applies=lambda i: i["kind"] == "yaml")))
    out = robust_items(env, ITEMS)  # type: ignore[arg-type]
    assert [i.id for i in out] == ["i0~everywhere", "i0~yaml_only", "i1~everywhere", "i2~everywhere",
                                   "i2~yaml_only"]
    assert env.batches == [[i.id for i in out]]  # one call, every pair
    assert all(i.meta["rewrite"] == i.id.split("~")[1] and i.target == ITEMS[int(i.id[1])].target for i in out)


def test_one_refused_rewrite_refuses_the_split() -> None:
    env = _Env((Rewrite("yaml_only", "yaml", _upper, applies=lambda i: i["kind"] == "yaml"),), refuse="i2~yaml_only")
    with pytest.raises(DatasetError, match="1 stub rewrite.*first: i2~yaml_only: no"):
        robust_items(env, ITEMS)  # type: ignore[arg-type]
