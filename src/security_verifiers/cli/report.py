"""``sv report``, ``sv view`` and ``sv compare``: what is read back from finished run directories."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from security_verifiers.cli.evaluate import print_errors, print_metrics
from security_verifiers.core.errors import ConfigError


def check_run_dir(run_dir: Path) -> None:
    """A ConfigError unless ``run_dir`` is a readable run directory of a known environment at this code's version,
    whose results are all of that environment: checked before a report or a comparison writes or computes
    anything (another version's outcomes may mean something else)."""
    from security_verifiers.core.rundir import read_records
    from security_verifiers.envs.base import get_env

    meta_path, results_path = run_dir / "metadata.json", run_dir / "results.jsonl"
    if not meta_path.is_file() or not results_path.is_file():
        raise ConfigError(f"{run_dir} is not a run directory (needs metadata.json and results.jsonl)")
    try:
        metadata = json.loads(meta_path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ConfigError(f"{meta_path}: unreadable ({err})") from err
    env_meta = metadata.get("env") if isinstance(metadata, dict) else None
    if not isinstance(env_meta, dict) or not isinstance(env_meta.get("name"), str) \
            or not isinstance(env_meta.get("version"), str):
        raise ConfigError(f"{meta_path}: not a run's metadata (no env name and version)")
    name, version = env_meta["name"], env_meta["version"]
    try:
        records = read_records(results_path)
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise ConfigError(f"{results_path}: unreadable ({' '.join(str(err).split())[:300]})") from err
    for record in records:
        if (record.env, record.env_version) != (name, version):
            raise ConfigError(f"{results_path} holds {record.env} {record.env_version} rollouts, but "
                              f"{meta_path.name} says {name} {version}: not one run")
    env = get_env(name, env_meta.get("config") or {})
    if version != env.version:
        raise ConfigError(f"{run_dir} was scored by {name} {version}; this code is {name} {env.version}, whose "
                          "metrics may read its outcomes differently: use the version that wrote it")


def cmd_report(args: argparse.Namespace) -> int:
    from security_verifiers.report import regenerate

    run_dir = Path(args.run_dir)
    check_run_dir(run_dir)
    summary = regenerate(run_dir)
    print_metrics(summary)  # the table `sv eval` prints
    print_errors(summary)
    if summary.get("status_detail"):
        print(f"sv: note: the run is {summary['status']} — {summary['status_detail']}; the report covers the "
              f"recorded rollouts only (`sv eval --resume --run-id {summary.get('run_id')}` completes it with the "
              "run's own settings)", file=sys.stderr)
    print(f"wrote {run_dir / 'summary.json'}, {run_dir / 'report.md'} and {run_dir / 'view.html'}", file=sys.stderr)
    return 0


def cmd_view(args: argparse.Namespace) -> int:
    from security_verifiers.report.view import write_view

    run_dir = Path(args.run_dir)
    out = Path(args.out) if args.out else None
    if out is not None and out.is_dir():
        raise ConfigError(f"--out {out} is a directory; give the file to write (e.g. {out / 'view.html'})")
    path = write_view(run_dir, out)
    print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB); open it in a browser", file=sys.stderr)
    return 0


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def cmd_compare(args: argparse.Namespace) -> int:
    from security_verifiers.report.compare import compare_runs

    if args.n_boot < 1:
        raise ConfigError("--n-boot must be at least 1")
    for run in (args.run_a, args.run_b):
        check_run_dir(Path(run))
    result = compare_runs(Path(args.run_a), Path(args.run_b), n_boot=args.n_boot)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    items = result["items"]
    print(f"{result['env']['name']} {result['env']['version']}: B = {result['b']['model']} against "
          f"A = {result['a']['model']} on {items['shared']} shared items (only in A: {items['only_a']}, only in B: "
          f"{items['only_b']}); delta = B - A, 95% paired bootstrap interval over items")

    headline = result["headline"]
    for key in [*headline, *(k for k in result["metrics"] if k not in headline)]:
        row = result["metrics"][key]
        lo, hi = row["ci"]
        print(f"  {key:<28} A {_fmt(row['a']):>8}  B {_fmt(row['b']):>8}  delta {_fmt(row['delta']):>8}  "
              f"[{_fmt(lo)}, {_fmt(hi)}]")
    return 0


def cmd_robust(args: argparse.Namespace) -> int:
    from security_verifiers.report.robustness import robustness

    if args.n_boot < 1:
        raise ConfigError("--n-boot must be at least 1")
    check_run_dir(Path(args.run_dir))
    result = robustness(Path(args.run_dir), n_boot=args.n_boot)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"{result['env']['name']} {result['env']['version']}, {result['model']}: each metric on the clean items "
          "and on their rewrites; delta = rewritten - clean, 95% paired bootstrap interval over items")

    for kind, row in result["kinds"].items():
        print(f"{kind} ({row['items']} items)")
        for key in result["headline"]:
            metric = row["metrics"].get(key)
            if metric is None:
                continue
            lo, hi = metric["ci"]
            print(f"  {key:<28} clean {_fmt(metric['a']):>8}  rewritten {_fmt(metric['b']):>8}  delta "
                  f"{_fmt(metric['delta']):>8}  [{_fmt(lo)}, {_fmt(hi)}]")
    return 0


