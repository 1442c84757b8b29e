"""Paired comparison of two runs of one environment: every metric's difference, with a bootstrap interval.

Two runs on the same items answer "did B do better than A?" far more precisely than two independent
intervals, because each item's difficulty cancels out: the bootstrap draws *items* (all rollouts of a drawn
item, from both runs) and recomputes each metric on both sides of the same draw. Only the items both runs
scored enter; runs of different environment versions or configs measure different rewards and are refused,
and so are runs with no item in common (different datasets). Item ids are content hashes, so a shared id is
the same item.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from security_verifiers.core.errors import ConfigError
from security_verifiers.core.metrics import BOOT_SEED as SEED
from security_verifiers.core.metrics import N_BOOT
from security_verifiers.core.rundir import latest_by_key, read_results_file
from security_verifiers.core.types import RolloutRecord
from security_verifiers.envs.base import Environment, get_env


def load_metadata(run_dir: Path) -> dict[str, Any]:
    """A run's ``metadata.json``; a ConfigError when ``run_dir`` is not a run directory or the file is unreadable."""
    if not (run_dir / "metadata.json").is_file() or not (run_dir / "results.jsonl").is_file():
        raise ConfigError(f"{run_dir} is not a run directory (needs metadata.json and results.jsonl)")
    try:
        metadata: dict[str, Any] = json.loads((run_dir / "metadata.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise ConfigError(f"{run_dir / 'metadata.json'}: unreadable ({err})") from err
    return metadata


def load_run(run_dir: Path) -> tuple[dict[str, Any], list[RolloutRecord]]:
    """A run's metadata and its latest record per rollout, without the conversations (a comparison reads rewards
    and outcomes only; see :func:`~security_verifiers.core.rundir.slim`)."""
    metadata = load_metadata(run_dir)
    return metadata, latest_by_key(read_results_file(run_dir / "results.jsonl", transcripts=False).records)


def run_environment(meta_a: dict[str, Any], meta_b: dict[str, Any]) -> Environment:
    """The environment both runs were scored by (from their metadata); runs of different environment versions or
    configs measure different rewards and are refused, and so are runs scored by another version than this code's."""
    env_a, env_b = meta_a.get("env") or {}, meta_b.get("env") or {}
    for field in ("name", "version", "config"):
        if env_a.get(field) != env_b.get(field):
            raise ConfigError(f"the runs measure different rewards: environment {field} {env_a.get(field)!r} "
                              f"against {env_b.get(field)!r}")
    env: Environment = get_env(env_a["name"], env_a.get("config") or {})
    if env.version != env_a["version"]:
        raise ConfigError(f"the runs were scored by {env.name} {env_a['version']}; this code is {env.version}")
    return env


def _by_item(env: Environment, records: Sequence[RolloutRecord]) -> dict[str, list[Any]]:
    """Each item's scored outcomes, in the environment's typed form (validated once, read many times)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        if record.error is None:
            out.setdefault(record.item_id, []).append(record.outcome)
    return {item: list(env.typed_outcomes(outcomes)) for item, outcomes in out.items()}


def _numeric(metrics: dict[str, Any]) -> dict[str, float | None]:
    return {k: (float(v) if v is not None and math.isfinite(float(v)) else None) for k, v in metrics.items()
            if v is None or (isinstance(v, int | float) and not isinstance(v, bool))}


def paired_deltas(env: Environment, side_a: dict[str, list[Any]], side_b: dict[str, list[Any]],
                  shared: Sequence[str], n_boot: int = N_BOOT, seed: int = SEED) -> dict[str, dict[str, Any]]:
    """Each flat metric on ``side_a`` and ``side_b`` (outcomes by item) over the ``shared`` items, and B - A with its
    95% paired percentile bootstrap interval (items resampled, the same draw on both sides)."""

    def metrics_of(side: dict[str, list[Any]], picks: Sequence[str]) -> dict[str, float | None]:
        return _numeric(env.point_metrics([o for item in picks for o in side[item]]))

    point_a, point_b = metrics_of(side_a, shared), metrics_of(side_b, shared)
    keys = [k for k in point_a if k in point_b]
    rng = np.random.default_rng(seed)
    draws: dict[str, list[float]] = {k: [] for k in keys}
    for _ in range(n_boot):
        picks = [shared[i] for i in rng.integers(0, len(shared), size=len(shared))]
        boot_a, boot_b = metrics_of(side_a, picks), metrics_of(side_b, picks)
        for key in keys:
            a, b = boot_a.get(key), boot_b.get(key)
            if a is not None and b is not None:
                draws[key].append(b - a)
    rows: dict[str, dict[str, Any]] = {}
    for key in keys:
        a, b = point_a[key], point_b[key]
        values = draws[key]
        ci = [float(q) for q in np.quantile(values, [0.025, 0.975])] if values else [None, None]
        rows[key] = {"a": a, "b": b, "delta": None if a is None or b is None else b - a, "ci": ci}
    return rows


def compare_runs(a_dir: Path, b_dir: Path, n_boot: int = N_BOOT, seed: int = SEED) -> dict[str, Any]:
    """``{"env", "a", "b", "items": {...}, "metrics": {key: {"a", "b", "delta", "ci": [lo, hi]}}}``; the
    delta is B − A and its 95% interval comes from a paired percentile bootstrap over shared items."""
    (meta_a, records_a), (meta_b, records_b) = load_run(a_dir), load_run(b_dir)
    env = run_environment(meta_a, meta_b)
    outcomes_a, outcomes_b = _by_item(env, records_a), _by_item(env, records_b)
    shared = sorted(set(outcomes_a) & set(outcomes_b))
    if not shared:
        raise ConfigError("the runs share no scored item (different datasets or splits); nothing to compare")

    rows = paired_deltas(env, outcomes_a, outcomes_b, shared, n_boot, seed)
    return {
        "env": {"name": env.name, "version": env.version},
        "a": {"run": str(a_dir), "model": meta_a.get("model"), "dataset": (meta_a.get("dataset") or {}).get("id")},
        "b": {"run": str(b_dir), "model": meta_b.get("model"), "dataset": (meta_b.get("dataset") or {}).get("id")},
        "items": {"shared": len(shared), "only_a": len(set(outcomes_a) - set(shared)),
                  "only_b": len(set(outcomes_b) - set(shared))},
        "bootstrap": {"n": n_boot, "seed": seed, "level": 0.95, "resamples": "items (all rollouts of a drawn item)"},
        "headline": [key for key, _ in env.headline_metrics if key in rows],
        "metrics": rows,
    }
