"""Readers of real vulnerability-fix corpora into detection-only code-repair items (``kind="detection"``).

A record is one function before and after a security fix, with the CVE's CWE. The item shows the function before
the fix as its one file; the target is the CWE and the lines the fix changed (removed lines, or where lines were
added), so a model is scored on naming the weakness and where it is. Nothing runs: a real project's function has
no tests here, so its patch is not judged (the metrics to read are ``cwe_accuracy`` and ``localization_rate``).

Formats, each streamed from local files:

- ``bigvul``: Big-Vul's ``MSR_data_cleaned.csv`` (an unnamed index column, then ``CVE ID``, ``CWE ID``,
  ``func_before``, ``func_after``, ``lang``, ``project``, ``commit_id``, ``vul``... with functions as multi-line
  quoted fields); rows with ``vul`` 0 are unchanged functions and are skipped.
- ``cvefixes``: the CVEfixes SQLite database (``CVEfixes.db``): ``method_change`` rows before and after a change
  (``before_change`` 'True'/'False', paired by file change and method name), joined through ``file_change`` and
  ``fixes`` to ``cwe_classification``.
- ``records``: JSON Lines with ``before``, ``after``, ``cwe`` and optional ``file``, ``cve``, ``project``,
  ``language`` (an export of either, or of any corpus in this shape).

Only Python functions are kept (the environment's programs are Python); others are skipped with the reason, as
are records without a usable CWE (``NVD-CWE-Other``, ``NVD-CWE-noinfo``), unchanged functions, and functions
longer than the prompt allows.
"""

from __future__ import annotations

import csv
import difflib
import json
import re
import sqlite3
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from security_verifiers.core.datasets import item_id
from security_verifiers.core.errors import ConfigError
from security_verifiers.core.importing import Problem, ProblemLog
from security_verifiers.core.types import Item

FORMATS = ("bigvul", "cvefixes", "records")
#: The longest function kept (characters): a prompt shows it whole.
MAX_CHARS = 20_000
_CWE = re.compile(r"^\s*CWE-?0*([1-9][0-9]{0,4})\s*$", re.IGNORECASE)
_MODULE = re.compile(r"^[a-z_][a-z0-9_]*\.py$")


@dataclass(frozen=True)
class Record:
    """One function before and after its fix, and where it comes from (file and line or row of the corpus)."""

    before: str
    after: str
    cwe: str
    language: str
    file_name: str
    where: str
    line: int
    record: str
    cve: str = ""
    project: str = ""


@dataclass
class ImportReport:
    items: list[Item] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    problems: ProblemLog = field(default_factory=ProblemLog)
    read: int = 0


def cwe_of(text: str) -> str | None:
    """``CWE-79`` for ``CWE-79``/``cwe-079``; None for NVD's placeholders and anything else.

    >>> cwe_of("CWE-079"), cwe_of("NVD-CWE-Other"), cwe_of("")
    ('CWE-79', None, None)
    """
    match = _CWE.match(text or "")
    return f"CWE-{match.group(1)}" if match else None


def changed_lines(before: str, after: str) -> tuple[int, int] | None:
    """The first and last line of ``before`` that the fix removed or changed, or beside which it added lines;
    None when nothing changed.

    >>> changed_lines("a\\nb\\nc\\n", "a\\nB\\nc\\n"), changed_lines("a\\nb\\n", "a\\nx\\nb\\n")
    ((2, 2), (2, 2))
    """
    old, new = before.splitlines(), after.splitlines()
    spans = [(i1, i2) for tag, i1, i2, _, _ in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes()
             if tag != "equal"]
    if not spans:
        return None
    start = spans[0][0] + 1
    end = max(i2 if i2 > i1 else i1 + 1 for i1, i2 in spans)
    last = max(len(old), 1)
    return min(start, last), min(max(end, start), last)


def module_name(file_name: str) -> str:
    """A task file name for the record's file: its base name when that is a plain module name, else ``code.py``."""
    base = file_name.replace("\\", "/").rsplit("/", 1)[-1].lower()
    return base if _MODULE.match(base) else "code.py"


def to_item(record: Record, split: str, dataset: str) -> Item | str:
    """The record as a detection-only item, or why it is skipped."""
    if record.language.lower() not in ("python", "py") and not record.file_name.endswith(".py"):
        return f"not Python ({record.language or 'no language'})"
    cwe = cwe_of(record.cwe)
    if cwe is None:
        return f"no usable CWE ({record.cwe or 'empty'})"
    if len(record.before) > MAX_CHARS:
        return f"function longer than {MAX_CHARS} characters"
    span = changed_lines(record.before, record.after)
    if span is None or not record.before.strip():
        return "the function is unchanged by the fix"
    path = module_name(record.file_name)
    source = {"dataset": dataset, "file": record.where, "line": str(record.line), "record": record.record,
              "cve": record.cve, "project": record.project, "original_file": record.file_name}
    target = {"kind": "detection", "family": f"imported-{dataset}", "variant": dataset, "domain": record.project
              or "unknown", "cwe": cwe, "location": {"file": path, "start": span[0], "end": span[1]},
              "source": source}
    description = (f"A function from {record.project or 'a real project'} ({record.file_name or 'unknown file'}), "
                   "as it was before a security fix.")
    return Item(id=item_id("cri", {"dataset": dataset, "record": record.record, "before": record.before}),
                split=split, input={"files": {path: record.before}, "description": description}, target=target,
                meta={"source": f"{record.where}:{record.line}", "lines": len(record.before.splitlines())})


