"""Batches of log lines as T_org_T's services ship them: counted, searched and archived."""

import json
import shutil
import time
from collections import Counter
from pathlib import Path

from T_pkg_T import lines as log_lines

#: How long the last batches took to ingest, in seconds (for the ingester's own metrics).
durations: list[float] = []


def T_ingest_fn_T(lines: list[str]) -> dict:
    """Counts of a batch: accepted and rejected lines, accepted lines per level and per source."""
    started = time.monotonic()
    records = [record for record in map(log_lines.T_parse_fn_T, lines) if record is not None]
    durations.append(time.monotonic() - started)
    return {"accepted": len(records), "rejected": len(lines) - len(records),
            "levels": dict(Counter(record["level"] for record in records)),
            "sources": dict(Counter(record["source"] for record in records))}


def first_error(lines: list[str]) -> dict | None:
    """The first ERROR or CRITICAL record of a batch, for the alert mail."""
    for record in filter(None, map(log_lines.T_parse_fn_T, lines)):
        if record["level"] in ("ERROR", "CRITICAL"):
            return record
    return None


def to_json_lines(lines: list[str]) -> str:
    """The well-formed lines as JSON lines, for the archive."""
    records = (record for record in map(log_lines.T_parse_fn_T, lines) if record is not None)
    return "".join(json.dumps(record, sort_keys=True) + "\n" for record in records)


def archive(lines: list[str], path: str) -> int:
    """Write a batch to the archive file; the previous archive is kept beside it as <path>.1."""
    target = Path(path)
    if target.exists():
        shutil.copyfile(target, target.with_name(target.name + ".1"))
    return target.write_text(to_json_lines(lines), encoding="utf-8")
