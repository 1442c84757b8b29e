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
    """SFT loss, and for the RL stage the total reward and each component's mean per step."""
    rows = [r for r in read_log(log_path) if "loss" in r or "reward" in r]
    stages = list(dict.fromkeys(r["stage"] for r in rows))
    fig, axes = plt.subplots(1, max(1, len(stages)), figsize=(5.5 * max(1, len(stages)), 3.8), squeeze=False)
    for ax, stage in zip(axes[0], stages, strict=False):
        part = [r for r in rows if r["stage"] == stage]
        if stage == "sft":
            points = [(r["step"], r["loss"]) for r in part if isinstance(r.get("loss"), int | float)]
            ax.plot(*zip(*points, strict=True), label="loss") if points else None
            ax.set_ylabel("loss")
        else:
            keys = ["reward"] + sorted(k for k in part[0] if k.startswith("rewards/") and k.endswith("/mean"))
            for key in keys:
                points = [(r["step"], r[key]) for r in part if isinstance(r.get(key), int | float)]
                if points:
                    ax.plot(*zip(*points, strict=True), label=key.removeprefix("rewards/").removesuffix("/mean"))
            ax.set_ylabel("reward (train batch)")
        ax.set_xlabel("step")
        ax.set_title(stage)
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    if not stages:
        axes[0][0].text(0.5, 0.5, "no logged steps", ha="center", va="center")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out
