"""``sv eval --shard i/N``: a stable split of a run's items into N parts, for batch systems without a cluster
manager (a Slurm array, a CI matrix): each part runs on its own machine and ``sv merge`` joins the parts.

An item's shard is a function of its id alone (sha256 of the id, modulo N), so the parts are disjoint, cover every
item, and do not move when the dataset is cut or reordered; each part keeps the dataset's order. A run records the
unsharded dataset (``of``: id, hash, size) with its shard, so that ``sv merge`` can check that the parts are of one
dataset and that none is missing.
"""

from __future__ import annotations

import hashlib
import re

from pydantic import BaseModel, ConfigDict, Field, model_validator

from security_verifiers.core.datasets import Dataset
from security_verifiers.core.errors import ConfigError

_SPEC = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


class Shard(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    index: int = Field(ge=0)
    count: int = Field(ge=1)

    @model_validator(mode="after")
    def _inside(self) -> Shard:
        if self.index >= self.count:
            raise ValueError(f"the index counts from 0 to {self.count - 1}")
        return self

    @classmethod
    def parse(cls, spec: str | None) -> Shard | None:
        """The shard ``--shard i/N`` names (None for the whole dataset); a bad value is a ConfigError."""
        if spec is None:
            return None
        match = _SPEC.match(str(spec))
        if match is None:
            raise ConfigError(f"--shard takes i/N (part i of N, counted from 0), got {spec!r}")
        try:
            return cls(index=int(match.group(1)), count=int(match.group(2)))
        except ValueError as err:
            raise ConfigError(f"--shard {spec}: {err.errors()[0]['msg'].removeprefix('Value error, ')}") from None

    def holds(self, item_id: str) -> bool:
        return int.from_bytes(hashlib.sha256(item_id.encode()).digest()[:8], "big") % self.count == self.index

    def select(self, dataset: Dataset) -> Dataset:
        """This shard's items of ``dataset``, in its order (possibly none, for a tiny dataset and many shards)."""
        items = [item for item in dataset.items if self.holds(item.id)]
        return Dataset(id=f"{dataset.id}#shard{self.index}of{self.count}", items=items, splits=dataset.splits,
                       source=dataset.source, header=dataset.header)

    def describe(self, whole: Dataset) -> dict[str, object]:
        """What a shard's run records: the shard, the dataset it is a part of, and where its items sit in that
        dataset (so that a merged run lists them, and its bootstrap resamples them, in the dataset's order)."""
        return {"index": self.index, "count": self.count, "of": {"id": whole.id, "hash": whole.hash, "n": len(whole)},
                "positions": [i for i, item in enumerate(whole.items) if self.holds(item.id)]}
