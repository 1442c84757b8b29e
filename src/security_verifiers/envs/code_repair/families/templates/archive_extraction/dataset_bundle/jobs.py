"""Import jobs of the T_org_T analytics service: each job has a folder under IMPORT_ROOT with its files."""

import csv
import os

IMPORT_ROOT = "/var/lib/T_org_T/imports"


def job_folder(job: str) -> str:
    if not job.isalnum():
        raise ValueError("job ids are letters and digits")
    return os.path.join(IMPORT_ROOT, job)


def files_in(folder: str) -> list[str]:
    """Every file under ``folder``, relative to it, sorted."""
    found = []
    for parent, _, names in os.walk(folder):
        found += [os.path.relpath(os.path.join(parent, name), folder) for name in names]
    return sorted(found)


def row_counts(job: str) -> dict[str, int]:
    """The data rows (lines after the header) of every CSV file of the job's bundle."""
    target = job_folder(job)
    counts = {}
    for name in files_in(target):
        if name.endswith(".csv"):
            with open(os.path.join(target, name), newline="", encoding="utf-8") as handle:
                counts[name] = max(sum(1 for _ in csv.reader(handle)) - 1, 0)
    return counts
