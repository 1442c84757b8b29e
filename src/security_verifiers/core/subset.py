"""Which items of a dataset a command uses: ``--limit`` and ``--sample-seed``, one meaning everywhere.

``--limit N`` takes the first N items (of each split, as lm-evaluation-harness and Inspect limit each task);
``--limit A:B`` the items A to B-1 counted from 0, as a Python slice reads; ``--limit N --sample-seed S`` N items
drawn at random with seed S, kept in their dataset order. A subset is a pure function of the items and these
values, so a run that records them can be reproduced and resumed.
"""

from __future__ import annotations

import random
import re

from pydantic import BaseModel, ConfigDict, Field, model_validator

from security_verifiers.core.datasets import Dataset
from security_verifiers.core.errors import ConfigError

_RANGE = re.compile(r"^\s*(\d*)\s*:\s*(\d*)\s*$")


class ItemSubset(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    start: int = Field(0, ge=0)
    stop: int | None = Field(None, ge=1)
    sample_seed: int | None = None

    @model_validator(mode="after")
    def _ordered(self) -> ItemSubset:
        if self.stop is not None and self.stop <= self.start:
            raise ValueError(f"the range {self.start}:{self.stop} is empty")
        if self.sample_seed is not None and (self.start or self.stop is None):
            raise ValueError("--sample-seed draws N items at random: give --limit N")
        return self

    @classmethod
    def parse(cls, limit: str | int | None, sample_seed: int | None = None) -> ItemSubset | None:
        """The subset ``--limit`` and ``--sample-seed`` name, ``None`` for every item; a bad value is a
        :class:`ConfigError` in the flags' words."""
        if limit is None:
            if sample_seed is not None:
                raise ConfigError("--sample-seed needs --limit N: how many items to draw")
            return None
        text = str(limit).strip()
        try:
            if text.isdigit():
                if int(text) == 0:
                    raise ConfigError("--limit must be positive, got 0")
                return cls(stop=int(text), sample_seed=sample_seed)
            match = _RANGE.match(text)
            if match is None:
                raise ConfigError(f"--limit takes N (the first N items) or A:B (items A to B-1), got {limit!r}")
            start, stop = match.groups()
            return cls(start=int(start or 0), stop=int(stop) if stop else None, sample_seed=sample_seed)
        except ValueError as exc:  # pydantic's ValidationError is one
            message = exc.errors()[0]["msg"] if hasattr(exc, "errors") else str(exc)
            raise ConfigError(f"--limit {limit}: {message.removeprefix('Value error, ')}") from None

    @property
    def first_n(self) -> int | None:
        """N when the subset is the first N items (a generated split then needs to generate only those)."""
        return self.stop if self.start == 0 and self.sample_seed is None else None

    def describe(self) -> str:
        if self.sample_seed is not None:
            return f"{self.stop} at random (seed {self.sample_seed})"
        return f"[{self.start or ''}:{'' if self.stop is None else self.stop}]"

    def select(self, dataset: Dataset) -> Dataset:
        """The subset of ``dataset``; a range past its end keeps what there is (as a slice does), but one that
        starts past it is an error rather than an empty run."""
        count = len(dataset)
        if self.start >= count:
            raise ConfigError(f"--limit {self.start}:{'' if self.stop is None else self.stop} starts past the "
                              f"{count} items of {dataset.id}")
        if self.sample_seed is not None:
            assert self.stop is not None
            if self.stop >= count:
                return dataset
            chosen = sorted(random.Random(self.sample_seed).sample(range(count), self.stop))
            items = [dataset.items[i] for i in chosen]
        else:
            stop = count if self.stop is None else min(self.stop, count)
            if self.start == 0 and stop == count:
                return dataset
            items = list(dataset.items[self.start:stop])
        suffix = f"[{self.stop}@seed{self.sample_seed}]" if self.sample_seed is not None else self.describe()
        return Dataset(id=f"{dataset.id}{suffix}", items=items, splits=dataset.splits,
                       source=dataset.source, header=dataset.header)
