"""Datasets with stable item ids, explicit splits and a content hash checked on load.

An item's id comes from the hash of its content, so the same item has the same id on every machine
and a changed item cannot masquerade as an old one. A dataset's hash covers every item in order;
loading a file whose hash differs from the expected one is an error, never a warning.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from security_verifiers.core.errors import DatasetError
from security_verifiers.core.types import Item


def canonical_json(value: Any) -> str:
    """The one serialisation that hashes are computed over (sorted keys, no spaces, UTF-8)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def item_id(prefix: str, content: Any, length: int = 16) -> str:
    """A stable id from an item's content.

    >>> item_id("nl", {"a": 1})
    'nl-015abd7f5cc57a2d'
    """
    digest = hashlib.sha256(canonical_json(content).encode()).hexdigest()
    return f"{prefix}-{digest[:length]}"


def item_line(item: Item) -> str:
    return canonical_json(item.model_dump(mode="json"))


def content_hash(items: Iterable[Item]) -> str:
    """``sha256:`` over the canonical JSON lines of the items, in order."""
    h = hashlib.sha256()
    for item in items:
        h.update(item_line(item).encode())
        h.update(b"\n")
    return "sha256:" + h.hexdigest()


@dataclass(frozen=True)
class Dataset:
    """An ordered, hashed collection of items from one or more splits."""

    id: str
    items: Sequence[Item]
    splits: tuple[str, ...]
    hash: str = field(default="")
    source: str = "generated"

    def __post_init__(self) -> None:
        ids = [item.id for item in self.items]
        if len(set(ids)) != len(ids):
            raise DatasetError(f"dataset {self.id} has duplicate item ids")
        if not self.hash:
            object.__setattr__(self, "hash", content_hash(self.items))

    def __len__(self) -> int:
        return len(self.items)

    def head(self, n: int | None) -> Dataset:
        """The first ``n`` items (a deterministic subset, so ``--n`` is reproducible)."""
        if n is None or n >= len(self.items):
            return self
        if n <= 0:
            raise DatasetError(f"--n must be positive, got {n}")
        return Dataset(id=f"{self.id}[:{n}]", items=self.items[:n], splits=self.splits, source=self.source)

    def __add__(self, other: Dataset) -> Dataset:
        return Dataset(
            id=f"{self.id}+{other.id}",
            items=[*self.items, *other.items],
            splits=self.splits + other.splits,
            source=f"{self.source}+{other.source}",
        )


def write_jsonl(items: Iterable[Item], path: Path) -> str:
    """Write items as canonical JSON lines as they come (an import streams millions); returns the dataset
    hash of what was written (the same as :func:`content_hash`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    h = hashlib.sha256()
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        for item in items:
            line = item_line(item) + "\n"
            fh.write(line)
            h.update(line.encode())
    return "sha256:" + h.hexdigest()


def read_jsonl(path: Path, dataset_id: str, expected_hash: str | None = None) -> Dataset:
    """Read a JSONL dataset; a malformed line or a hash mismatch is a :class:`DatasetError`."""
    if not path.is_file():
        raise DatasetError(f"dataset file not found: {path}")
    items: list[Item] = []
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                items.append(Item.model_validate_json(line))
            except ValidationError as err:
                raise DatasetError(f"{path}:{lineno}: not a valid item: {err.errors()[0]['msg']}") from err
    if not items:
        raise DatasetError(f"dataset file is empty: {path}")
    splits = tuple(dict.fromkeys(item.split for item in items))
    dataset = Dataset(id=dataset_id, items=items, splits=splits, source=str(path))
    if expected_hash is not None and dataset.hash != expected_hash:
        raise DatasetError(
            f"dataset {dataset_id} at {path} has hash {dataset.hash}, expected {expected_hash}; "
            "the file was modified or is from another version"
        )
    return dataset


def load_public_split(env_name: str, data_dir: Path, split: str, n: int | None = None) -> Dataset:
    """A committed public split, read through its ``manifest.json`` entry and checked against its hash."""
    manifest_path = data_dir / "manifest.json"
    if not manifest_path.is_file():
        raise DatasetError(f"{env_name}: no public data manifest at {manifest_path}")
    entry = json.loads(manifest_path.read_text(encoding="utf-8"))["splits"].get(split)
    if entry is None:
        raise DatasetError(f"{env_name}: split {split!r} is not in {manifest_path}")
    dataset_id = f"{env_name}/{split}@{entry['hash'].removeprefix('sha256:')[:12]}"
    return read_jsonl(data_dir / entry["file"], dataset_id, entry["hash"]).head(n)
