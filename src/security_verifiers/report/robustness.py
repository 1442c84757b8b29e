"""A run's robustness: each metric on the clean items and on each rewrite kind of the ``robust`` split, paired
item by item (:mod:`..envs.kits.robust`).

A run made with ``--split test,robust`` holds every clean test item and every rewrite of it (or, as ``sv bench
--robust`` makes them, a run of the robust split beside a run of the test split by the same model). For each
rewrite kind, the clean items that have that rewrite are paired with it, and each metric's change (rewritten -
clean) gets a 95% paired bootstrap interval over those items, as ``sv compare`` computes it between two runs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from security_verifiers.core.errors import ConfigError
from security_verifiers.core.metrics import BOOT_SEED, N_BOOT
from security_verifiers.envs.kits.robust import ROBUST_SPLIT, SEPARATOR, clean_id
from security_verifiers.report.compare import _by_item, load_run, paired_deltas, run_environment


def robustness(run_dir: Path, n_boot: int = N_BOOT, seed: int = BOOT_SEED,
               clean_run: Path | None = None) -> dict[str, Any]:
    """``{"env", "run", "kinds": {kind: {"items": n, "metrics": {key: {"a": clean, "b": rewritten, "delta",
    "ci"}}}}, "headline"}``; ``clean_run``: the clean items are in this other run, of the same environment, config
    and model."""
    metadata, records = load_run(run_dir)
    env = run_environment(metadata, metadata)
    if clean_run is not None:
        clean_metadata, clean_records = load_run(clean_run)
        run_environment(metadata, clean_metadata)
        if clean_metadata.get("model") != metadata.get("model"):
            raise ConfigError(f"{clean_run} is {clean_metadata.get('model')}'s run, {run_dir} is "
                              f"{metadata.get('model')}'s: a robustness pairs one model's answers")
        records = [*clean_records, *records]
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
        if all(rewritten[item] == clean[item] for item in shared):
            # every rewritten item scored exactly as its clean item: every resample's change is 0, so the interval
            # is [0, 0] without drawing it (a baseline that reads only what the rewrite keeps)
            rows[kind] = {"items": len(shared), "identical": True,
                          "metrics": paired_deltas(env, clean, rewritten, shared, n_boot=0, seed=seed)}
            for metric in rows[kind]["metrics"].values():
                metric["ci"] = [0.0, 0.0] if metric["delta"] is not None else [None, None]
            continue
        rows[kind] = {"items": len(shared), "identical": False,
                      "metrics": paired_deltas(env, clean, rewritten, shared, n_boot, seed)}
    return {"env": {"name": env.name, "version": env.version}, "run": str(run_dir), "model": metadata.get("model"),
            "bootstrap": {"n": n_boot, "seed": seed, "level": 0.95, "resamples": "clean items with their rewrite"},
            "headline": [key for key, _ in env.headline_metrics], "kinds": rows}


def _cell(value: float | None) -> str:
    return "—" if value is None else f"{value:.4f}"


def _resamples(entries: Sequence[dict[str, Any]]) -> str:
    return ", ".join(sorted({str(e["robustness"]["bootstrap"]["n"]) for e in entries})) or "no"


def render_robustness(entries: Sequence[dict[str, Any]]) -> str:
    """Markdown: per environment, each baseline's first headline metric on the clean items and on each rewrite kind."""
    lines = ["# Robustness of the baselines", "",
             "Each baseline on the public test items and on their label-preserving rewrites (the `robust` "
             "split); delta = rewritten - clean with its 95% paired bootstrap interval over items "
             f"({_resamples(entries)} resamples; [0, 0] without resampling where every rewritten item scored exactly "
             "as its clean item). Every rewritten item was checked to keep its label.", ""]
    by_env: dict[str, list[dict[str, Any]]] = {}
    for entry in entries:
        by_env.setdefault(entry["robustness"]["env"]["name"], []).append(entry)
    for env_name, rows in by_env.items():
        first = rows[0]["robustness"]
        metric = first["headline"][0]
        lines += [f"## {env_name} {first['env']['version']}", "",
                  f"| baseline | rewrite | items | {metric} clean | rewritten | delta | 95% CI |",
                  "|---|---|---:|---:|---:|---:|---|"]
        for entry in rows:
            for kind, row in entry["robustness"]["kinds"].items():
                m = row["metrics"].get(metric) or {}
                lo, hi = m.get("ci") or (None, None)
                lines.append(f"| {entry['policy']} | {kind} | {row['items']} | {_cell(m.get('a'))} | "
                             f"{_cell(m.get('b'))} | {_cell(m.get('delta'))} | [{_cell(lo)}, {_cell(hi)}] |")
        lines.append("")
    return "\n".join(lines)


def write_robustness(entries: Sequence[dict[str, Any]], out: Path) -> tuple[Path, Path]:
    """``robustness.md`` and ``robustness.json`` (every headline metric, per baseline and kind) in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    md_path, json_path = out / "robustness.md", out / "robustness.json"
    md_path.write_text(render_robustness(entries), encoding="utf-8")
    json_path.write_text(json.dumps([{"policy": e["policy"], "run_dir": e["run_dir"], **e["robustness"]}
                                     for e in entries], indent=2), encoding="utf-8")
    return md_path, json_path
