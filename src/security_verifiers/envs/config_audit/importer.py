"""``sv data import config-audit``: a directory of Kubernetes manifests and Terraform files, labelled by the
oracle (the readers are in :mod:`.loaders`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from security_verifiers.core.importing import (
    Argument,
    Importer,
    ImportProgress,
    ImportRun,
    ImportSummary,
    problem_lines,
)


def run(values: dict[str, Any], progress: ImportProgress) -> ImportRun:
    from security_verifiers.envs.config_audit.loaders import load_directory_report

    stages: set[str] = set()

    def show(stage: str, done: int, total: int) -> None:
        if stage not in stages:
            stages.add(stage)
            progress.begin(f"{stage} files" if stage == "reading" else "labelling (oracle)", total=total)
        progress.update(completed=done)

    report = load_directory_report(Path(values["dir"]), split=values["split"], progress=show)

    def summary() -> ImportSummary:
        lines = []
        if report.skipped:
            lines.append(f"{len(report.skipped)} file(s) skipped (not configs to audit):")
            lines += [f"  {rel}: {reason}" for rel, reason in report.skipped]
        lines += problem_lines(report.problems, len(report.problems), "file(s)")
        lines.append(f"{len(report.items)} item(s) from {values['dir']}: {len(report.skipped)} skipped, "
                     f"{len(report.problems)} problem(s), {report.ignored} file(s) of other types ignored")
        return ImportSummary(len(report.items), len(report.problems), lines, {"skipped": len(report.skipped)})

    return ImportRun(report.items, summary)


IMPORTER = Importer(
    help="Kubernetes manifests and Terraform files under a directory.",
    description="Every Kubernetes manifest (*.yaml, *.yml) and Terraform file with resources (*.tf) under DIR "
    "becomes an item labelled by the oracle; Helm templates, tooling configs (kind, kubeadm, kustomize) and other "
    "YAML are skipped with the reason; kubectl's `kind: List` is expanded into its items; a Terraform file carries "
    "its module's variable and locals files as context.",
    arguments=(Argument(("dir",), {"help": "Directory to read (recursively; hidden directories are skipped)."}),),
    run=run,
)
