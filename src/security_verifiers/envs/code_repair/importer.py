"""``sv data import code-repair``: vulnerability-fix corpora (Big-Vul, CVEfixes, JSON Lines records) as
detection-only items, or real-code cases as self-checked repair items (the readers are in :mod:`.loaders` and
:mod:`.cases`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from security_verifiers.core.errors import ConfigError
from security_verifiers.core.importing import (
    Argument,
    Importer,
    ImportProgress,
    ImportRun,
    ImportSummary,
    positive_limit,
    problem_lines,
)


def _cases(values: dict[str, Any], progress: ImportProgress, limit: int | None) -> ImportRun:
    """Real-code cases: each self-checked in the sandbox, rejected with the reason when it fails; repair items (or
    detection-only ones, for cases without a fix)."""
    from security_verifiers.envs.code_repair.cases import import_cases

    wheelhouse = Path(values["wheelhouse"]) if values["wheelhouse"] else None
    progress.say(f"reading cases under {', '.join(values['files'])}...")
    report = import_cases([Path(p) for p in values["files"]], wheelhouse, split=values["split"], limit=limit,
                          parallel=max(1, min(4, os.cpu_count() or 1)), progress=progress.say)

    def summary() -> ImportSummary:
        lines = []
        if report.rejected:
            lines.append(f"{len(report.rejected)} case(s) rejected:")
            lines += [f"  {case}: {reason}" for case, reason in report.rejected]
        others = report.problems.total - len(report.rejected)
        if others:
            lines.append(f"{others} folder(s) left out:")
            rejected = {case for case, _ in report.rejected}
            lines += [f"  {problem}" for problem in report.problems.shown if problem.file not in rejected]
        lines.append(f"{len(report.items)} item(s) ({report.detection} detection-only) from {report.read} case(s); "
                     f"{len(report.sites)} site directory(ies); self-check {report.check_seconds:.1f}s")
        return ImportSummary(len(report.items), report.problems.total, lines,
                             {"rejected": len(report.rejected), "detection": report.detection})

    return ImportRun(report.items, summary)


def run(values: dict[str, Any], progress: ImportProgress) -> ImportRun:
    from security_verifiers.envs.code_repair.loaders import import_records

    limit = positive_limit(values)
    if values["format"] == "cases":
        return _cases(values, progress, limit)
    if values["wheelhouse"] is not None:
        raise ConfigError("--wheelhouse is for --format cases")
    paths = [Path(p) for p in values["files"]]
    for path in paths:
        if not path.is_file():
            raise ConfigError(f"{path}: no such file")
    progress.say(f"reading {len(paths)} file(s) as {values['format']}...")
    report = import_records(values["format"], paths, split=values["split"], limit=limit)

    def summary() -> ImportSummary:
        lines = []
        if report.skipped:
            lines.append(f"{sum(report.skipped.values())} record(s) skipped:")
            lines += [f"  {count} {reason}" for reason, count in report.skipped.most_common()]
        lines += problem_lines(report.problems.shown, report.problems.total, "record(s)")
        reached = " (--limit reached)" if limit is not None and len(report.items) >= limit else ""
        lines.append(f"{len(report.items)} item(s) from {report.read} record(s) of {len(paths)} file(s){reached}")
        return ImportSummary(len(report.items), report.problems.total, lines,
                             {"skipped": sum(report.skipped.values())})

    return ImportRun(report.items, summary)


IMPORTER = Importer(
    help="Vulnerability-fix corpora (Big-Vul, CVEfixes, JSON Lines records), or real-code cases with tests.",
    description="Corpora: each Python function before its security fix becomes a detection-only item (scored on "
    "naming its CWE and the changed lines; nothing is run). Other languages, records without a usable CWE, "
    "unchanged and duplicate functions are skipped with the reason. Cases (--format cases DIR): folders of a small "
    "program, its fix, its functional and exploit probes, fixtures and pinned requirements (layout: "
    "envs/code_repair/README.md, 'Real code: cases'); each is self-checked in the sandbox (the vulnerable version "
    "is exploited, the fixed one passes every probe) and rejected with the reason otherwise.",
    arguments=(
        Argument(("files",), {"nargs": "+", "metavar": "FILE",
                              "help": "Corpus files, read in the order given (--format cases: case folders, or "
                              "folders of them)."}),
        Argument(("--format",), {
            "required": True, "choices": ("bigvul", "cvefixes", "records", "cases"),
            "help": "bigvul: MSR_data_cleaned.csv; cvefixes: the CVEfixes SQLite database; records: JSON Lines of "
            "{before, after, cwe, file?, cve?, project?, language?}; cases: folders of real-code cases."}),
        Argument(("--limit",), {"type": int, "default": None,
                                "help": "Stop after N items (--format cases: N case folders)."}),
        Argument(("--wheelhouse",), {
            "default": None, "metavar": "DIR",
            "help": "--format cases: the wheels of the cases' requirements (made with `pip download --only-binary "
            ":all: -d DIR name==version ...`), installed offline into read-only site directories under "
            "$SV_CACHE_DIR/code-repair-sites."}),
    ),
    run=run,
)
