"""``sv merge RUN... --out DIR``: one run from the shards of ``sv eval --shard i/N`` (:mod:`..report.merge`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from security_verifiers.cli.common import add_log_level


def cmd_merge(args: argparse.Namespace) -> int:
    from security_verifiers.cli.evaluate import print_errors, print_metrics
    from security_verifiers.report import regenerate
    from security_verifiers.report.merge import merge_runs

    out = merge_runs([Path(p) for p in args.runs], Path(args.out))
    summary = regenerate(out)
    print_metrics(summary)
    print_errors(summary)
    print(f"merged {len(args.runs)} shard(s) into {out}: report {out / 'report.md'}", file=sys.stderr)
    return 0


def register(sub: Any) -> None:
    """Add ``sv merge`` to the command line's subcommands."""
    mg = sub.add_parser("merge", help="Join the runs of `sv eval --shard i/N` into one run (summary, report, view).",
                        description="Checks that the runs are the N parts of one evaluation (same environment, "
                        "config, model, sampling, scanner versions and dataset; every shard once; each finished "
                        "and holding exactly its items), then writes one run directory with every rollout, its "
                        "metadata (the whole dataset, the parts) and its summary, report and view.")
    mg.add_argument("runs", nargs="+", metavar="RUN", help="The shards' run directories.")
    mg.add_argument("--out", required=True, help="The merged run's directory, new or empty (no default).")
    add_log_level(mg)
    mg.set_defaults(func=cmd_merge)
