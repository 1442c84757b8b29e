"""How much of what a real scanner reports on real configs the E2 oracle covers.

    python benchmarks/e2_coverage.py DIR [DIR ...] [--json OUT]

For every directory: the Checkov CLI (the pinned version, offline) scans it as a user would
(``checkov -d DIR --framework terraform kubernetes``), and ``sv data import config-audit`` turns it into items
labelled by the oracle. A Checkov failure is *covered* when its check maps onto a catalog rule that the oracle
reports on the same file (and, stricter, on the same resource). Figures are per platform; the uncovered checks
are listed, most frequent first. Files the importer skips (templates, tooling) are counted apart: they are not
configs the environment audits.

Use any directory of real configs you assemble from public sources (TerraGoat, kubernetes/examples,
kubernetes-goat, ...); nothing of them belongs in this repository.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from security_verifiers.engines.checkov import OFFLINE_ENV
from security_verifiers.engines.findings import checkov_map
from security_verifiers.envs.config_audit.loaders import load_directory_report

FRAMEWORKS = {"terraform": "terraform", "kubernetes": "kubernetes"}


def checkov_failures(directory: Path) -> list[dict[str, Any]]:
    """Every failed check of the Checkov CLI on ``directory``: platform, file (relative), check id, resource."""
    binary = Path(sys.executable).parent / "checkov"
    command = [str(binary), "-d", str(directory), "--framework", "terraform", "kubernetes", "-o", "json",
               "--quiet", "--compact", "--skip-download"]
    proc = subprocess.run(command, capture_output=True, text=True, env={**os.environ, **OFFLINE_ENV}, timeout=1800)
    if not proc.stdout.strip():
        raise SystemExit(f"checkov produced no output (exit {proc.returncode}): {proc.stderr[-2000:]}")
    reports = json.loads(proc.stdout)
    reports = reports if isinstance(reports, list) else [reports]
    out = []
    for report in reports:
        platform = report.get("check_type")
        if platform not in FRAMEWORKS:
            continue
        for failed in report.get("results", {}).get("failed_checks", []):
            out.append({"platform": platform, "file": str(failed["file_path"]).lstrip("/"),
                        "check": str(failed["check_id"]), "resource": str(failed["resource"])})
    return out


def _same_resource(platform: str, checkov_resource: str, ours: set[str]) -> bool:
    """Checkov names ``Kind.namespace.name`` / ``type.name[...]``; we name ``Kind/name`` / ``type.name``."""
    if platform == "kubernetes":
        kind, _, rest = checkov_resource.partition(".")
        _, _, name = rest.partition(".")
        return f"{kind}/{name}" in ours or any(r.startswith(f"{kind}/") and name.startswith(r.split("/", 1)[1])
                                               for r in ours) or any(name.startswith(r.split("/", 1)[1] + ".")
                                                                     for r in ours)
    base = checkov_resource.split("[", 1)[0]
    return base in ours or f"data.{base}" in ours or any(r.endswith("." + base) for r in ours)


def coverage(directory: Path) -> dict[str, Any]:
    t0 = time.perf_counter()
    failures = checkov_failures(directory)
    t1 = time.perf_counter()
    report = load_directory_report(directory)
    t2 = time.perf_counter()
    found: dict[str, dict[str, set[str]]] = {}  # file -> rule -> resources
    for item in report.items:
        rules: dict[str, set[str]] = {}
        for finding in item.target["findings"]:
            rules.setdefault(finding["rule_id"], set()).add(finding["resource"])
        found[item.meta["source"]] = rules
    skipped = {rel for rel, _ in report.skipped} | {p.file for p in report.problems}
    per: dict[str, Counter[str]] = {p: Counter() for p in FRAMEWORKS}
    uncovered: dict[str, Counter[str]] = {p: Counter() for p in FRAMEWORKS}
    for failure in failures:
        platform, file = failure["platform"], failure["file"]
        counts = per[platform]
        if file in skipped or file not in found:
            counts["in_skipped_files"] += 1
            continue
        counts["failures"] += 1
        rule = checkov_map(platform).get(failure["check"])
        if rule is None:
            counts["unmapped"] += 1
        rules = found[file]
        if rule in rules:
            counts["covered_file"] += 1
            if _same_resource(platform, failure["resource"], rules[rule]):
                counts["covered_resource"] += 1
            continue
        uncovered[platform][f"{failure['check']} -> {rule}"] += 1
    out: dict[str, Any] = {"directory": str(directory), "checkov_seconds": round(t1 - t0, 1),
                           "import_seconds": round(t2 - t1, 1), "items": len(report.items),
                           "skipped_files": len(report.skipped), "problem_files": len(report.problems),
                           "platforms": {}}
    for platform, counts in per.items():
        n = counts["failures"]
        out["platforms"][platform] = {
            "checkov_failures": n, "distinct_checks": len({f["check"] for f in failures if f["platform"] == platform}),
            "covered_same_file": counts["covered_file"], "covered_same_resource": counts["covered_resource"],
            "coverage_same_file": round(counts["covered_file"] / n, 4) if n else None,
            "coverage_same_resource": round(counts["covered_resource"] / n, 4) if n else None,
            "unmapped_checks": counts["unmapped"], "failures_in_skipped_files": counts["in_skipped_files"],
            "uncovered_top": uncovered[platform].most_common(15)}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dirs", nargs="+", help="Directories of real configs.")
    parser.add_argument("--json", default=None, help="Write the figures to this file too.")
    args = parser.parse_args()
    results = [coverage(Path(d)) for d in args.dirs]
    for result in results:
        print(f"\n{result['directory']}: {result['items']} items, {result['skipped_files']} files skipped, "
              f"{result['problem_files']} unreadable (checkov {result['checkov_seconds']} s, import "
              f"{result['import_seconds']} s)")
        for platform, figures in result["platforms"].items():
            if not figures["checkov_failures"] and not figures["failures_in_skipped_files"]:
                continue
            print(f"  {platform:<10} Checkov failures {figures['checkov_failures']:>5} "
                  f"({figures['distinct_checks']} checks): covered on the same file {figures['coverage_same_file']}"
                  f", on the same resource {figures['coverage_same_resource']}; unmapped "
                  f"{figures['unmapped_checks']}; failures in skipped files {figures['failures_in_skipped_files']}")
            for check, count in figures["uncovered_top"][:8]:
                print(f"      uncovered {count:>3} x {check}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
