"""Throughput of `sv eval network-logs --model baseline:heuristic` on N generated items, end to end.

Runs the real CLI in a subprocess (so process start, dataset load, the runner, writing results.jsonl
and the report all count) and reports rollouts per second and the child's peak resident memory.
The runner's own figure (seconds inside the episode loop) is read from metadata.json.

    python benchmarks/e1_throughput.py --n 10000
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=10_000, help="Items to evaluate.")
    parser.add_argument("--model", default="baseline:heuristic", help="Policy to run.")
    parser.add_argument("--seed", type=int, default=7, help="Generator seed of the items.")
    args = parser.parse_args()
    sv = [sys.executable, "-m", "security_verifiers.cli"]
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "items.jsonl"
        t0 = time.perf_counter()
        subprocess.run([*sv, "data", "build", "network-logs", "--split", "test", "--n", str(args.n),
                        "--seed", str(args.seed), "--out", str(data)], check=True, capture_output=True)
        build_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        proc = subprocess.run([*sv, "eval", "network-logs", "--model", args.model, "--data", str(data),
                               "--out", tmp, "--run-id", "bench", "--quiet", "--concurrency", "8"],
                              capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            print(proc.stderr, file=sys.stderr)
            return proc.returncode
        peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        run_dir = next(Path(tmp, "evals").glob("*/bench"))
        meta = json.loads((run_dir / "metadata.json").read_text())
        lines = sum(1 for _ in (run_dir / "results.jsonl").open())
        result = {
            "n": args.n, "model": args.model, "results_lines": lines,
            "build_seconds": round(build_s, 2),
            "end_to_end_seconds": round(wall, 2),
            "end_to_end_rollouts_per_s": round(args.n / wall, 1),
            "runner_seconds": meta["seconds"],
            "runner_rollouts_per_s": round(args.n / meta["seconds"], 1),
            "peak_rss_mib": round(peak_mib, 1),
            "results_mib": round((run_dir / "results.jsonl").stat().st_size / 2**20, 1),
        }
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
