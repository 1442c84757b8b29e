"""How the prompt writes an item's connections: the column order, the timestamp format and the duration's unit.

Real logs come in many spellings of the same record (Zeek writes epoch seconds, other tools ISO 8601 times,
milliseconds, other column orders). An item may carry a :class:`~.items.Presentation` (the ``robust`` split's
``field_order``, ``timestamp_format`` and ``duration_unit`` rewrites do); without one the prompt is Zeek's own
conn.log layout. The values are written exactly (decimal shifts, no rounding beyond what the prompt style already
does), so that :func:`read_tables` reads a prompt back into the values it shows, whatever the presentation: the
robust split's check that a presentation changed the spelling and nothing else.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from security_verifiers.envs.network_logs.capture import FIELDS

#: The columns of the compact style: ``dt`` (seconds since the host's previous connection) stands for ``ts``.
COMPACT_FIELDS = ("dt", "id.resp_h", "id.resp_p", "proto", "service", "duration", "orig_bytes", "resp_bytes",
                  "conn_state", "history")
#: Zeek's presentation: its column order, epoch seconds, durations in seconds.
DEFAULT: dict[str, Any] = {"field_order": list(FIELDS), "ts_format": "epoch", "duration_unit": "s"}
_MS_COLUMN = "duration_ms"
_ISO = re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d+))?Z$")


def presentation(item_input: dict[str, Any]) -> dict[str, Any]:
    """The item's presentation, Zeek's when it has none."""
    return item_input.get("presentation") or DEFAULT


def _exact(value: float) -> Decimal:
    return Decimal(repr(value))


def _plain(value: Decimal) -> str:
    return format(value.normalize(), "f")


def _iso(ts: float) -> str:
    exact = _exact(ts)
    whole = int(exact.to_integral_value(rounding="ROUND_FLOOR"))
    fraction = _plain(exact - whole)
    stamp = datetime.fromtimestamp(whole, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{stamp}{fraction[1:] if fraction != '0' else ''}Z"


def _cell(field: str, value: Any, shown: dict[str, Any], *, empty: str = "") -> str:
    """One value as ``shown`` spells it: ``-`` when unset; an empty string (Zeek's empty history) as ``empty``."""
    if value is None:
        return "-"
    if value == "":
        return empty
    if field == "ts" and shown["ts_format"] == "iso8601":
        return _iso(value)
    if field == "duration" and shown["duration_unit"] == "ms":
        return _plain(_exact(value) * 1000)
    return str(value)


def _column(field: str, shown: dict[str, Any]) -> str:
    return _MS_COLUMN if field == "duration" and shown["duration_unit"] == "ms" else field


def full_table(flows: Sequence[dict[str, Any]], unrecorded: frozenset[str],
               shown: dict[str, Any]) -> tuple[str, list[str]]:
    """(header, rows) of the full style: every conn field; ``-`` marks an unset field, as in Zeek logs, and a
    field the capture lacks."""
    order = shown["field_order"]
    header = "\t".join(_column(f, shown) for f in order)
    rows = ["\t".join(_cell(f, None if f in unrecorded else flow.get(f), shown) for f in order) for flow in flows]
    return header, rows


def compact_table(flows: Sequence[dict[str, Any]], unrecorded: frozenset[str],
                  shown: dict[str, Any]) -> tuple[str, list[str]]:
    """(header, rows) of the compact style: ``dt`` replaces the absolute timestamp (``-`` for the first row, and
    where the capture has no clock), durations are rounded to milliseconds; unset and unrecorded fields are ``-``."""
    order = [f for f in (("dt" if f == "ts" else f) for f in shown["field_order"]) if f in COMPACT_FIELDS]
    rows, previous = [], None
    for flow in flows:
        ts = None if "ts" in unrecorded else flow.get("ts")
        values: dict[str, Any] = {f: None if f in unrecorded else flow.get(f) for f in COMPACT_FIELDS[1:]}
        values["dt"] = None if ts is None or previous is None else round(ts - previous, 3)
        previous = ts
        if isinstance(values["duration"], float):
            values["duration"] = round(values["duration"], 3)
        rows.append("\t".join(_cell(f, values[f], shown, empty="-") for f in order))
    return "\t".join(_column(f, shown) for f in order), rows


def _canonical(column: str, cell: str) -> tuple[str, str | None]:
    """(field, value in Zeek's spelling) of one cell, whatever presentation wrote it."""
    if cell == "-":
        return ("duration" if column == _MS_COLUMN else column), None
    if column == _MS_COLUMN:
        return "duration", _plain(Decimal(cell) / 1000)
    if column == "ts" and (iso := _ISO.match(cell)):
        whole = calendar.timegm(datetime.strptime(iso.group(1), "%Y-%m-%dT%H:%M:%S").timetuple())
        return "ts", _plain(Decimal(whole) + Decimal(f"0.{iso.group(2) or 0}"))
    if column in ("ts", "dt", "duration"):
        return column, _plain(Decimal(cell))
    return column, cell


def read_tables(text: str) -> tuple[list[str], list[dict[str, str | None]]]:
    """A prompt read back: (its lines that are not tables, every table row as {field: value in Zeek's spelling}).

    A table is a header line of known column names; every later line with as many tab-separated cells is its row
    (the compact style's ``last:`` line sits between a table's rows)."""
    known = {*FIELDS, *COMPACT_FIELDS, _MS_COLUMN}
    prose: list[str] = []
    rows: list[dict[str, str | None]] = []
    columns: list[str] | None = None
    for line in text.split("\n"):
        cells = line.split("\t")
        if len(cells) > 1 and set(cells) <= known:
            columns = cells
            prose.append("<table>")
        elif columns is not None and len(cells) == len(columns):
            rows.append(dict(_canonical(c, v) for c, v in zip(columns, cells, strict=True)))
        else:
            prose.append(line)
    return prose, rows
