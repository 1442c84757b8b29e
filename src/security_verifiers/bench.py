"""``sv bench``: every registered environment × its built-in baselines on the public splits, offline.

It is the project's main job and its smoke test: it needs no network and no model, and its
leaderboard shows at a glance that references are at the top and hacks at the bottom.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

from security_verifiers.core.errors import ConfigError
from security_verifiers.core.rundir import RunDir
from security_verifiers.envs.base import registry
from security_verifiers.harness.runner import RunConfig, run_eval
from security_verifiers.harness.scoring_pool import ScorerPool


def run_bench(out: Path, env_names: list[str] | None = None) -> int:
    from rich.console import Console

    from security_verifiers.report import regenerate
    from security_verifiers.report.leaderboard import build_leaderboard, render_table, write_leaderboard

    envs = registry()
    names = env_names or sorted(envs)
    unknown = [n for n in names if n not in envs]
    if unknown:
        raise ConfigError(f"unknown environment(s) {', '.join(unknown)}; known: {', '.join(sorted(envs))}")
    console = Console(stderr=True)
    if not console.is_terminal:
        console = Console(stderr=True, width=160)
    entries = []
    failures = 0
    t_start = time.perf_counter()
    for name in names:
        env = envs[name]()
        if not env.public_splits:
            raise ConfigError(f"environment {env.name} declares no public split")
        # One set of scoring workers per environment for all its baselines: engines load once, and the
        # workers' caches keep each original file's scan from one baseline to the next.
        pool = ScorerPool(env, env.score_workers) if env.score_workers else None
        if pool is not None:
            console.print(f"{env.name}: starting {pool.workers} scoring worker(s) (they load the engines once)")
            pool.warm_up()
        try:
            for baseline, factory in env.baselines().items():
                policy = factory()
                model = f"baseline:{baseline}"
                for split in env.public_splits:  # one run per split: in-distribution and OOD are ranked apart
                    dataset = env.dataset(split)
                    run_dir = RunDir.for_run(out, env.name, model, split)
                    t0 = time.perf_counter()
                    # A live line while a run goes (a baseline may first train a model, an engine load for
                    # seconds); the finished line below replaces it. Off a terminal rich prints nothing here.
                    with console.status(f"{env.name} {split} {model}: {len(dataset)} items (training, playing, "
                                        "scoring, report)..."):
                        outcome = asyncio.run(run_eval(env, policy, dataset, run_dir, RunConfig(concurrency=1),
                                                       model_name=model, progress=False,
                                                       extra_metadata={"bench": True}, scorer_pool=pool))
                        summary = regenerate(run_dir.path)
                    failures += outcome.errors
                    reward = summary.get("metrics", {}).get("reward_mean")
                    console.print(f"{env.name:<16} {split:<6} {model:<28} {len(dataset):>5} items  reward "
                                  f"{'—' if reward is None else f'{reward:.4f}'}  errors {outcome.errors}  "
                                  f"{time.perf_counter() - t0:5.2f}s")
                    entries.append({"env": f"{env.name} · {split}", "policy": model, "run_dir": str(run_dir.path),
                                    "summary": summary})
        finally:
            if pool is not None:
                pool.close()
    board = build_leaderboard(entries)
    md_path, json_path = write_leaderboard(board, out)
    stdout = Console()
    if not stdout.is_terminal:
        stdout = Console(width=160)
    for table in render_table(board):
        stdout.print(table)
    console.print(f"bench finished in {time.perf_counter() - t_start:.1f}s; leaderboard: {md_path} {json_path}")
    if failures:
        print(f"sv bench: {failures} infrastructure errors; see the run reports", file=sys.stderr)
        return 3
    return 0
