"""Reports of a run, rebuilt from its ``metadata.json`` and ``results.jsonl`` alone (``sv report``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from security_verifiers.core.rundir import latest_by_key, read_results_file
from security_verifiers.envs.base import get_env
from security_verifiers.report.markdown import write_report
from security_verifiers.report.summary import SUMMARY_SCHEMA_VERSION, build_summary, read_results
from security_verifiers.report.view import write_view

__all__ = ["SUMMARY_SCHEMA_VERSION", "build_summary", "read_results", "regenerate", "write_report", "write_view"]


def regenerate(run_dir: Path) -> dict[str, Any]:
    """Rewrite ``summary.json``, the plots, ``report.md`` and ``view.html`` of ``run_dir``; returns the summary.

    The environment is rebuilt from the name and config recorded in ``metadata.json``, so the report
    uses the same cost profile and settings as the run, and no model is called. A results file that falls
    short of the metadata (a cut final line, missing rollouts) makes the status ``incomplete``.
    """
    run_dir = Path(run_dir)
    metadata = json.loads((run_dir / "metadata.json").read_text(encoding="utf-8"))
    env = get_env(metadata["env"]["name"], metadata["env"].get("config"))
    # Slim records (outcomes, no conversations): a summary of 100,000 rollouts does not hold their transcripts;
    # the view reads them again from the file, a part at a time.
    results = read_results_file(run_dir / "results.jsonl", transcripts=False)
    records = latest_by_key(results.records)
    summary = build_summary(env, records, metadata, cut_line=results.cut_line)
    text = json.dumps(summary, indent=2, allow_nan=False)
    (run_dir / "summary.json").write_text(text + "\n", encoding="utf-8")
    outcomes = [r.outcome for r in records if r.error is None]
    plots = env.plots(outcomes, run_dir) if outcomes else []
    write_report(run_dir, env, summary, plots)
    write_view(run_dir, metadata=metadata, results=results, summary=summary)  # the records' places are known
    return summary
