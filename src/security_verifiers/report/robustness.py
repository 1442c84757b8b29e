"""A run's robustness: each metric on the clean items and on each rewrite kind of the ``robust`` split, paired
item by item (:mod:`..envs.kits.robust`).

A run made with ``--split test,robust`` holds every clean test item and every rewrite of it. For each rewrite
kind, the clean items that have that rewrite are paired with it, and each metric's change (rewritten - clean) gets
a 95% paired bootstrap interval over those items, as ``sv compare`` computes it between two runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from security_verifiers.core.errors import ConfigError
from security_verifiers.core.metrics import BOOT_SEED, N_BOOT
from security_verifiers.envs.kits.robust import ROBUST_SPLIT, SEPARATOR, clean_id
from security_verifiers.report.compare import _by_item, load_run, paired_deltas, run_environment


def robustness(run_dir: Path, n_boot: int = N_BOOT, seed: int = BOOT_SEED) -> dict[str, Any]:
    """``{"env", "run", "kinds": {kind: {"items": n, "metrics": {key: {"a": clean, "b": rewritten, "delta",
    "ci"}}}}, "headline"}``."""
    metadata, records = load_run(run_dir)
    env = run_environment(metadata, metadata)
    by_item = _by_item(env, records)
    clean = {item: outcomes for item, outcomes in by_item.items() if clean_id(item)[1] is None}
    kinds = sorted({kind for item in by_item if (kind := clean_id(item)[1]) is not None})
    if not kinds:
        raise ConfigError(f"{run_dir} has no rewritten items: evaluate with --split test,{ROBUST_SPLIT}")
    if not clean:
        raise ConfigError(f"{run_dir} has rewritten items but no clean ones to pair them with: evaluate with "
                          f"--split test,{ROBUST_SPLIT}")
    rows = {}
    for kind in kinds:
        shared = sorted(item for item in clean if f"{item}{SEPARATOR}{kind}" in by_item)
        if not shared:
            continue
        rewritten = {item: by_item[f"{item}{SEPARATOR}{kind}"] for item in shared}
        rows[kind] = {"items": len(shared), "metrics": paired_deltas(env, clean, rewritten, shared, n_boot, seed)}
    return {"env": {"name": env.name, "version": env.version}, "run": str(run_dir), "model": metadata.get("model"),
            "bootstrap": {"n": n_boot, "seed": seed, "level": 0.95, "resamples": "clean items with their rewrite"},
            "headline": [key for key, _ in env.headline_metrics], "kinds": rows}
