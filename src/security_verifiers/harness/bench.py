"""``sv bench``: every registered environment × its built-in baselines on the public splits, offline.

It is the project's main job and its smoke test: it needs no network and no model, and its
leaderboard shows at a glance that references are at the top and hacks at the bottom.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

from security_verifiers.core.datasets import Dataset
from security_verifiers.core.errors import ConfigError
from security_verifiers.core.rundir import RunDir
from security_verifiers.envs.base import Environment, registry
from security_verifiers.harness.runner import RunConfig, run_eval


def public_dataset(env: Environment) -> Dataset:
    """All public splits of ``env`` in one dataset (so breakdowns by split compare them)."""
    dataset: Dataset | None = None
    for split in env.public_splits:
        part = env.dataset(split)
        dataset = part if dataset is None else dataset + part
    if dataset is None:
        raise ConfigError(f"environment {env.name} declares no public split")
    return dataset


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
    entries = []
    failures = 0
    t_start = time.perf_counter()
    for name in names:
        env = envs[name]()
        dataset = public_dataset(env)
        for baseline, factory in env.baselines().items():
            policy = factory()
            model = f"baseline:{baseline}"
            run_dir = RunDir.for_run(out, env.name, model, "bench")
            t0 = time.perf_counter()
            outcome = asyncio.run(run_eval(env, policy, dataset, run_dir, RunConfig(concurrency=1),
                                           progress=False, extra_metadata={"bench": True}))
            summary = regenerate(run_dir.path)
            failures += outcome.errors
            reward = summary.get("metrics", {}).get("reward_mean")
            console.print(f"{env.name:<16} {model:<28} {len(dataset):>5} items  reward "
                          f"{reward if reward is None else f'{reward:.4f}'}  errors {outcome.errors}  "
                          f"{time.perf_counter() - t0:6.2f}s")
            entries.append({"env": env.name, "policy": model, "run_dir": str(run_dir.path), "summary": summary})
    board = build_leaderboard(entries)
    md_path, json_path = write_leaderboard(board, out)
    rendered = render_table(board)
    for table in rendered if isinstance(rendered, list) else [rendered]:
        Console().print(table)
    console.print(f"bench finished in {time.perf_counter() - t_start:.1f}s; leaderboard: {md_path} {json_path}")
    if failures:
        print(f"sv bench: {failures} infrastructure errors; see the run reports", file=sys.stderr)
        return 3
    return 0
