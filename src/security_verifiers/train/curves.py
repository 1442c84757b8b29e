"""Learning curves of a training run, drawn from its ``log.jsonl`` alone (so they can be redrawn later)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_log(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def plot_curves(log_path: Path, out: Path) -> Path:
    """SFT loss, and for the RL stage the total reward and each component's mean per step (top row) and the
    health of the signal below it: the share of unparseable answers, the policy's entropy, and the steps the
    no-signal guard skipped (every group with zero reward variance: the policy left unchanged)."""
    rows = [r for r in read_log(log_path) if "loss" in r or "reward" in r]
    stages = list(dict.fromkeys(r["stage"] for r in rows))
    columns = max(1, len(stages))
    fig, axes = plt.subplots(2, columns, figsize=(5.5 * columns, 6.6), squeeze=False,
                             gridspec_kw={"height_ratios": [3, 2]})
    for column, stage in enumerate(stages):
        ax, health = axes[0][column], axes[1][column]
        part = [r for r in rows if r["stage"] == stage]
        if stage == "sft":
            points = [(r["step"], r["loss"]) for r in part if isinstance(r.get("loss"), int | float)]
            ax.plot(*zip(*points, strict=True), label="loss") if points else None
            ax.set_ylabel("loss")
            health.axis("off")
        else:
            keys = ["reward"] + sorted(k for k in part[0] if k.startswith("rewards/") and k.endswith("/mean"))
            for key in keys:
                points = [(r["step"], r[key]) for r in part if isinstance(r.get(key), int | float)]
                if points:
                    ax.plot(*zip(*points, strict=True), label=key.removeprefix("rewards/").removesuffix("/mean"))
            ax.set_ylabel("reward (train batch)")
            _plot_health(health, part)
        ax.set_xlabel("step")
        ax.set_title(stage)
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    if not stages:
        axes[0][0].text(0.5, 0.5, "no logged steps", ha="center", va="center")
        axes[1][0].axis("off")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def _plot_health(ax: Any, part: list[dict[str, Any]]) -> None:
    """Parse-failure rate (left axis, 0-1), entropy (right axis) and a mark at each skipped no-signal step."""
    failures = [(r["step"], r["parse_failure_rate"]) for r in part
                if isinstance(r.get("parse_failure_rate"), int | float)]
    if failures:
        ax.plot(*zip(*failures, strict=True), color="tab:red", label="unparseable share")
    skipped = [r["step"] for r in part if isinstance(r.get("skipped_no_signal"), int) and r["skipped_no_signal"] > 0]
    if skipped:
        ax.scatter(skipped, [0.0] * len(skipped), marker="|", s=80, color="black", label="no signal: step skipped")
    ax.set_ylim(-0.05, 1.05)
    ax.set_ylabel("unparseable share")
    ax.set_xlabel("step")
    entropy = [(r["step"], r["entropy"]) for r in part if isinstance(r.get("entropy"), int | float)]
    if entropy:
        right = ax.twinx()
        right.plot(*zip(*entropy, strict=True), color="tab:blue", label="entropy")
        right.set_ylabel("entropy (nats per token)")
        right.legend(fontsize=8, loc="upper right")
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(alpha=0.3)


def _series(log: list[dict[str, Any]], key: str) -> dict[int, float]:
    return {r["step"]: float(r[key]) for r in log
            if r.get("stage", "").startswith("grpo") and isinstance(r.get(key), int | float)}


def plot_ablation(result: dict[str, Any], found: dict[str, dict[int, dict[str, Any]]], heldout_png: Path,
                  curves_png: Path) -> None:
    """``heldout_png``: each headline metric per variant (a dot per seed, the mean and its 95% interval
    across seeds); ``curves_png``: per reward component and the total, the train-batch mean per step of each
    RL variant (mean ± sd over seeds), and the share of collapsed groups."""
    import numpy as np

    metrics = result["metrics"]
    variants = list(result["variants"])
    fig, axes = plt.subplots(1, len(metrics), figsize=(3.2 * len(metrics), 3.4), squeeze=False)
    for ax, metric in zip(axes[0], metrics, strict=True):
        key = metric["key"]
        for x, variant in enumerate(variants):
            cell = result["variants"][variant]["metrics"].get(key)
            if cell is None:
                continue
            ax.scatter([x] * len(cell["values"]), cell["values"], s=12, alpha=0.5, color="grey")
            low, high = cell["ci"] if cell["ci"] else (cell["mean"], cell["mean"])
            ax.errorbar([x], [cell["mean"]], yerr=[[cell["mean"] - low], [high - cell["mean"]]], fmt="o", capsize=4)
        ax.set_xticks(range(len(variants)), variants, rotation=30)
        ax.set_title(f"{key} {'↑' if metric['higher_is_better'] else '↓'}", fontsize=9)
        ax.grid(alpha=0.3)
    fig.suptitle("held-out, per variant: seeds (grey), mean and 95% interval across seeds", fontsize=9)
    fig.tight_layout()
    fig.savefig(heldout_png, dpi=110)
    plt.close(fig)

    rl = {v: seeds for v, seeds in found.items() if any(_series(s["log"], "reward") for s in seeds.values())}
    keys = sorted({k for seeds in rl.values() for s in seeds.values() for r in s["log"] for k in r
                   if k.startswith("rewards/") and k.endswith("/mean")}) or ["reward"]
    panels = [*keys, "frac_reward_zero_std"]
    fig, axes = plt.subplots(1, len(panels), figsize=(3.6 * len(panels), 3.4), squeeze=False)
    for ax, key in zip(axes[0], panels, strict=True):
        for variant, seeds in rl.items():
            series = [_series(s["log"], key) for s in seeds.values()]
            steps = sorted(set.intersection(*(set(s) for s in series))) if series else []
            if not steps:
                continue
            values = np.array([[s[step] for step in steps] for s in series])
            mean, sd = values.mean(axis=0), values.std(axis=0)
            ax.plot(steps, mean, label=variant)
            ax.fill_between(steps, mean - sd, mean + sd, alpha=0.2)
        title = key.removeprefix("rewards/").removesuffix("/mean")
        ax.set_title("collapsed groups" if key == "frac_reward_zero_std" else title, fontsize=9)
        ax.set_xlabel("RL step")
        ax.grid(alpha=0.3)
        if rl:
            ax.legend(fontsize=7)
    fig.suptitle("train batch, mean ± sd over seeds", fontsize=9)
    fig.tight_layout()
    fig.savefig(curves_png, dpi=110)
    plt.close(fig)
