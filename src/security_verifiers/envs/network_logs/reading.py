"""Streaming flow datasets: files are read row by row and turned into E1 items as they come.

The captures run to gigabytes, so nothing is read whole: a :class:`FlowFile` reads its header when opened
(a file whose header is wrong is a :class:`DatasetError`: none of its rows could be read) and then yields
its rows one by one, in file order; :func:`stream_items` turns them into items. An item's window is the
preceding flows of the same originating host: flows earlier in the input that did not start after it, at
most ``WINDOW`` of them, oldest first (flows with equal timestamps stay in file order: a capture whose clock
counts minutes has many), kept by :class:`HostWindows` for a bounded number of hosts (the least recently
seen host is forgotten first), so memory does not grow with the length of the input.

Every item records its capture (:mod:`capture`): the resolution of its timestamps (the coarsest among the
flow and its window; ``None`` when the dataset has none) and the fields its dataset lacks, so nothing
downstream reads a placeholder as a value.

A row that cannot be read comes out as a :class:`RowError` naming ``file:line``: ``sv data import``
reports it and goes on, the ``load_*`` functions of :mod:`loaders` raise it. Column names are matched
without regard to case and surrounding spaces (CIC-IDS-2017 pads them with spaces, UNSW-NB15 releases
differ in case). The dataset formats themselves live in :mod:`loaders`.
"""

from __future__ import annotations

import csv
import functools
import sys
from abc import ABC, abstractmethod
from collections import OrderedDict, deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, ClassVar

from pydantic import ValidationError

from security_verifiers.core.datasets import item_id
from security_verifiers.core.errors import DatasetError
from security_verifiers.core.types import Item
from security_verifiers.envs.network_logs.capture import FIELDS
from security_verifiers.envs.network_logs.generator import WINDOW
from security_verifiers.envs.network_logs.items import NetworkLogsInput, NetworkLogsTarget

UNKNOWN_HOST = "unknown"
#: Hosts whose recent flows are kept by default. Each holds at most ``WINDOW`` flows of ~650 bytes (measured):
#: about 1.3 GB in the worst case (every host active with a full window); real captures hold far less (most
#: hosts open a few flows), and ``--max-hosts`` lowers the bound.
DEFAULT_MAX_HOSTS = 100_000


@dataclass(frozen=True)
class Record:
    """One readable row: its conn record, label, family, 1-based line, and the resolution of its timestamp
    in seconds (``None``: the dataset has no timestamps)."""

    flow: dict[str, Any]
    label: str
    family: str
    line: int
    ts_resolution: float | None


class RowError(DatasetError):
    """One row that cannot be read: where (``file``, 1-based ``line``) and why."""

    def __init__(self, file: str, line: int, reason: str) -> None:
        super().__init__(f"{file}:{line}: {reason}")
        self.file, self.line, self.reason = file, line, reason


@functools.cache
def column_key(name: str) -> str:
    """How column names are compared: case, surrounding and repeated spaces and a byte-order mark ignored.

    >>> column_key(" Total Fwd  Packets"), column_key("\\ufeffSload")
    ('total fwd packets', 'sload')
    """
    return " ".join(name.replace("\ufeff", "").split()).lower()


class Cells:
    """One row's cells by column name, with parsers that fail with ``file:line``."""

    def __init__(self, file: str, line: int, columns: dict[str, int], cells: list[str]) -> None:
        self.file, self.line, self.columns, self.cells = file, line, columns, cells

    def error(self, message: str) -> RowError:
        return RowError(self.file, self.line, message)

    def text(self, column: str) -> str:
        return self.cells[self.columns[column_key(column)]].strip()

    def optional(self, column: str) -> str | None:
        """The cell, or ``None`` where the dataset marks it unset (``-``) or leaves it empty."""
        value = self.text(column)
        return None if value in ("-", "") else value

    def number(self, column: str, kind: type[int] | type[float], unset: str | None = "-") -> Any:
        value = self.text(column)
        if unset is not None and value == unset:
            return None
        try:
            return int(value, 0) if kind is int and value.lower().startswith("0x") else kind(value)
        except ValueError:
            raise self.error(f"column {column!r}: cannot read {value!r} as {kind.__name__}") from None

    def required(self, column: str, kind: type[int] | type[float]) -> Any:
        return self.number(column, kind, unset=None)


def column_index(file: str, line: int, header: list[str], required: Iterable[str]) -> dict[str, int]:
    columns: dict[str, int] = {}
    for i, name in enumerate(header):
        columns.setdefault(column_key(name), i)
    missing = [c for c in required if column_key(c) not in columns]
    if missing:
        raise DatasetError(f"{file}:{line}: missing required column(s) {', '.join(missing)}")
    return columns


