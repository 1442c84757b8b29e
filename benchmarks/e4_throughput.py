"""E4 phishing end to end: ``sv eval phishing --model baseline:heuristic`` on 10,000 generated items.

1. Generate 10,000 items of the ``dev`` split (``sv data build phishing --split dev --n 10000``), timed on its own.
2. Run ``sv eval phishing --data FILE --model baseline:heuristic`` as a real subprocess of the CLI: the message of
   every item parsed and rendered for the prompt, the heuristic's answer, the one scorer (evidence verifiers
   included), the report and plots. items/s = items / the runner's own seconds (metadata.json), and also / the
   whole process (imports, dataset load, report). Goal: at least 500 items/s on 2 cores.

    python benchmarks/e4_throughput.py               # ~1 min on 2 cores
    python benchmarks/e4_throughput.py --n 2000 --json e4.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def _run(argv: list[str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "security_verifiers.cli", *argv], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"sv {' '.join(argv[:3])} failed ({proc.returncode}): {proc.stderr[-3000:]}")
    return time.perf_counter() - start


def measure(n: int, policy: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "dev.jsonl"
        build_s = _run(["data", "build", "phishing", "--split", "dev", "--n", str(n), "--seed", "11", "--out",
                        str(data)])
        wall = _run(["eval", "phishing", "--data", str(data), "--model", f"baseline:{policy}", "--out", tmp,
                     "--run-id", "speed", "--quiet"])
        run_dir = next(Path(tmp).glob("evals/*/speed"))
        meta = json.loads((run_dir / "metadata.json").read_text())
        summary = json.loads((run_dir / "summary.json").read_text())
    total = meta["rollouts"]["total"]
    return {"items": total, "policy": policy, "build_seconds": round(build_s, 2),
            "runner_seconds": meta["seconds"], "items_per_s": round(total / meta["seconds"], 1),
            "process_seconds": round(wall, 2), "process_items_per_s": round(total / wall, 1),
            "reward_mean": summary["metrics"]["reward_mean"], "errors": summary["counts"]["errors"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=10_000, help="Generated items (default 10,000).")
    parser.add_argument("--policy", default="heuristic", help="Baseline to run (default heuristic).")
    parser.add_argument("--json", type=Path, default=Path("outputs/benchmarks/e4_throughput.json"),
                        help="Where to write the figures.")
    args = parser.parse_args()
    figures = measure(args.n, args.policy)
    print(f"sv data build phishing --n {args.n}: {figures['build_seconds']} s")
    print(f"sv eval phishing --model baseline:{args.policy}, {figures['items']} items on {os.cpu_count()} cores: "
          f"{figures['items_per_s']} items/s (runner, {figures['runner_seconds']} s), "
          f"{figures['process_items_per_s']} items/s (whole process, {figures['process_seconds']} s), reward "
          f"{figures['reward_mean']:.4f}, errors {figures['errors']}  [goal: >= 500 items/s]")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"cpus": os.cpu_count(), **figures}, indent=2) + "\n")
    print(f"wrote {args.json}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
