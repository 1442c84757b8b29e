"""What the sandbox costs to start: an empty program run in it and run outside it.

For each program (``python3 -c pass`` with the interpreter the sandbox uses, the same without importing
``site``, and ``true``), N runs one after another, timed from the caller's side:

* outside: ``subprocess.run`` of the program (same interpreter, an empty environment, stdin closed, output
  captured), the floor any sandbox adds to;
* inside: ``engines.sandbox.run_async`` awaited in one event loop, as the harness calls it: bubblewrap, the
  launcher chain (root mode: setpriv and a second, unprivileged bubblewrap; then prlimit and sh), the
  program, the output read, and in root mode lending the work directory to uid 65534 and handing it back.

``python3 -c pass`` can start faster inside than outside: the sandbox hides the runtime's site-packages, so
``site`` has no ``.pth`` files to process there; ``-S`` and ``true`` compare like with like. Medians and
90th percentiles in milliseconds, and the sandboxed runs per second with 2 in flight. On a shared
machine the figures move with other load; the medians move least.

    python benchmarks/sandbox_overhead.py            # ~10 s on 2 cores
    python benchmarks/sandbox_overhead.py --n 200 --json sandbox.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from security_verifiers.engines.sandbox import check_available, run_async


def _summary(seconds: list[float]) -> dict[str, float]:
    ms = sorted(s * 1000 for s in seconds)
    return {"median_ms": round(statistics.median(ms), 2), "p90_ms": round(ms[int(0.9 * (len(ms) - 1))], 2)}


def _outside(argv: list[str], n: int) -> list[float]:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, env={}, check=True)
        times.append(time.perf_counter() - start)
    return times


async def _inside(argv: list[str], n: int, workdir: Path) -> list[float]:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        result = await run_async(argv, workdir)
        times.append(time.perf_counter() - start)
        assert result.ok, result
    return times


async def _throughput(argv: list[str], n: int, dirs: list[Path]) -> float:
    """Sandboxed runs per second with one run in flight per directory."""
    async def worker(workdir: Path) -> None:
        for _ in range(n // len(dirs)):
            assert (await run_async(argv, workdir)).ok

    start = time.perf_counter()
    await asyncio.gather(*(worker(d) for d in dirs))
    return (n // len(dirs)) * len(dirs) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=50, help="Runs per program and side (default 50).")
    parser.add_argument("--json", default=None, help="Also write the figures to this JSON file.")
    args = parser.parse_args()
    found = check_available()
    programs = {"python3 -c pass": [found.python, "-c", "pass"],
                "python3 -S -c pass": [found.python, "-S", "-c", "pass"], "true": ["/usr/bin/true"]}
    figures: dict[str, object] = {"mode": "root" if found.as_root else "user", "n": args.n, "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory() as tmp:
        dirs = [Path(tmp, str(i)) for i in range(2)]
        for d in dirs:
            d.mkdir()
        for name, argv in programs.items():
            outside = _summary(_outside(argv, args.n))
            inside = _summary(asyncio.run(_inside(argv, args.n, dirs[0])))
            figures[name] = {"outside": outside, "inside": inside,
                             "overhead_ms": round(inside["median_ms"] - outside["median_ms"], 2)}
            print(f"{name:19s} outside {outside['median_ms']:6.1f} ms (p90 {outside['p90_ms']:.1f})   "
                  f"inside {inside['median_ms']:6.1f} ms (p90 {inside['p90_ms']:.1f})   "
                  f"overhead {figures[name]['overhead_ms']:+.1f} ms")  # type: ignore[index]
        rate = asyncio.run(_throughput(programs["python3 -c pass"], args.n, dirs))
        figures["python_runs_per_s_2_in_flight"] = round(rate, 1)
        print(f"python3 -c pass in the sandbox, 2 in flight: {rate:.1f} runs/s ({found.python}, "
              f"{figures['mode']} mode, {os.cpu_count()} CPUs)")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    sys.exit(main())