def conn_record(ts: float | None, orig: tuple[str, int], resp: tuple[str, int], proto: str, service: str | None,
                duration: float | None, nbytes: tuple[int | None, int | None], state: str, history: str,
                pkts: tuple[int, int]) -> dict[str, Any]:
    """A conn record with exactly the keys of the item contract, floats rounded like the generator's.

    Strings are interned: the windows hold up to millions of flows whose addresses and states repeat."""
    return {
        "ts": None if ts is None else round(ts, 6), "id.orig_h": sys.intern(orig[0]), "id.orig_p": orig[1],
        "id.resp_h": sys.intern(resp[0]),
        "id.resp_p": resp[1], "proto": sys.intern(proto), "service": None if service is None else sys.intern(service),
        "duration": None if duration is None else round(duration, 6),
        "orig_bytes": nbytes[0], "resp_bytes": nbytes[1], "conn_state": sys.intern(state),
        "history": sys.intern(history), "orig_pkts": pkts[0], "resp_pkts": pkts[1],
    }


# --------------------------------------------------------------------------------------------------
# Streaming: files -> records -> items
# --------------------------------------------------------------------------------------------------
class FlowFile(ABC):
    """One dataset file opened for streaming.

    Opening reads and checks the header; iterating :meth:`records` yields each data row, in file order, as
    a record or a :class:`RowError`. Rows that are not flows of the item contract (IP protocols other than
    TCP, UDP and ICMP, blank rows) are counted in ``ignored``. ``name`` is how items cite the file (in their
    ``meta`` and their id); ``bytes_read`` and ``rows`` tell a progress bar how far it got.
    """

    dataset: ClassVar[str]
    #: The host role written into items (IoT-23's hosts are all lab IoT devices; the others are unknown).
    role: ClassVar[str] = "unknown"
    #: The conn fields this file's rows lack (their placeholders are in :data:`capture.PLACEHOLDERS`); set by
    #: ``_open`` where a dataset's forms differ.
    unrecorded: tuple[str, ...] = ()

    def __init__(self, path: Path | str, name: str | None = None) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise DatasetError(f"dataset file not found: {self.path}")
        self.where = str(self.path)
        self.name = name if name is not None else self.path.name
        self.size = self.path.stat().st_size
        self.bytes_read = self.rows = self.ignored = 0
        self._fh = self.path.open("rb")
        try:
            self._open()
        except BaseException:
            self._fh.close()
            raise

    def _text(self) -> Iterator[str]:
        """Decoded lines with their line ends (the csv module wants them), counting bytes as they go."""
        for raw in self._fh:
            self.bytes_read += len(raw)
            yield raw.decode("utf-8", errors="replace")

    @abstractmethod
    def _open(self) -> None:
        """Read and check the header (raise :class:`DatasetError` on a file none of whose rows can be read)."""

    @abstractmethod
    def records(self) -> Iterator[Record | RowError]:
        """The rows after the header, in file order."""

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> FlowFile:
        return self

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


class CsvFile(FlowFile):
    """A CSV dataset file: one header row (or none, for raw UNSW-NB15), then one row per flow."""

    _columns: dict[str, int]
    _width: int

    def _start(self) -> list[str]:
        """The first row (the header, in most releases); an empty file is an error."""
        self._reader = csv.reader(self._text())
        try:
            first = next(self._reader, None)
        except csv.Error as err:
            raise DatasetError(f"{self.where}:1: not a CSV header: {err}") from None
        if first is None:
            raise DatasetError(f"dataset file is empty: {self.where}")
        return first

    def _cells(self) -> Iterator[Cells | RowError]:
        """The data rows as cells, after the header; blank rows are ignored, rows of the wrong width are errors."""
        while True:
            try:
                cells = next(self._reader)
            except StopIteration:
                return
            except csv.Error as err:  # e.g. a field over the csv module's size limit
                self.rows += 1
                yield RowError(self.where, self._reader.line_num, f"not a CSV row: {err}")
                continue
            yield from self._check(self._reader.line_num, cells)

    def _check(self, lineno: int, cells: list[str]) -> Iterator[Cells | RowError]:
        self.rows += 1
        if not any(c.strip() for c in cells):  # all-empty rows, present in some releases
            self.ignored += 1
        elif len(cells) != self._width:
            yield RowError(self.where, lineno, f"{len(cells)} cells, expected {self._width}")
        else:
            yield Cells(self.where, lineno, self._columns, cells)


