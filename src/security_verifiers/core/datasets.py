"""Datasets with stable item ids, explicit splits and a content hash checked on load.

An item's id comes from the hash of its content, so the same item has the same id on every machine
and a changed item cannot masquerade as an old one. A dataset's hash covers every item in order;
loading a file whose hash differs from the expected one is an error, never a warning.

A dataset file written by the project (``sv data build``, ``sv data import``) opens with a header line,
``{"sv_dataset": {"format": 1, "env": ..., "env_version": ..., ...}}``, saying which environment and version
its items are for, so that a file of another environment is named as such before any item is read. The
header is not an item: the hash covers the items only (the committed public splits have no header, and
files without one still load, validated item by item by their environment).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
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
    #: The file's ``sv_dataset`` header (which environment and version it was written for), if it has one.
    header: dict[str, Any] | None = field(default=None, compare=False)

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
        return Dataset(id=f"{self.id}[:{n}]", items=self.items[:n], splits=self.splits, source=self.source,
                       header=self.header)

    def __add__(self, other: Dataset) -> Dataset:
        return Dataset(
            id=f"{self.id}+{other.id}",
            items=[*self.items, *other.items],
            splits=self.splits + other.splits,
            source=f"{self.source}+{other.source}",
        )


#: The key of a dataset file's header line.
HEADER_KEY = "sv_dataset"
HEADER_FORMAT = 1
#: The longest line a dataset file may have (the largest real items are ~200 KB); beyond it the file is refused
#: instead of being read into memory whole.
MAX_LINE_BYTES = 16 * 1024 * 1024


def dataset_header(env: str, env_version: str, **fields: Any) -> dict[str, Any]:
    """The header of a dataset file written for ``env`` at ``env_version`` (``fields``: how it was made)."""
    return {"format": HEADER_FORMAT, "env": env, "env_version": env_version, **fields}


def write_jsonl(items: Iterable[Item], path: Path, header: dict[str, Any] | None = None) -> str:
    """Write items as canonical JSON lines as they come (an import streams millions), after the ``header``
    line if one is given (see :func:`dataset_header`); returns the dataset hash of the items written (the same
    as :func:`content_hash`: the header is not part of it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    h = hashlib.sha256()
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        if header is not None:
            fh.write(canonical_json({HEADER_KEY: header}) + "\n")
        for item in items:
            line = item_line(item) + "\n"
            fh.write(line)
            h.update(line.encode())
    return "sha256:" + h.hexdigest()


def _header(line: str, where: str) -> dict[str, Any] | None:
    """The header of a file whose first line is ``line``; ``None`` if that line is not a header."""
    if f'"{HEADER_KEY}"' not in line[:64]:
        return None
    try:
        value = json.loads(line)
    except json.JSONDecodeError:
        return None  # reported as a malformed item
    if not isinstance(value, dict) or set(value) != {HEADER_KEY}:
        return None
    header = value[HEADER_KEY]
    if not isinstance(header, dict) or not isinstance(header.get("env"), str) \
            or not isinstance(header.get("env_version"), str):
        raise DatasetError(f"{where}: malformed {HEADER_KEY} header (needs env and env_version strings)")
    return header


#: ``check_header(header, where)``: raises when the file is not for the reader's environment.
HeaderCheck = Callable[[dict[str, Any], str], None]
#: ``check_items(items, lines, where)``: raises naming the first item (``where:line``) that breaks the contract.
ItemsCheck = Callable[[Sequence[Item], Sequence[int], str], None]


def _lines(path: Path) -> Iterable[tuple[int, str]]:
    """(1-based line number, text) of a UTF-8 file, refusing binary files and lines over MAX_LINE_BYTES."""
    try:
        fh = path.open("rb")
    except OSError as err:
        raise DatasetError(f"cannot read dataset file {path}: {err.strerror or err}") from err
    with fh:
        lineno = 0
        while True:
            try:
                raw = fh.readline(MAX_LINE_BYTES + 1)
            except OSError as err:
                raise DatasetError(f"cannot read dataset file {path}: {err.strerror or err}") from err
            if not raw:
                return
            lineno += 1
            if len(raw) > MAX_LINE_BYTES:
                raise DatasetError(f"{path}:{lineno}: line longer than {MAX_LINE_BYTES // 2**20} MiB; "
                                   "not a dataset file")
            if b"\x00" in raw:
                raise DatasetError(f"{path}:{lineno}: binary data (a NUL byte); not a JSONL dataset file")
            try:
                yield lineno, raw.decode("utf-8")
            except UnicodeDecodeError as err:
                raise DatasetError(f"{path}:{lineno}: not UTF-8 text ({err.reason}); not a JSONL dataset file") \
                    from err


def read_jsonl(path: Path, dataset_id: str, expected_hash: str | None = None, *,
               check_header: HeaderCheck | None = None, check_items: ItemsCheck | None = None) -> Dataset:
    """Read a JSONL dataset; a malformed line, an unreadable or binary file or a hash mismatch is a
    :class:`DatasetError`.

    An environment reading its own files passes ``check_header`` (called on the header line, before any item
    is read) and ``check_items`` (called on every item with its line, before the hash is compared)."""
    if path.is_dir():
        raise DatasetError(f"dataset file is a directory: {path}")
    if not path.is_file():
        raise DatasetError(f"dataset file not found: {path}")
    items: list[Item] = []
    lines: list[int] = []
    header: dict[str, Any] | None = None
    for lineno, line in _lines(path):
        if not line.strip():
            continue
        if not items and header is None:
            header = _header(line, f"{path}:{lineno}")
            if header is not None:
                if check_header is not None:
                    check_header(header, str(path))
                continue
        try:
            items.append(Item.model_validate_json(line))
        except ValidationError as err:
            raise DatasetError(f"{path}:{lineno}: not a valid item: {_first_error(err)}") from err
        lines.append(lineno)
    if not items:
        raise DatasetError(f"dataset file is empty: {path}" if header is None
                           else f"dataset file holds no items (only its header): {path}")
    if check_items is not None:
        check_items(items, lines, str(path))
    splits = tuple(dict.fromkeys(item.split for item in items))
    dataset = Dataset(id=dataset_id, items=items, splits=splits, source=str(path), header=header)
    if expected_hash is not None and dataset.hash != expected_hash:
        raise DatasetError(
            f"dataset {dataset_id} at {path} has hash {dataset.hash}, expected {expected_hash}; "
            "the file was modified or is from another version"
        )
    return dataset


def _first_error(err: ValidationError) -> str:
    """The first problem of a validation error, on one line, with where it is (``input.flow.proto: ...``)."""
    first = err.errors()[0]
    loc = ".".join(str(p) for p in first["loc"])
    message = " ".join(str(first["msg"]).split())
    if len(message) > 200:
        message = message[:200] + "..."
    return f"{loc}: {message}" if loc else message


def load_public_split(env_name: str, data_dir: Path, split: str, n: int | None = None, *,
                      check_items: ItemsCheck | None = None) -> Dataset:
    """A committed public split, read through its ``manifest.json`` entry and checked against its hash (and,
    with ``check_items``, against its environment's item contract)."""
    manifest_path = data_dir / "manifest.json"
    if not manifest_path.is_file():
        raise DatasetError(f"{env_name}: no public data manifest at {manifest_path}")
    entry = json.loads(manifest_path.read_text(encoding="utf-8"))["splits"].get(split)
    if entry is None:
        raise DatasetError(f"{env_name}: split {split!r} is not in {manifest_path}")
    dataset_id = f"{env_name}/{split}@{entry['hash'].removeprefix('sha256:')[:12]}"
    return read_jsonl(data_dir / entry["file"], dataset_id, entry["hash"], check_items=check_items).head(n)
