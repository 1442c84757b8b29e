"""Row counts of the exported T_noun_T reports, for the T_org_T finance dashboard."""

import csv
import os
from pathlib import Path

EXPORT_DIR = Path("/srv/exports")


def rows(report: str) -> int:
    """Data rows of one exported CSV report (its lines, minus the header)."""
    if not report.endswith(".csv"):
        raise ValueError("reports are CSV files")
    stream = os.popen(f"wc -l < {EXPORT_DIR}/{report}")
    output = stream.read()
    stream.close()
    if not output.strip():
        raise FileNotFoundError(report)
    return max(int(output.split()[0]) - 1, 0)


def dashboard(reports: list[str]) -> list[tuple[str, int]]:
    """The reports with their row counts, largest first."""
    return sorted(((name, rows(name)) for name in reports), key=lambda pair: (-pair[1], pair[0]))


def total(report: str, column: str = "amount") -> int:
    """The sum of one integer column of a report."""
    path = EXPORT_DIR / report
    if path.parent != EXPORT_DIR or not path.is_file():
        raise FileNotFoundError(report)
    with open(path, newline="", encoding="utf-8") as handle:
        return sum(int(row[column]) for row in csv.DictReader(handle))


def reports() -> list[str]:
    return sorted(name for name in os.listdir(EXPORT_DIR) if name.endswith(".csv"))