def read_bigvul(path: Path) -> Iterator[Record | Problem | str]:
    """Big-Vul's CSV, row by row (the reader follows multi-line quoted fields)."""
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))  # functions run past the default 128 KiB field limit
    with open(path, newline="", encoding="utf-8", errors="replace") as handle:
        reader = csv.DictReader(handle)
        needed = {"func_before", "func_after", "CWE ID"}
        missing = needed - set(reader.fieldnames or ())
        if missing:
            raise ConfigError(f"{path}: not a Big-Vul CSV (no column {', '.join(sorted(missing))})")
        end = reader.line_num
        for row in reader:
            line, end = end + 1, reader.line_num  # a record's first line (its functions span many)
            if None in row or any(v is None for v in row.values()):
                yield Problem(path.name, line, "the row has a different number of fields than the header")
                continue
            if row.get("vul", "1").strip() == "0":
                yield "an unchanged function (vul = 0)"
                continue
            record = (row.get("") or str(line)).strip()
            yield Record(before=row["func_before"], after=row["func_after"], cwe=row["CWE ID"],
                         language=row.get("lang", ""), file_name=row.get("file_name", ""), where=path.name,
                         line=line, record=f"{row.get('commit_id', '')}:{record}", cve=row.get("CVE ID", ""),
                         project=row.get("project", ""))


_CVEFIXES_QUERY = """
SELECT before.code, after.code, fc.filename, fc.programming_language, cc.cwe_id, fx.cve_id, fx.repo_url,
       after.method_change_id
FROM method_change AS after
JOIN method_change AS before
  ON before.file_change_id = after.file_change_id AND before.name = after.name
 AND before.before_change = 'True' AND after.before_change = 'False'
JOIN file_change AS fc ON fc.file_change_id = after.file_change_id
JOIN fixes AS fx ON fx.hash = fc.hash
JOIN cwe_classification AS cc ON cc.cve_id = fx.cve_id
ORDER BY after.method_change_id, cc.cwe_id
"""


def read_cvefixes(path: Path) -> Iterator[Record | Problem | str]:
    """The CVEfixes database: each method's before and after version with its CVE's CWE (one record per method
    change; a CVE with several CWEs gives the first)."""
    if not path.is_file():
        raise ConfigError(f"{path}: no such file")
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except sqlite3.DatabaseError as err:
        raise ConfigError(f"{path}: not a CVEfixes database ({err})") from err
    missing = {"method_change", "file_change", "fixes", "cwe_classification"} - tables
    if missing:
        db.close()
        raise ConfigError(f"{path}: not a CVEfixes database (no table {', '.join(sorted(missing))})")
    seen: set[str] = set()
    try:
        for row_number, row in enumerate(db.execute(_CVEFIXES_QUERY), start=1):
            before, after, filename, language, cwe, cve, repo, change_id = row
            if str(change_id) in seen:
                continue
            seen.add(str(change_id))
            if not isinstance(before, str) or not isinstance(after, str):
                yield Problem(path.name, row_number, "a method without code")
                continue
            yield Record(before=before, after=after, cwe=str(cwe or ""), language=str(language or ""),
                         file_name=str(filename or ""), where=path.name, line=row_number,
                         record=f"method_change:{change_id}", cve=str(cve or ""),
                         project=str(repo or "").rstrip("/").rsplit("/", 1)[-1])
    finally:
        db.close()


def read_records(path: Path) -> Iterator[Record | Problem | str]:
    """JSON Lines of ``{"before", "after", "cwe", "file"?, "cve"?, "project"?, "language"?}``."""
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line_number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as err:
                yield Problem(path.name, line_number, f"not JSON: {err}")
                continue
            if not isinstance(row, dict) or not isinstance(row.get("before"), str) \
                    or not isinstance(row.get("after"), str):
                yield Problem(path.name, line_number, "a record needs the strings 'before' and 'after'")
                continue
            yield Record(before=row["before"], after=row["after"], cwe=str(row.get("cwe") or ""),
                         language=str(row.get("language") or ""), file_name=str(row.get("file") or ""),
                         where=path.name, line=line_number, record=str(row.get("id") or line_number),
                         cve=str(row.get("cve") or ""), project=str(row.get("project") or ""))


READERS = {"bigvul": read_bigvul, "cvefixes": read_cvefixes, "records": read_records}


def import_records(fmt: str, paths: list[Path], split: str = "local", limit: int | None = None) -> ImportReport:
    """Every usable record of ``paths`` as an item; what is skipped or unreadable is counted, with the reason."""
    if fmt not in READERS:
        raise ConfigError(f"unknown format {fmt!r}; choose from {', '.join(FORMATS)}")
    report = ImportReport()
    seen: set[str] = set()
    for path in paths:
        for produced in READERS[fmt](path):
            if isinstance(produced, Problem):
                report.problems.add(produced)
                continue
            report.read += 1
            if isinstance(produced, str):
                report.skipped[produced] += 1
                continue
            item = to_item(produced, split, fmt)
            if isinstance(item, str):
                report.skipped[item] += 1
                continue
            key = json.dumps([item.input["files"], item.target["cwe"]], sort_keys=True)
            if key in seen:  # corpora repeat a function fixed in several commits or branches
                report.skipped["a duplicate of an earlier record"] += 1
                continue
            seen.add(key)
            report.items.append(item)
            if limit is not None and len(report.items) >= limit:
                return report
    return report
