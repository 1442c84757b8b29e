"""End-to-end items/s of `sv eval config-audit --model baseline:autofix` (audit, patch, re-scan), on two cores.

Runs the real CLI in a subprocess on the public test set (or `--data FILE`), so process start,
engine loading, the baseline's scans, patch application and the oracle's re-scan of every original
and patched file (batched semgrep) all count. Reports items/s end to end and inside the runner.

    python benchmarks/e2_throughput.py
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
    parser.add_argument("--model", default="baseline:autofix", help="Policy to run.")
    parser.add_argument("--data", default=None, help="A dataset file (default: the public test split).")
    parser.add_argument("--mode", default="no_tools", choices=["no_tools", "tools"], help="Episode mode.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        argv = [sys.executable, "-m", "security_verifiers.cli", "eval", "config-audit", "--model", args.model,
                "--out", tmp, "--run-id", "bench", "--quiet", "--concurrency", "8",
                "--env-option", f"mode={args.mode}"]
        argv += ["--data", args.data] if args.data else ["--split", "test"]
        t0 = time.perf_counter()
        proc = subprocess.run(argv, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            print(proc.stderr, file=sys.stderr)
            return proc.returncode
        run_dir = next(Path(tmp, "evals").glob("*/bench"))
        meta = json.loads((run_dir / "metadata.json").read_text())
        summary = json.loads((run_dir / "summary.json").read_text())
        n = meta["rollouts"]["total"]
        result = {
            "model": args.model, "mode": args.mode, "items": n,
            "end_to_end_seconds": round(wall, 2), "end_to_end_items_per_s": round(n / wall, 2),
            "runner_seconds": meta["seconds"], "runner_items_per_s": round(n / meta["seconds"], 2),
            "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1),
            "errors": summary["counts"]["errors"], "reward_mean": summary["metrics"].get("reward_mean"),
            "engines": meta.get("tools"),
        }
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
