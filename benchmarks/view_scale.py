"""Report and view of a large run: time, peak memory and page size of ``sv report`` on N rollouts.

1. A run of ``--samples`` samples of every item of network-logs' public test set (200 items) with
   ``baseline:heuristic``, made by the real ``sv eval`` (timed apart; not measured).
2. ``sv report RUN`` in a fresh process, as shipped: the summary from slim records (outcomes, the final answer),
   the page with a row per rollout and the conversations in parts of 500 beside it (``view_files/``).
3. The same page written inline, every transcript in one file, as every run's page was before (``write_view`` with
   ``inline_max`` above the run's size), for comparison.

Each step runs in its own process; peak memory is that process's maximum resident set (``ru_maxrss``).
Prints one JSON document (``--out`` also writes it).

    python benchmarks/view_scale.py                  # 100,000 rollouts: ~3 min on 2 cores
    python benchmarks/view_scale.py --samples 10     # 2,000 rollouts
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

ROOT = Path(__file__).resolve().parent.parent

_MEASURE = """
import resource, sys, time
from pathlib import Path
t0 = time.perf_counter()
run = Path(sys.argv[1])
if sys.argv[2] == "report":
    from security_verifiers.report import regenerate
    regenerate(run)
else:
    from security_verifiers.report.view import write_view
    write_view(run, run / "inline.html", inline_max=10**9)
print(time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def measure(run: Path, what: str) -> dict[str, float]:
    proc = subprocess.run([sys.executable, "-c", _MEASURE, str(run), what], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{what} failed: {proc.stderr[-2000:]}")
    seconds, rss_kb = proc.stdout.split()
    return {"seconds": round(float(seconds), 2), "peak_rss_mb": round(int(rss_kb) / 1024, 1)}


def mb(path: Path) -> float:
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    return round(sum(p.stat().st_size for p in files) / 2**20, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=500, help="samples per item (200 items; default 500)")
    parser.add_argument("--out", type=Path, default=None, help="also write the JSON here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sv-view-scale-") as tmp:
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "security_verifiers.cli", "eval", "network-logs", "--model",
                               "baseline:heuristic", "--split", "test", "--samples", str(args.samples), "--out", tmp,
                               "--run-id", "big", "--quiet", "--no-cache"], capture_output=True, text=True,
                              env={**os.environ, "SV_CACHE_DIR": str(Path(tmp) / "cache")})
        if proc.returncode != 0:
            raise SystemExit(f"sv eval failed: {proc.stderr[-2000:]}")
        run = Path(tmp) / "evals" / "network-logs--baseline-heuristic" / "big"
        rollouts = sum(1 for _ in (run / "results.jsonl").open("rb"))
        made = round(time.perf_counter() - t0, 1)
        report = measure(run, "report")
        inline = measure(run, "inline")
        parts = run / "view_files"
        result = {
            "rollouts": rollouts, "eval_seconds": made, "results_jsonl_mb": mb(run / "results.jsonl"),
            "report": {**report, "page_mb": mb(run / "view.html"),
                       "parts": len(list(parts.iterdir())) if parts.is_dir() else 0,
                       "parts_mb": mb(parts) if parts.is_dir() else 0.0},
            "inline_page": {**inline, "page_mb": mb(run / "inline.html")},
        }
    text = json.dumps(result, indent=2)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
