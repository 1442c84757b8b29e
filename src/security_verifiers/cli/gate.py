"""``sv gate``: fail (exit 1) when a run scores worse than a baseline run; ``sv gate --record``: write the baselines'
committed public-set scores (the gate the test suite holds every environment to)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from security_verifiers.cli.report import check_run_dir
from security_verifiers.core.errors import ConfigError
from security_verifiers.report.gate import DEFAULT_MAX_DROP, FAIL, PASS

DESCRIPTION = f"""\
Compares RUN with BASELINE_RUN (two run directories of the same environment version and config) on the items both
scored, with a paired bootstrap over items, as `sv compare` does. A metric FAILS when it dropped (went the worse way
for that metric: down where higher is better, up where lower is) by more than its tolerance AND the 95% interval of
the change lies wholly on the worse side of 0; otherwise it passes (n/a: undefined in a run). Exit status: 0 every
metric passed, 1 one failed, 2 a usage error (runs of different environments, versions or configs, runs sharing no
item, an unknown metric).

Checked by default: the environment's headline metrics, each with tolerance {DEFAULT_MAX_DROP}.

  sv gate outputs/evals/phishing--new/r2 --against outputs/evals/phishing--old/r1
  sv gate RUN --against BASE --metric reward_mean --metric f1 --max-drop 0.02 --max-drop f1=0.05
  sv gate RUN --against BASE --metric precision:higher   # a metric outside the headline needs its direction

--record measures instead every built-in baseline of each environment on its public splits and writes its
reward_mean and headline metrics to the environment's data/baseline_scores.json (the suite's conformance tests fail
when a baseline's score moves away from that file: a change that moves one bumps the environment's version and
changelog and records the file again):

  sv gate --record --env phishing
"""


def cmd_gate(args: argparse.Namespace) -> int:
    if args.record:
        if args.run or args.against or args.metric or args.max_drop:
            raise ConfigError("--record takes only --env: it measures the built-in baselines, not runs")
        return _record(args.env)
    if args.env:
        raise ConfigError("--env goes with --record; a gate reads the environment from its runs")
    if not args.run or not args.against:
        raise ConfigError("give the run to gate and the baseline run: sv gate RUN --against BASELINE_RUN "
                          "(or --record)")
    if args.n_boot < 1:
        raise ConfigError("--n-boot must be at least 1")
    from security_verifiers.report.gate import gate_runs

    for run in (args.run, args.against):
        check_run_dir(Path(run))
    result = gate_runs(Path(args.run), Path(args.against), args.metric, args.max_drop, n_boot=args.n_boot)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        _print(result)
    return 0 if result["passed"] else 1


def _print(result: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    def fmt(value: float | None, signed: bool = False) -> str:
        return "-" if value is None else (f"{value:+.4f}" if signed else f"{value:.4f}")

    items = result["items"]
    table = Table(title=f"sv gate: {result['env']['name']} {result['env']['version']}, {result['run']['model']} "
                  f"against {result['against']['model']} on {items['shared']} shared items")
    for column in ("metric", "better", "baseline", "run", "change", "95% interval", "max drop", "verdict"):
        table.add_column(column, justify="left" if column in ("metric", "better") else "right")
    for row in result["rows"]:
        lo, hi = row["ci"]
        color = {PASS: "green", FAIL: "bold red"}.get(row["verdict"], "dim")
        table.add_row(row["metric"], "higher" if row["higher_is_better"] else "lower", fmt(row["baseline"]),
                      fmt(row["run"]), fmt(row["delta"], signed=True), f"[{fmt(lo, True)}, {fmt(hi, True)}]",
                      fmt(row["max_drop"]), f"[{color}]{row['verdict']}[/]")
    console = Console()
    console = console if console.is_terminal else Console(width=160)
    console.print(table)
    failed = [row["metric"] for row in result["rows"] if row["verdict"] == FAIL]
    print(f"FAIL: {', '.join(failed)} dropped beyond tolerance, the interval excluding 0" if failed
          else "PASS: no metric dropped beyond its tolerance with the interval excluding 0")
    if items["only_a"] or items["only_b"]:
        print(f"sv gate: note: {items['only_b']} item(s) only in the run and {items['only_a']} only in the baseline "
              "were left out", file=sys.stderr)


def _record(names: list[str]) -> int:
    from security_verifiers.envs.base import get_env, registry
    from security_verifiers.harness.public_scores import measure, write_record

    envs = [get_env(name) for name in names] or [factory() for _, factory in sorted(registry().items())]
    for env in envs:
        print(f"{env.name} {env.version}: playing every baseline on {', '.join(env.public_splits)}...",
              file=sys.stderr)
        table, hashes = measure(env)
        path = write_record(env, table, hashes)
        for split, rows in table.items():
            for name, row in rows.items():
                print(f"  {split:<5} {name:<28} reward_mean {row['reward_mean']:.4f}")
        print(f"wrote {path}", file=sys.stderr)
    return 0


# -- parser ----------------------------------------------------------------------------------
def register(sub: Any) -> None:
    """Add ``sv gate`` to the command line's subcommands."""
    gt = sub.add_parser("gate", help="Regression gate: exit 1 when a run's metrics drop below a baseline run's "
                        "beyond tolerance (paired bootstrap); --record writes the baselines' public-set scores.",
                        description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    gt.add_argument("run", nargs="?", help="The run directory to gate (written by `sv eval`).")
    gt.add_argument("--against", metavar="BASELINE_RUN", help="The baseline run directory it must not fall below.")
    gt.add_argument("--metric", action="append", default=[], metavar="M",
                    help="A metric to check (repeatable; default: the environment's headline metrics). Outside the "
                    "headline, say which way is better: KEY:higher or KEY:lower.")
    gt.add_argument("--max-drop", action="append", default=[], metavar="D",
                    help=f"Tolerance: the largest drop that passes, in the metric's units (default {DEFAULT_MAX_DROP}"
                    "); KEY=D for one metric (repeatable).")
    gt.add_argument("--json", action="store_true", help="Print the verdict as JSON (the exit status is the same).")
    gt.add_argument("--n-boot", type=int, default=1000, help="Bootstrap resamples (default 1000).")
    gt.add_argument("--record", action="store_true",
                    help="Instead of gating: measure every built-in baseline on the public splits and write each "
                    "environment's data/baseline_scores.json.")
    gt.add_argument("--env", action="append", default=[], help="With --record: only these environments (repeatable).")
    gt.set_defaults(func=cmd_gate)