class HostWindows:
    """The last ``window`` flows of each host, for at most ``max_hosts`` hosts.

    When a new host would exceed ``max_hosts``, the least recently seen host is forgotten (``forgotten``
    counts them): its next flow gets an empty window. This is all an import holds in memory besides the
    row being read: at most ``max_hosts * window`` flows, whatever the length of the input.
    """

    def __init__(self, window: int = WINDOW, max_hosts: int = DEFAULT_MAX_HOSTS) -> None:
        if max_hosts < 1 or window < 0:
            raise ValueError("max_hosts must be positive and window not negative")
        self.window, self.max_hosts, self.forgotten = window, max_hosts, 0
        self._hosts: OrderedDict[str, deque[Record]] = OrderedDict()

    def preceding(self, host: str, ts: float) -> list[Record]:
        """The host's kept records that did not start after ``ts``, oldest first; equal times in file order."""
        records = self._hosts.get(host)
        if records is None:
            return []
        return sorted((r for r in records if r.flow["ts"] <= ts), key=lambda r: r.flow["ts"])

    def add(self, host: str, record: Record) -> None:
        records = self._hosts.get(host)
        if records is None:
            if len(self._hosts) >= self.max_hosts:
                self._hosts.popitem(last=False)
                self.forgotten += 1
            records = self._hosts[host] = deque(maxlen=self.window)
        else:
            self._hosts.move_to_end(host)
        records.append(record)

    @property
    def hosts(self) -> int:
        return len(self._hosts)

    @property
    def flows_held(self) -> int:
        return sum(len(f) for f in self._hosts.values())


def stream_items(files: Iterable[FlowFile], split: str,
                 windows: HostWindows | None = None) -> Iterator[Item | RowError]:
    """Items from ``files`` in order, one per readable row, and a :class:`RowError` for each row that is not.

    The id hashes the item's content together with the file's name and the row's line, so ids are unique
    without remembering them (two identical rows of a capture are two items) and stable across runs.
    """
    windows = windows if windows is not None else HostWindows()
    for file in files:
        for record in file.records():
            if isinstance(record, RowError):
                yield record
                continue
            host = record.flow["id.orig_h"]
            previous = [] if host == UNKNOWN_HOST else windows.preceding(host, record.flow["ts"])
            inp = {"host": {"ip": host, "role": file.role}, "flow": record.flow, "window": [r.flow for r in previous],
                   "capture": _capture(file, record, previous)}
            target = {"label": record.label, "family": record.family,
                      "p_malicious": 1.0 if record.label == "Malicious" else 0.0}
            problem = _contract_problem(inp, target)
            if problem is not None:
                yield RowError(file.where, record.line, f"not a valid network-logs item: {problem}")
                continue
            source = {"file": file.name, "line": record.line}
            if host != UNKNOWN_HOST:
                windows.add(host, record)
            yield Item(id=item_id("nl", {"input": inp, "target": target, "source": source}), split=split,
                       input=inp, target=target, meta={"dataset": file.dataset, "source": file.name,
                                                       "line": record.line})


def _contract_problem(inp: dict[str, Any], target: dict[str, Any]) -> str | None:
    """Why an item built from a row breaks the item contract (:mod:`items`), or ``None``. The window is not
    validated again: its flows are earlier rows' flows, each validated when it was the item's flow (and a row
    that fails is kept out of the windows)."""
    for part, model, value in (("input", NetworkLogsInput, {**inp, "window": []}), ("target", NetworkLogsTarget,
                                                                                     target)):
        try:
            model.model_validate(value)
        except ValidationError as err:
            first = err.errors()[0]
            return f"{'.'.join(str(p) for p in (part, *first['loc']))}: {first['msg']}"
    return None


def _capture(file: FlowFile, record: Record, previous: list[Record]) -> dict[str, Any]:
    """The item's capture: the coarsest timestamp resolution among its flows, and what the file lacks."""
    resolutions = [r.ts_resolution for r in (*previous, record)]
    resolution = None if None in resolutions else max(r for r in resolutions if r is not None)
    missing = set(file.unrecorded) | ({"ts"} if resolution is None else set())
    return {"ts_resolution": resolution, "unrecorded": [f for f in FIELDS if f in missing]}


def load_file(file: FlowFile, split: str) -> list[Item]:
    """All items of one file; the first unreadable row raises (the strict reading of a single file)."""
    with file:
        items: list[Item] = []
        for out in stream_items([file], split):
            if isinstance(out, RowError):
                raise out
            items.append(out)
    return items
