"""Scoring on Ray against the local pool (``--executor ray``, harness/ray_pool.py): E2 and E3 items/s on this
machine, the per-item overhead of Ray, and a model of throughput on k nodes.

For each environment (config-audit with ``baseline:autofix``, code-repair with ``baseline:reference``, their
public test sets) the same run is made four times, each ``sv eval`` in a fresh process: the local scorer pool with 1
and 2 worker processes, and a Ray cluster of this machine (``ray start --head`` on 127.0.0.1, started here) with 1
and 2 scorer actors. The rewards of every run must equal the first one's. Scan and parse stores are off
(``SV_SCAN_STORE=off``): every run scores from nothing, so the figures are scoring's cost, not a cache's.

* ``overhead_s_per_item``: (Ray runner seconds - local runner seconds) / items, at equal workers (goal: at most
  10% of the local pool's time per item).
* the model: a run's driver plays episodes at ``driver_s_per_item`` (measured: the policy alone, in this
  process) and each scorer, local or remote, scores at ``score_s_per_item`` (measured: ``score_many`` in this
  process on the same answers); on k nodes of c cores each, with one scorer per core and the driver on its own,
  ``items/s = min(1 / driver_s_per_item, k * c / (score_s_per_item * (1 + overhead)))``. A built-in baseline that
  answers in the scorers (``runs_in_workers``: config-audit's ``autofix``) adds its cost to theirs instead:
  ``items/s = k * c / ((score_s_per_item + driver_s_per_item) * (1 + overhead))`` (the driver then only plays
  episodes and writes records, ~1-2 ms of CPU a rollout, far from the bound).

    python benchmarks/ray_scaling.py               # ~5 min on 2 cores
    python benchmarks/ray_scaling.py --limit 40 --nodes 1,2,4,8,16 --cores-per-node 16

Prints one JSON document (``--out`` also writes it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ["SV_SCAN_STORE"] = "off"  # before any engine loads, here and in the cluster's workers (they inherit it)
os.environ.setdefault("RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO", "0")

CASES = (("config-audit", "baseline:autofix"), ("code-repair", "baseline:reference"))


def _scores(run_dir: Path) -> dict[tuple[str, int], tuple[Any, ...]]:
    from security_verifiers.core.rundir import read_results_file

    records = read_results_file(run_dir / "results.jsonl").records
    return {(r.item_id, r.sample): (r.reward, r.components) for r in records}


def _run(env_name: str, model: str, limit: int | None, out: Path, label: str, executor: str, workers: int,
         address: str) -> dict[str, Any]:
    """One ``sv eval`` in a fresh process (nothing parsed or scanned in memory from an earlier run)."""
    argv = [sys.executable, "-m", "security_verifiers.cli", "eval", env_name, "--model", model, "--split", "test",
            "--executor", executor, "--score-workers", str(workers), "--out", str(out), "--run-id", label, "--quiet"]
    argv += ["--limit", str(limit)] if limit else []
    argv += ["--ray-address", address] if executor == "ray" else []
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"sv eval failed: {proc.stderr[-2000:]}")
    run_dir = next(out.glob(f"evals/*/{label}"))
    meta = json.loads((run_dir / "metadata.json").read_text())
    n = meta["rollouts"]["total"]
    return {"executor": executor, "workers": workers, "items": n, "errors": meta["errors"]["count"],
            "runner_s": meta["seconds"], "items_per_s": round(n / meta["seconds"], 2), "run_dir": run_dir}


def _unit_costs(env_name: str, model: str, limit: int | None, run_dir: Path) -> dict[str, float]:
    """Seconds per item of the driver's part (the policy's answers) and of scoring (``score_many`` on the same
    answers, batches of 16), each measured alone in a fresh process (no memo of the other's parses)."""
    out = {}
    for part in ("driver", "score"):
        argv = [sys.executable, __file__, "--unit-cost", part, env_name, model, str(limit or 0), str(run_dir)]
        proc = subprocess.run(argv, capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"unit cost failed: {proc.stderr[-2000:]}")
        out[f"{part}_s_per_item"] = float(proc.stdout.strip().splitlines()[-1])
    return out


def unit_cost(part: str, env_name: str, model: str, limit: int, run_dir: Path) -> float:
    from security_verifiers.core.rundir import read_results_file
    from security_verifiers.core.types import Transcript
    from security_verifiers.envs.base import get_env
    from security_verifiers.harness.policies import resolve_policy

    env = get_env(env_name)
    dataset = env.dataset("test").head(limit or None)
    env.load_checkers()
    if part == "driver":
        policy = resolve_policy(model, env)

        async def answers() -> None:
            for item in dataset.items:
                await policy.respond(item, env.prompt(item), None, 0)

        t0 = time.perf_counter()
        asyncio.run(answers())
        return round((time.perf_counter() - t0) / len(dataset), 4)
    records = {r.item_id: r for r in read_results_file(run_dir / "results.jsonl").records}
    transcripts = [records[i.id].transcript or Transcript(messages=[]) for i in dataset.items]
    t0 = time.perf_counter()
    for start in range(0, len(dataset), 16):
        env.score_many(list(dataset.items[start:start + 16]), transcripts[start:start + 16])
    return round((time.perf_counter() - t0) / len(dataset), 4)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=None, help="Only the first N items of each public test set.")
    parser.add_argument("--nodes", default="1,2,4,8,16", help="Node counts for the model (comma-separated).")
    parser.add_argument("--cores-per-node", type=int, default=16, help="Cores of a node in the model.")
    parser.add_argument("--out", type=Path, help="Also write the JSON result here.")
    parser.add_argument("--unit-cost", nargs=5, metavar=("PART", "ENV", "MODEL", "LIMIT", "RUN_DIR"),
                        help=argparse.SUPPRESS)  # the fresh process of _unit_costs
    args = parser.parse_args()
    if args.unit_cost:
        part, env_name, model, limit, run_dir = args.unit_cost
        print(unit_cost(part, env_name, model, int(limit), Path(run_dir)))
        return 0

    import ray

    from security_verifiers.envs.base import get_env
    from security_verifiers.harness.policies import resolve_policy

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    address = f"127.0.0.1:{port}"
    head = subprocess.Popen([str(Path(sys.executable).with_name("ray")), "start", "--head", "--block",
                             "--node-ip-address=127.0.0.1", f"--port={port}", f"--num-cpus={os.cpu_count() or 2}",
                             "--include-dashboard=false", "--disable-usage-stats"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(120):  # until the head answers
        try:
            ray.init(address=address, log_to_driver=False, configure_logging=False)
            break
        except (ConnectionError, RuntimeError):
            time.sleep(1)
    result: dict[str, Any] = {"cpus": os.cpu_count(), "ray": ray.__version__, "scan_store": "off",
                              "head": address, "envs": {}}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for env_name, model in CASES:
                n_items = len(get_env(env_name).dataset("test").head(args.limit))
                runs = []
                for executor in ("local", "ray"):
                    for workers in (1, 2):
                        label = f"{env_name}-{executor}-{workers}"
                        row = _run(env_name, model, args.limit, Path(tmp), label, executor, workers, address)
                        print(f"{env_name:<13} {executor:<5} x{workers}: {row['items_per_s']:6.2f} items/s "
                              f"({row['runner_s']} s, errors {row['errors']})", file=sys.stderr)
                        runs.append(row)
                reference = _scores(runs[0]["run_dir"])
                identical = all(_scores(r["run_dir"]) == reference for r in runs[1:])
                costs = _unit_costs(env_name, model, args.limit, runs[0]["run_dir"])
                overhead = {}
                for workers in (1, 2):
                    local = next(r for r in runs if r["executor"] == "local" and r["workers"] == workers)
                    remote = next(r for r in runs if r["executor"] == "ray" and r["workers"] == workers)
                    extra = (remote["runner_s"] - local["runner_s"]) / n_items
                    overhead[f"workers_{workers}"] = {"overhead_s_per_item": round(extra, 4),
                                                      "overhead_fraction": round(extra * n_items
                                                                                 / local["runner_s"], 3)}
                fraction = max(0.0, overhead["workers_1"]["overhead_fraction"])
                in_workers = bool(getattr(resolve_policy(model, get_env(env_name)), "runs_in_workers", False))
                per_scorer = costs["score_s_per_item"] + (costs["driver_s_per_item"] if in_workers else 0.0)
                driver_cap = float("inf") if in_workers else 1 / costs["driver_s_per_item"]
                model_rows = []
                for k in (int(n) for n in args.nodes.split(",") if n.strip()):
                    scorers = k * args.cores_per_node
                    rate = min(driver_cap, scorers / (per_scorer * (1 + fraction)))
                    model_rows.append({"nodes": k, "scorers": scorers, "items_per_s": round(rate, 1),
                                       "bound": "driver" if rate == driver_cap else "scoring"})
                for r in runs:
                    r.pop("run_dir")
                result["envs"][env_name] = {"model": model, "items": n_items, "policy_in_workers": in_workers,
                                            "runs": runs,
                                            "rewards_identical": identical, **costs, "ray_overhead": overhead,
                                            "model_k_nodes": model_rows}
    finally:
        ray.shutdown()
        head.terminate()  # `ray start --block` stops the head's processes on SIGTERM
        head.wait(timeout=60)
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0 if all(e["rewards_identical"] for e in result["envs"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
