"""``sv bench``: the main job's command (the work is in :mod:`security_verifiers.bench`)."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from security_verifiers.cli.common import add_executor_options, add_log_level
from security_verifiers.core.errors import ConfigError


def cmd_bench(args: argparse.Namespace) -> int:
    from security_verifiers.bench import run_bench
    from security_verifiers.envs.base import get_env

    out = Path(args.out) if args.out else Path("outputs") / "bench" / datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is a file; give a directory")
    envs = args.env or None
    for name in envs or ():
        get_env(name)  # an unknown environment is named before anything runs
    return run_bench(out, envs, jobs=args.jobs, all_baselines=args.all_baselines, robust=args.robust,
                     executor=args.executor, ray_address=args.ray_address)


# -- parser ----------------------------------------------------------------------------------
def register(sub: Any) -> None:
    """Add ``sv bench`` to the command line's subcommands."""
    bn = sub.add_parser("bench", help="Run every environment's baselines on the public mini sets, offline.",
                        description="The main job: every registered environment × its built-in baselines on the "
                        "public splits; writes each run's report and a leaderboard (leaderboard.md/.json).")
    bn.add_argument("--out", default=None, help="Output directory (default: outputs/bench/<timestamp>/).")
    bn.add_argument("--env", action="append", default=[], help="Only these environments (repeatable).")
    bn.add_argument("--jobs", type=int, default=None,
                    help="Worker processes, one environment each (default: one per core, at most one per "
                    "environment; 1 runs everything in this process).")
    bn.add_argument("--all-baselines", action="store_true",
                    help="Run every hack, not only the strongest ones of environments whose hacks take seconds per "
                    "item to judge (code-repair, config-audit); the conformance tests always run them all.")
    bn.add_argument("--robust", action="store_true",
                    help="Also run the baselines on each environment's robust split (label-preserving "
                    "rewrites of the test items) and write robustness.md/.json: each headline metric clean vs each "
                    "rewrite kind, paired, with 95%% intervals (default: off).")
    add_executor_options(bn)
    add_log_level(bn)
    bn.set_defaults(func=cmd_bench)
