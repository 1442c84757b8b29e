"""E2 (config-audit) speed in one run: the oracle per item, the same engines as one CLI process per item, and
`sv eval config-audit --model baseline:autofix` end to end (audit, patch, re-scan of original and patch).

1. Data: ``--n`` items built by the project's generator (``sv data build config-audit --split dev``; timed
   apart, not counted), and the committed public test set (150 items).
2. Oracle, warm, in-process, on ``--oracle-n`` of those items: seconds per item (median, p90), and the
   first scan of a fresh process (imports and engine loading) -- see ``e2_oracle.py``.
3. The same engines the common way, one CLI process per engine per item (checkov, semgrep, Rego in a fresh
   interpreter), on ``--cli-n`` items.
4. End to end: the real CLI in a subprocess (process start, imports, engine loading, every episode, every
   re-scan, results.jsonl, report with plots), for each ``--score-workers`` setting. ``items_per_s`` =
   items / wall seconds of that process; ``runner_items_per_s`` leaves out start-up and the report. Each run
   twice with one fresh cache directory: ``cold`` (nothing scanned or parsed yet; within the run the scoring
   worker still reads what the runner's process stored) and ``warm`` (the scanner findings and parses the first
   run stored, ``engines/scan_store.py`` and ``engines/parse_store.py``, as a second run or a second epoch finds
   them). The generated items also run ``built``: in a copy of the cache directory ``sv data build`` used, which
   holds what labelling the items computed (every original's scans and parses, none of the patches': the state
   of an RL run's first epoch on data built on the machine), then ``warm`` again.

The goal is at least 20 items/s end to end on two cores. Prints one JSON document (``--out`` also writes it).

    python benchmarks/e2_throughput.py                 # ~4 min on 2 cores
    python benchmarks/e2_throughput.py --n 300 --cli-n 2 --score-workers default
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

import e2_oracle  # noqa: E402  (a sibling script: the oracle and CLI measurements)

from security_verifiers.envs.config_audit import ConfigAudit  # noqa: E402


def sv(*args: str) -> list[str]:
    return [sys.executable, "-m", "security_verifiers.cli", *args]


def build_data(n: int, seed: int, path: Path, cache: Path) -> dict[str, object]:
    """Generate the items with ``cache`` as the cache directory: the generator labels each item with the oracle,
    so the originals' scans and parses are stored there, as on a machine that built its own data."""
    t0 = time.perf_counter()
    proc = subprocess.run(sv("data", "build", "config-audit", "--split", "dev", "--n", str(n), "--seed", str(seed),
                             "--out", str(path)), capture_output=True, text=True,
                          env={**os.environ, "SV_CACHE_DIR": str(cache)})
    if proc.returncode != 0:
        raise SystemExit(f"data build failed: {proc.stderr[-2000:]}")
    return {"items": n, "seed": seed, "build_seconds": round(time.perf_counter() - t0, 1)}


def end_to_end(data: list[str], workers: str, out: Path, label: str, cache: Path) -> dict[str, object]:
    argv = sv("eval", "config-audit", "--model", "baseline:autofix", "--out", str(out), "--run-id", label,
              "--quiet", *data)
    if workers != "default":
        argv += ["--score-workers", workers]
    t0 = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, "SV_CACHE_DIR": str(cache)})
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"sv eval failed: {proc.stderr[-2000:]}")
    run_dir = next(out.glob(f"evals/*/{label}"))
    meta = json.loads((run_dir / "metadata.json").read_text())
    summary = json.loads((run_dir / "summary.json").read_text())
    n = meta["rollouts"]["total"]
    return {
        "score_workers": meta["run"]["score_workers"] if workers != "default" else
        f"default (config-audit: {ConfigAudit.score_workers})",
        "items": n, "seconds": round(wall, 2), "items_per_s": round(n / wall, 2),
        "runner_seconds": meta["seconds"], "runner_items_per_s": round(n / meta["seconds"], 2),
        "outside_runner_seconds": round(wall - meta["seconds"], 2),
        "errors": summary["counts"]["errors"], "reward_mean": round(summary["metrics"]["reward_mean"], 4),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1000, help="Generated items for the end-to-end run.")
    parser.add_argument("--seed", type=int, default=7, help="Generator seed.")
    parser.add_argument("--oracle-n", type=int, default=60, help="Items for the warm oracle measurement.")
    parser.add_argument("--cli-n", type=int, default=5, help="Items for the one-CLI-process-per-item measurement.")
    parser.add_argument("--score-workers", default="default,0",
                        help="Comma-separated --score-workers settings to run end to end ('default' = the env's).")
    parser.add_argument("--out", type=Path, help="Also write the JSON result here.")
    args = parser.parse_args()
    result: dict[str, object] = {"cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp, "items.jsonl")
        build_cache = Path(tmp, "build-cache")
        result["data"] = build_data(args.n, args.seed, data, build_cache)
        print(f"built {args.n} items", file=sys.stderr)

        from security_verifiers.core.datasets import read_jsonl

        items = [(i.input["platform"], i.input["text"]) for i in read_jsonl(data, dataset_id="bench").items]
        oracle = e2_oracle.in_process(items[: args.oracle_n])
        print("measured the warm oracle", file=sys.stderr)
        subset = items[:: max(1, args.oracle_n // max(1, args.cli_n))][: args.cli_n]
        per_file = e2_oracle.cli(subset)
        print("measured one CLI process per engine per item", file=sys.stderr)
        result["oracle_in_process"] = oracle
        result["cli_per_item_s"] = per_file
        warm = oracle["warm_per_item_s"]["median"]  # type: ignore[index]
        result["speedup_cli_vs_warm_oracle"] = round(per_file["total"]["median"] / warm, 1)  # type: ignore[index]

        runs = []
        for workers in [w.strip() for w in args.score_workers.split(",") if w.strip()]:
            for name, source in ((f"generated-{args.n}", ["--data", str(data)]), ("public-test", ["--split", "test"])):
                stores = ["cold", "warm"]
                if name.startswith("generated"):  # and once more from what the build stored, then warm
                    stores += ["built", "warm"]
                cache = Path(tempfile.mkdtemp(dir=tmp))  # a cold scan store, then the same one warm
                for k, store in enumerate(stores):
                    if store == "built":
                        cache = Path(tempfile.mkdtemp(dir=tmp), "cache")
                        shutil.copytree(build_cache, cache)
                    row = end_to_end(source, workers, Path(tmp, "runs"), f"{name}-w{workers}-{k}-{store}", cache)
                    runs.append({"dataset": name, "scan_store": store, **row})
                    print(f"{name:<16} score_workers={workers:<8} store {store}: {row['items_per_s']:6.2f} items/s "
                          f"end to end ({row['seconds']} s; runner {row['runner_items_per_s']} items/s)",
                          file=sys.stderr)
        result["end_to_end"] = runs
        cli_s = per_file["total"]["median"]  # type: ignore[index]
        result["cli_items_per_s"] = round(1 / cli_s, 3)
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
