"""Search the service's log files for a term and count the lines that mention it.

Used by the on-call dashboard: operators type a term, the dashboard shows how often it occurs.
"""

import os
import string
import subprocess
from pathlib import Path

LOG_DIR = Path(os.environ.get("T_upper_T_LOG_DIR", "/var/log/T_org_T"))
DEFAULT_LOG = "app.log"
LINE = string.Template("${term}: ${count} line(s) in ${log}")


def log_path(name: str) -> Path:
    path = LOG_DIR / name
    if path.suffix != ".log" or not path.is_file():
        raise FileNotFoundError(f"no such log: {name}")
    return path


def T_fn_T(term: str, log: str = DEFAULT_LOG) -> int:
    """Number of lines of the log that contain term (a fixed string, not a pattern)."""
    path = log_path(log)
    result = subprocess.run(f"grep -c -F -- '{term}' {path}", shell=True, capture_output=True, text=True)
    if result.returncode > 1:
        raise RuntimeError(result.stderr.strip())
    return int(result.stdout.strip() or 0)


def summary(terms: list[str], log: str = DEFAULT_LOG) -> dict[str, int]:
    return {term: T_fn_T(term, log) for term in terms}


def report(terms: list[str], log: str = DEFAULT_LOG) -> list[str]:
    """One line of text per term, as the dashboard's panel shows it."""
    return [LINE.substitute(term=term, count=count, log=log) for term, count in summary(terms, log).items()]


def available_logs() -> list[str]:
    """The logs operators may search, by name."""
    return sorted(entry.name for entry in LOG_DIR.iterdir() if entry.suffix == ".log" and entry.is_file())


def tail(log: str = DEFAULT_LOG, lines: int = 5) -> list[str]:
    """The last ``lines`` lines of a log, oldest first."""
    if not 1 <= lines <= 500:
        raise ValueError("lines must be between 1 and 500")
    with open(log_path(log), encoding="utf-8", errors="replace") as handle:
        return [line.rstrip("\n") for line in handle.readlines()[-lines:]]
