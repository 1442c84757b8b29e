"""``sv bench``: every registered environment × its built-in baselines on the public splits, offline.

It is the project's main job and its smoke test: it needs no network and no model, and its
leaderboard shows at a glance that references are at the top and hacks at the bottom.

It is also what a newcomer waits for, so it does the least work that still shows that: environments run in
parallel worker processes (one environment per process, so its engines load and its baselines train once), each
split is built once for all baselines, and an environment whose hacks take seconds per item to judge runs only the
strongest of them (:attr:`~security_verifiers.envs.base.Environment.bench_hacks`; the conformance tests check that
they are the strongest, and run every hack). ``--all-baselines`` runs the whole sweep.

``--robust`` also runs the same baselines on each environment's ``robust`` split (:mod:`.envs.kits.robust`) and
writes ``robustness.md``/``.json``: per baseline and rewrite kind, each headline metric on the clean test items and
on their rewrites, paired, with intervals: whether an honest answer holds when the surface changes, and whether a
hack gains from it (a checker that reads the surface).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from security_verifiers.core.errors import ConfigError
from security_verifiers.core.rundir import RunDir
from security_verifiers.envs.base import Environment, registry
from security_verifiers.envs.kits.robust import ROBUST_SPLIT
from security_verifiers.harness.runner import RunConfig, run_eval
from security_verifiers.harness.scoring_pool import make_pool

#: Bootstrap resamples of the robustness table's intervals: every resample recomputes every metric on both sides,
#: for each baseline and rewrite kind, so the bench draws fewer than ``sv robust`` (1,000); the table says how many.
ROBUST_N_BOOT = 200


def bench_baselines(env: Environment, all_baselines: bool = False) -> list[str]:
    """The baselines the bench runs for ``env``, in the environment's order: all of them, or all but the hacks its
    ``bench_hacks`` leaves out."""
    names = list(env.baselines())
    if all_baselines or env.bench_hacks is None:
        return names
    left_out = set(env.hack_baselines) - set(env.bench_hacks)
    return [name for name in names if name not in left_out]


def _console(stderr: bool = True) -> Any:
    from rich.console import Console

    console = Console(stderr=stderr)
    return console if console.is_terminal else Console(stderr=stderr, width=160)


def bench_environment(name: str, out: Path, all_baselines: bool = False, live: bool = False,
                      robust: bool = False, executor: str = "local",
                      ray_address: str | None = None) -> list[dict[str, Any]]:
    """Run one environment's bench baselines on its public splits (and, with ``robust``, on its robust split);
    returns its leaderboard entries, and robustness entries marked ``"robustness"``. Runs in a
    worker process of :func:`run_bench` (everything it takes and returns pickles); ``live`` shows a spinner per run,
    for the one-process bench on a terminal."""
    from security_verifiers.report import regenerate
    from security_verifiers.report.robustness import robustness

    console = _console()
    env = registry()[name]()
    if not env.public_splits:
        raise ConfigError(f"environment {env.name} declares no public split")
    datasets = {split: env.dataset(split) for split in env.public_splits}  # built once for every baseline
    if robust and env.rewrites():
        if "test" not in datasets:
            raise ConfigError(f"{env.name} has rewrites but no public test split to pair them with")
        datasets[ROBUST_SPLIT] = env.dataset(ROBUST_SPLIT)
    factories = env.baselines()
    entries: list[dict[str, Any]] = []
    # One set of scoring workers per environment for all its baselines: engines load once, and the workers' caches
    # keep each original file's scan from one baseline to the next.
    pool = make_pool(env, executor, None, ray_address)
    try:
        if pool is not None:
            console.print(f"{env.name}: starting {pool.workers} scoring worker(s) (they load the engines once)")
            pool.warm_up()
        for baseline in bench_baselines(env, all_baselines):
            policy = factories[baseline]()  # one policy for both splits: a trained baseline trains once
            model = f"baseline:{baseline}"
            for split, dataset in datasets.items():  # one run per split: in-distribution and OOD are ranked apart
                run_dir = RunDir.for_run(out, env.name, model, split)
                t0 = time.perf_counter()
                status = (console.status(f"{env.name} {split} {model}: {len(dataset)} items (training, playing, "
                                         "scoring, report)...") if live else None)
                if status is not None:
                    status.start()
                try:
                    outcome = asyncio.run(run_eval(env, policy, dataset, run_dir, RunConfig(concurrency=1),
                                                   model_name=model, progress=False,
                                                   extra_metadata={"bench": True}, scorer_pool=pool))
                    summary = regenerate(run_dir.path)
                finally:
                    if status is not None:
                        status.stop()
                reward = summary.get("metrics", {}).get("reward_mean")
                console.print(f"{env.name:<16} {split:<6} {model:<28} {len(dataset):>5} items  reward "
                              f"{'—' if reward is None else f'{reward:.4f}'}  errors {outcome.errors}  "
                              f"{time.perf_counter() - t0:5.2f}s")
                entry = {"env": f"{env.name} · {split}", "policy": model, "run_dir": str(run_dir.path),
                         "summary": summary, "errors": outcome.errors}
                if split == ROBUST_SPLIT:
                    clean = next(e for e in entries if e["policy"] == model and e["env"] == f"{env.name} · test")
                    entry["robustness"] = robustness(run_dir.path, n_boot=ROBUST_N_BOOT,
                                                     clean_run=Path(clean["run_dir"]))
                entries.append(entry)
    finally:
        if pool is not None:
            pool.close()
    return entries


def run_bench(out: Path, env_names: list[str] | None = None, jobs: int | None = None,
              all_baselines: bool = False, robust: bool = False, executor: str = "local",
              ray_address: str | None = None) -> int:
    """Bench ``env_names`` (default: every environment) into ``out`` with ``jobs`` worker processes (default: one
    per core, at most one per environment) and write the leaderboard (and, with ``robust``, the robustness
    tables); returns the exit code. ``executor="ray"`` scores on the Ray cluster at ``ray_address`` (without
    one: $RAY_ADDRESS, else a local cluster started here that every environment's process joins)."""
    from security_verifiers.report.leaderboard import build_leaderboard, render_table, write_leaderboard
    from security_verifiers.report.robustness import write_robustness

    envs = registry()
    names = env_names or sorted(envs)
    unknown = [n for n in names if n not in envs]
    if unknown:
        raise ConfigError(f"unknown environment(s) {', '.join(unknown)}; known: {', '.join(sorted(envs))}")
    if jobs is not None and jobs < 1:
        raise ConfigError(f"--jobs must be at least 1, got {jobs}")
    jobs = min(jobs or os.cpu_count() or 1, len(names))
    console = _console()
    console.print(f"bench: {len(names)} environment(s) in {jobs} process(es)"
                  f"{'' if all_baselines else ' (the strongest hacks where judging is slow; --all-baselines for all)'}")
    t_start = time.perf_counter()
    if executor == "ray":  # one cluster for every environment's process: this one's, when none is named
        from security_verifiers.harness.ray_pool import connect

        ray = connect(ray_address)
        ray_address = ray.get_runtime_context().gcs_address
        console.print(f"bench: scoring on the Ray cluster at {ray_address}")
    per_env: dict[str, list[dict[str, Any]]] = {}
    if jobs == 1:
        for name in names:
            per_env[name] = bench_environment(name, out, all_baselines, live=console.is_terminal, robust=robust,
                                              executor=executor, ray_address=ray_address)
    else:
        # Spawned, not forked: a worker starts its own scoring pools and sandboxes, and must not inherit this
        # process's state. The slow environments (those that shortlist their hacks) are handed out first, so they
        # start at once and the quick ones fill the other processes meanwhile.
        slow_first = sorted(names, key=lambda name: envs[name].bench_hacks is None)
        with ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn")) as processes:
            futures = {name: processes.submit(bench_environment, name, out, all_baselines, False, robust, executor,
                                              ray_address) for name in slow_first}
            try:
                for name, future in futures.items():
                    per_env[name] = future.result()
            except BaseException:
                processes.shutdown(wait=True, cancel_futures=True)
                raise
    entries = [entry for name in names for entry in per_env[name]]
    failures = sum(entry.pop("errors") for entry in entries)
    robust_entries = [entry for entry in entries if "robustness" in entry]
    entries = [entry for entry in entries if "robustness" not in entry]
    board = build_leaderboard(entries)
    md_path, json_path = write_leaderboard(board, out)
    stdout = _console(stderr=False)
    for table in render_table(board):
        stdout.print(table)
    if robust:
        robust_md, robust_json = write_robustness(robust_entries, out)
        print(robust_md.read_text(encoding="utf-8"))
        console.print(f"robustness: {robust_md} {robust_json}")
    console.print(f"bench finished in {time.perf_counter() - t_start:.1f}s ({len(entries) + len(robust_entries)} "
                  f"runs, {jobs} process(es)); leaderboard: {md_path} {json_path}")
    if failures:
        print(f"sv bench: {failures} infrastructure errors; see the run reports", file=sys.stderr)
        return 3
    return 0
