"""``sv data import network-logs``: labelled flow captures (IoT-23, CIC-IDS-2017, UNSW-NB15, CTU-13), streamed in
constant memory in file order (the readers are in :mod:`.loaders` and :mod:`.reading`)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from security_verifiers.core.errors import ConfigError
from security_verifiers.core.importing import (
    Argument,
    Importer,
    ImportProgress,
    ImportRun,
    ImportSummary,
    Problem,
    ProblemLog,
    positive_limit,
    problem_lines,
    source_names,
)


def run(values: dict[str, Any], progress: ImportProgress) -> ImportRun:
    from security_verifiers.envs.network_logs.loaders import FORMATS
    from security_verifiers.envs.network_logs.reading import DEFAULT_MAX_HOSTS, HostWindows, RowError, stream_items

    limit = positive_limit(values)
    max_hosts = DEFAULT_MAX_HOSTS if values["max_hosts"] is None else values["max_hosts"]
    if max_hosts <= 0:
        raise ConfigError("--max-hosts must be positive")
    paths = [Path(p) for p in values["files"]]
    files: list[Any] = []
    try:
        for path, name in zip(paths, source_names(paths), strict=True):
            files.append(FORMATS[values["format"]](path, name))  # reads and checks every header before any row
    except BaseException:
        for file in files:
            file.close()
        raise
    windows, problems = HostWindows(max_hosts=max_hosts), ProblemLog()
    written, started = 0, time.perf_counter()
    progress.begin("reading", total=sum(f.size for f in files), rows=0, rate=0)

    def show() -> None:
        rows = sum(f.rows for f in files)
        progress.update(completed=sum(f.bytes_read for f in files), rows=rows,
                        rate=rows / max(time.perf_counter() - started, 1e-9))

    def items() -> Iterator[Any]:
        nonlocal written
        try:
            for produced in stream_items(files, values["split"], windows):
                if isinstance(produced, RowError):
                    problems.add(Problem(produced.file, produced.line, produced.reason))
                    continue
                yield produced
                written += 1
                if written % 2000 == 0:
                    show()
                if written == limit:
                    return
        finally:
            show()
            for file in files:
                file.close()

    def summary() -> ImportSummary:
        rows = sum(f.rows for f in files)
        seconds = time.perf_counter() - started
        unlabelled = sum(getattr(f, "unlabelled", 0) for f in files)
        note = f", of them {unlabelled:,} unlabelled: CTU-13 Background" if unlabelled else ""
        return ImportSummary(written, problems.total, [
            *problem_lines(problems.shown, problems.total, "row(s)"),
            f"{written} item(s) from {rows:,} rows of {len(files)} file(s) in {seconds:.1f}s "
            f"({rows / max(seconds, 1e-9):,.0f} rows/s){' (--limit reached)' if written == limit else ''}; "
            f"{problems.total} unreadable, {sum(f.ignored for f in files)} ignored (blank, or not TCP/UDP/ICMP"
            f"{note}); {windows.forgotten} host(s) forgotten beyond --max-hosts {max_hosts:,}"], {"rows": rows})

    return ImportRun(items(), summary)


IMPORTER = Importer(
    help="Labelled flow captures: IoT-23, CIC-IDS-2017, UNSW-NB15, CTU-13.",
    description="Streams the files in constant memory, in file order: one item per flow, its window the host's "
    "preceding flows. Unreadable rows are skipped and reported.",
    arguments=(
        Argument(("files",), {"nargs": "+", "metavar": "FILE", "help": "Dataset files, read in the order given."}),
        Argument(("--format",), {
            "required": True, "choices": ("iot23", "cicids2017", "unsw-nb15", "ctu13"),
            "help": "iot23: Zeek conn.log.labeled, as the Zeek TSV or exported as CSV; cicids2017: the CSVs (with or "
            "without addresses), the original release or the 'improved' re-extraction (Engelen et al. 2021); "
            "unsw-nb15: the training/testing-set CSVs or the raw 49-column files; ctu13: CTU-13 .binetflow files "
            "(Argus; Background flows are unlabelled and not imported)."}),
        Argument(("--limit",), {"type": int, "default": None, "help": "Stop after N items."}),
        Argument(("--max-hosts",), {
            "type": int, "default": None,
            "help": "Hosts whose last 20 flows are kept for the windows (default: 100,000); beyond it the least "
            "recently seen host is forgotten (its next window is empty). Memory stays bounded by max-hosts x 20 "
            "flows of ~650 bytes (1.3 GB at worst with the default), whatever the length of the files."}),
    ),
    run=run,
    progress_columns=("{task.fields[rows]:,} rows", "{task.fields[rate]:,.0f} rows/s"),
)
