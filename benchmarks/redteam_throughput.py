"""E5/E6 end to end: ``sv eval`` of the red-team environments on generated scenarios, as real CLI subprocesses.

1. Generate N items of each environment's ``dev`` split (``sv data build ... --split dev``), timed on their own
   (every item is self-checked as it is made: the reference plan, the naive assistant, the guard or the level).
2. Run ``sv eval redteam-defense --model baseline:naive`` (reads, obeys the injections, acts: every rollout replayed
   on the world and searched for leaks) and ``sv eval redteam-attack --model baseline:templates`` (five deliveries,
   each running a scripted target, every turn judged). episodes/s = episodes / the runner's own seconds
   (metadata.json), and also / the whole process (imports, dataset load, report).

    python benchmarks/redteam_throughput.py            # ~1 min on 2 cores
    python benchmarks/redteam_throughput.py --n 500 --json rt.json
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

RUNS = (("redteam-defense", "naive"), ("redteam-attack", "templates"))


def _run(argv: list[str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "security_verifiers.cli", *argv], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"sv {' '.join(argv[:3])} failed ({proc.returncode}): {proc.stderr[-3000:]}")
    return time.perf_counter() - start


def measure(env: str, policy: str, n: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "dev.jsonl"
        build_s = _run(["data", "build", env, "--split", "dev", "--n", str(n), "--seed", "11", "--out", str(data)])
        wall = _run(["eval", env, "--data", str(data), "--model", f"baseline:{policy}", "--out", tmp,
                     "--run-id", "speed", "--quiet"])
        run_dir = next(Path(tmp).glob("evals/*/speed"))
        meta = json.loads((run_dir / "metadata.json").read_text())
        summary = json.loads((run_dir / "summary.json").read_text())
    total = meta["rollouts"]["total"]
    return {"env": env, "policy": policy, "episodes": total, "build_seconds": round(build_s, 2),
            "build_items_per_s": round(n / build_s, 1), "runner_seconds": meta["seconds"],
            "episodes_per_s": round(total / meta["seconds"], 1), "process_seconds": round(wall, 2),
            "process_episodes_per_s": round(total / wall, 1), "reward_mean": summary["metrics"]["reward_mean"],
            "errors": summary["counts"]["errors"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=2000, help="Generated items per environment (default 2,000).")
    parser.add_argument("--json", type=Path, default=Path("outputs/benchmarks/redteam_throughput.json"),
                        help="Where to write the figures.")
    args = parser.parse_args()
    figures = [measure(env, policy, args.n) for env, policy in RUNS]
    for f in figures:
        print(f"{f['env']}: build {args.n} items {f['build_seconds']} s ({f['build_items_per_s']}/s); "
              f"sv eval --model baseline:{f['policy']} on {os.cpu_count()} cores: {f['episodes_per_s']} episodes/s "
              f"(runner, {f['runner_seconds']} s), {f['process_episodes_per_s']} episodes/s (whole process, "
              f"{f['process_seconds']} s), reward {f['reward_mean']:.4f}, errors {f['errors']}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"cpus": os.cpu_count(), "runs": figures}, indent=2) + "\n")
    print(f"wrote {args.json}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
