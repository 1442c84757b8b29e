"""How fast E3 code-repair judges a patch: one item's sandboxed run, and end-to-end items/s.

1. **Judged run**: for every item of the public ``test`` split, the reference fix judged as a patch is: every probe
   run against the live program from the judge's sandbox, and every exploit replayed through a plain script in a
   fresh program (the reference blocks them all, so this is the most work a run does), one item after another; the
   median and 90th percentile of the run's wall time as the host sees it (the judge's fork, the program sandboxes,
   the world's servers, probes, teardown; the judge sandboxes themselves are kept running). Goal: median at most
   150 ms.
2. **End to end**: ``sv eval code-repair --split test --model baseline:reference`` as a real subprocess of the CLI
   (scoring in batches of 16 with 8 sandboxes in flight); items/s = items / the runner's own seconds
   (metadata.json), and also / the whole process (imports, report and plots included). Goal: at least 8 items/s
   on 2 cores.

On a shared machine the figures move with other load; the medians move least.

    python benchmarks/e3_speed.py                  # ~1 min on 2 cores
    python benchmarks/e3_speed.py --json e3.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def sandboxed_runs(limit: int | None) -> dict[str, Any]:
    from security_verifiers.envs.code_repair.env import CodeRepair
    from security_verifiers.envs.code_repair.execution import execute
    from security_verifiers.envs.code_repair.items import program_of
    from security_verifiers.envs.code_repair.verdict import judge, static_verdicts

    items = list(CodeRepair().dataset("test").items)[:limit]
    walls, host = [], []
    repaired = 0
    first = program_of(items[0].input, items[0].target)
    execute(first, first.fixed)  # starts the judge sandbox this process keeps (once per process, not per run)
    for item in items:
        program = program_of(item.input, item.target)
        start = time.perf_counter()
        run = execute(program, program.fixed)
        host.append(time.perf_counter() - start)
        walls.append(run.stats["ms"]["script"] / 1000)  # the judge's own time for the run
        repaired += judge(program, run, static_verdicts(program, program.fixed)).repaired
    ms = sorted(1000 * s for s in host)
    return {"items": len(items), "repaired": repaired,
            "median_ms": round(statistics.median(ms), 1), "p90_ms": round(ms[int(0.9 * (len(ms) - 1))], 1),
            "sandbox_median_ms": round(1000 * statistics.median(walls), 1)}


def end_to_end() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        argv = [sys.executable, "-m", "security_verifiers.cli", "eval", "code-repair", "--split", "test", "--model",
                "baseline:reference", "--out", tmp, "--run-id", "speed", "--quiet"]
        start = time.perf_counter()
        proc = subprocess.run(argv, capture_output=True, text=True)
        wall = time.perf_counter() - start
        if proc.returncode != 0:
            raise SystemExit(f"sv eval failed ({proc.returncode}): {proc.stderr[-3000:]}")
        run_dir = next(Path(tmp).glob("evals/*/speed"))
        meta = json.loads((run_dir / "metadata.json").read_text())
        summary = json.loads((run_dir / "summary.json").read_text())
    n = meta["rollouts"]["total"]
    return {"items": n, "runner_seconds": meta["seconds"], "items_per_s": round(n / meta["seconds"], 2),
            "process_seconds": round(wall, 2), "process_items_per_s": round(n / wall, 2),
            "reward_mean": summary["metrics"]["reward_mean"], "errors": summary["counts"]["errors"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=None, help="Items of the test split for part 1 (default all).")
    parser.add_argument("--json", type=Path, default=Path("outputs/benchmarks/e3_speed.json"),
                        help="Where to write the figures.")
    args = parser.parse_args()
    runs = sandboxed_runs(args.limit)
    print(f"sandboxed run of one item (reference fix, all probes), {runs['items']} items: median "
          f"{runs['median_ms']} ms, p90 {runs['p90_ms']} ms (inside the judge: median {runs['sandbox_median_ms']} ms); "
          f"{runs['repaired']}/{runs['items']} repaired  [goal: median <= 150 ms]")
    e2e = end_to_end()
    print(f"sv eval code-repair --model baseline:reference, {e2e['items']} items on {os.cpu_count()} cores: "
          f"{e2e['items_per_s']} items/s (runner), {e2e['process_items_per_s']} items/s (whole process, "
          f"{e2e['process_seconds']} s), reward {e2e['reward_mean']:.4f}, errors {e2e['errors']}  "
          "[goal: >= 8 items/s]")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"cpus": os.cpu_count(), "sandboxed_run": runs, "end_to_end": e2e}, indent=2)
                         + "\n")
    print(f"wrote {args.json}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