# -- parser ----------------------------------------------------------------------------------
def register(sub: Any) -> None:
    """Add ``sv report`` to the command line's subcommands."""
    rp = sub.add_parser("report", help="Rebuild summary.json, report.md and plots from a run's results.jsonl.")
    rp.add_argument("run_dir", help="A run directory written by `sv eval`.")
    rp.set_defaults(func=cmd_report)

    vw = sub.add_parser("view", help="Write view.html: a page to browse a run's rollouts, transcripts and errors.",
                        description="One self-contained HTML file (no network: inline CSS and script) listing "
                        "every rollout of a run with its reward, outcome, error and, on click, its full transcript; "
                        "filters by outcome, error kind, parse failure and reward, and a search box. `sv eval` and "
                        "`sv report` write it too.")
    vw.add_argument("run_dir", help="A run directory written by `sv eval`.")
    vw.add_argument("--out", default=None, help="File to write (default: RUN_DIR/view.html).")
    vw.set_defaults(func=cmd_view)


def register_compare(sub: Any) -> None:
    """Add ``sv compare`` (after ``sv train``, where it has always been listed)."""
    cp = sub.add_parser("compare", help="Paired comparison of two runs: each metric's B - A with a 95%% bootstrap "
                        "interval over the items both scored.",
                        description="Compares two run directories of the same environment version and config "
                        "(refused otherwise) on the items both runs scored; the bootstrap resamples items, "
                        "taking every rollout of a drawn item from both runs.")
    cp.add_argument("run_a", help="Baseline run directory (A).")
    cp.add_argument("run_b", help="Run directory compared with it (B).")
    cp.add_argument("--json", action="store_true", help="Print the comparison as JSON.")
    cp.add_argument("--n-boot", type=int, default=1000, help="Bootstrap resamples (default 1000).")
    cp.set_defaults(func=cmd_compare)

    rb = sub.add_parser("robust", help="Robustness of a run: each metric on the clean items and on each rewrite "
                        "kind, paired, with 95%% bootstrap intervals (a run made with --split test,robust).",
                        description="Pairs each clean item of a run with its rewrites of the robust split (named "
                        "label-preserving rewrites: E1 address renumbering and time shift) and reports each headline "
                        "metric on both sides and the change with a paired bootstrap interval over items.")
    rb.add_argument("run_dir", help="A run directory of `sv eval ENV --split test,robust`.")
    rb.add_argument("--json", action="store_true", help="Print the report as JSON.")
    rb.add_argument("--n-boot", type=int, default=1000, help="Bootstrap resamples (default 1000).")
    rb.set_defaults(func=cmd_robust)
