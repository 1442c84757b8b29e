"""E1 metrics and plots, computed from the scorer's outcome dicts only (see ``NetworkLogs.score``).

Each outcome carries ``y``, ``family``, ``split``, ``difficulty``, ``valid``, ``action``, ``p``,
``cost``, ``brier`` and ``reward``. Invalid answers stay in every all-item quantity (expected cost at
their recorded maximum cost, reward 0, format-valid rate) and drop out of the quantities that need a
parsed answer (detection rates, Brier, ECE, AURC), so an unparseable reply is never a free pass.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from numpy.typing import NDArray

from security_verifiers.core.metrics import (
    aurc,
    binary_decision_metrics,
    bootstrap_ci,
    breakdown,
    confusion_matrix,
    decision_confidence_loss,
    ece,
    mean_or_none,
    reliability_bins,
    risk_coverage_curve,
)
from security_verifiers.core.scoring import CostProfile

N_BOOT = 1000
BOOT_SEED = 0
N_BINS = 10

_Index = NDArray[np.intp] | slice
_ALL = slice(None)


@dataclass(frozen=True)
class _Columns:
    """The outcomes as aligned numpy columns; ``p`` and ``brier`` are NaN where the answer is invalid."""

    y: NDArray[np.int8]
    action: NDArray[np.str_]
    valid: NDArray[np.bool_]
    p: NDArray[np.float64]
    cost: NDArray[np.float64]
    brier: NDArray[np.float64]
    reward: NDArray[np.float64]

    @classmethod
    def of(cls, outcomes: Sequence[dict[str, Any]]) -> _Columns:
        def floats(key: str) -> NDArray[np.float64]:
            return np.array([np.nan if o[key] is None else o[key] for o in outcomes], dtype=float)

        return cls(
            y=np.array([o["y"] for o in outcomes], dtype=np.int8),
            action=np.array([o["action"] or "" for o in outcomes], dtype=str),
            valid=np.array([o["valid"] for o in outcomes], dtype=bool),
            p=floats("p"), cost=floats("cost"), brier=floats("brier"), reward=floats("reward"),
        )

    @property
    def n(self) -> int:
        return int(self.y.size)

    def decisions(self, idx: _Index = _ALL) -> dict[str, float | int | None]:
        """Decision metrics of the items at ``idx`` (all by default; a bootstrap passes a resample)."""
        return binary_decision_metrics(self.y[idx], self.action[idx], self.valid[idx])

    def valid_mean(self, values: NDArray[np.float64], idx: _Index = _ALL) -> float | None:
        """Mean of ``values`` over the valid answers among the items at ``idx``."""
        return mean_or_none(values[idx][self.valid[idx]])


def _flat_metrics(c: _Columns) -> dict[str, float | int | None]:
    """Every scalar metric of one set of outcomes (the whole run, or one split or difficulty)."""
    p_valid, y_valid = c.p[c.valid], c.y[c.valid]
    return {
        **c.decisions(),
        "expected_cost": mean_or_none(c.cost),
        "brier": c.valid_mean(c.brier),
        "ece": ece(p_valid, y_valid, N_BINS),
        "aurc": aurc(*decision_confidence_loss(p_valid, y_valid)),
        "reward_mean": mean_or_none(c.reward),
    }


def _intervals(c: _Columns, items: Sequence[str] | None) -> dict[str, list[float | None]]:
    """Bootstrap 95% intervals of the headline metrics; every metric sees the same resamples (one seed)."""
    stats: dict[str, Callable[[NDArray[np.intp]], float | None]] = {
        "reward_mean": lambda idx: mean_or_none(c.reward[idx]),
        "expected_cost": lambda idx: mean_or_none(c.cost[idx]),
        "f1": lambda idx: c.decisions(idx)["f1"],
        "tpr": lambda idx: c.decisions(idx)["tpr"],
        "fpr": lambda idx: c.decisions(idx)["fpr"],
        "brier": lambda idx: c.valid_mean(c.brier, idx),
    }
    return {key: list(bootstrap_ci(c.n, fn, n_boot=N_BOOT, seed=BOOT_SEED, clusters=items))
            for key, fn in stats.items()}


def _family_row(outcomes: list[dict[str, Any]]) -> dict[str, Any]:
    """One family: its detection rate if malicious, its false-alarm rate if benign (both if mixed)."""
    c = _Columns.of(outcomes)
    d = c.decisions()
    has_malicious, has_benign = bool(c.y.any()), not bool(c.y.all())
    row: dict[str, Any] = {"n": c.n, "label": "mixed" if has_malicious and has_benign
                           else "Malicious" if has_malicious else "Benign"}
    if has_malicious:
        row["detection_rate"] = d["tpr"]
    if has_benign:
        row["false_alarm_rate"] = d["fpr"]
    row.update(abstain_rate=d["abstain_rate"], format_valid_rate=d["format_valid_rate"],
               expected_cost=mean_or_none(c.cost), reward_mean=mean_or_none(c.reward))
    return row


def point_metrics(outcomes: Sequence[dict[str, Any]]) -> dict[str, float | int | None]:
    """The scalar metrics of ``outcomes`` without intervals (a paired bootstrap recomputes them per resample)."""
    return _flat_metrics(_Columns.of(outcomes))


def network_logs_metrics(outcomes: Sequence[dict[str, Any]], costs: CostProfile,
                         items: Sequence[str] | None = None) -> dict[str, Any]:
    """``{"metrics": flat, "intervals": {metric: [lo, hi]}, "breakdowns": {family|split|difficulty: ...}}``.

    ``costs`` is the profile the outcomes were scored under; its values are echoed in the metrics
    (``cost_missed`` ...) so an expected cost is never read without the costs that produced it.
    ``items`` (the item id of each outcome) makes the bootstrap resample items rather than rollouts.
    """
    c = _Columns.of(outcomes)

    def flat(group: list[dict[str, Any]]) -> dict[str, Any]:
        return _flat_metrics(_Columns.of(group))

    metrics = {**_flat_metrics(c), "cost_missed": costs.missed, "cost_false_alarm": costs.false_alarm,
               "cost_abstain": costs.abstain}
    return {
        "metrics": metrics,
        "intervals": _intervals(c, items),
        "breakdowns": {
            "family": breakdown(outcomes, "family", _family_row),
            "split": breakdown(outcomes, "split", flat),
            "difficulty": breakdown(outcomes, "difficulty", flat),
        },
    }


# -- plots ------------------------------------------------------------------------------------------
# Figures are built with the object-oriented API on an explicit Agg canvas: no pyplot state, no GUI
# backend, nothing left open to close, and safe to call from worker threads.


def _save(fig: Figure, path: Path) -> Path:
    FigureCanvasAgg(fig)
    fig.savefig(path, dpi=120)
    return path


def _no_data(ax: Any, what: str) -> None:
    ax.text(0.5, 0.5, f"no {what}", ha="center", va="center", transform=ax.transAxes)


def _reliability_plot(c: _Columns, path: Path) -> Path:
    """Observed malicious fraction per forecast bin against the diagonal, with bin counts below."""
    fig = Figure(figsize=(5.5, 6))
    top, bottom = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    p_valid, y_valid = c.p[c.valid], c.y[c.valid]
    bins = reliability_bins(p_valid, y_valid, N_BINS)
    centers = [(b["lo"] + b["hi"]) / 2 for b in bins]
    top.plot([0, 1], [0, 1], linestyle="--", color="grey", label="perfect calibration")
    filled = [b for b in bins if b["count"]]
    top.plot([b["mean_p"] for b in filled], [b["frac_positive"] for b in filled], marker="o", label="model")
    top.set(xlim=(0, 1), ylim=(0, 1), ylabel="observed fraction malicious")
    ece_value = ece(p_valid, y_valid, N_BINS)
    top.set_title(f"Reliability (ECE = {ece_value:.3f}, n = {p_valid.size})" if ece_value is not None
                  else "Reliability")
    if filled:
        top.legend(loc="upper left")
    else:
        _no_data(top, "valid answers")
    counts = [b["count"] for b in bins]
    bars = bottom.bar(centers, counts, width=1 / N_BINS, edgecolor="black", color="tab:blue", alpha=0.6)
    bottom.bar_label(bars, labels=[str(n) if n else "" for n in counts], fontsize=7)
    bottom.set(xlabel="p_malicious", ylabel="count")
    fig.tight_layout()
    return _save(fig, path)


def _risk_coverage_plot(c: _Columns, path: Path) -> Path:
    """Error rate of the most confident answers as more of them are accepted."""
    fig = Figure(figsize=(5.5, 4))
    ax = fig.subplots()
    confidence, loss = decision_confidence_loss(c.p[c.valid], c.y[c.valid])
    coverage, risk = risk_coverage_curve(confidence, loss)
    if coverage.size:
        ax.step(np.r_[0.0, coverage], np.r_[risk[0], risk], where="pre", label="model")
        ax.axhline(risk[-1], linestyle="--", color="grey", label="error rate at full coverage")
        ax.legend(loc="upper left")
        ax.set_title(f"Risk–coverage (AURC = {aurc(confidence, loss):.3f})")
    else:
        _no_data(ax, "valid answers")
        ax.set_title("Risk–coverage")
    # Zoom on the risks that occur (small error rates would be a flat line on a 0–1 axis).
    top = max(0.05, 1.1 * float(risk.max())) if risk.size else 1.0
    ax.set(xlim=(0, 1), ylim=(0, min(1.0, top)), xlabel="coverage (most confident first)",
           ylabel="risk (error rate of p ≥ 0.5)")
    fig.tight_layout()
    return _save(fig, path)


def _confusion_plot(c: _Columns, path: Path) -> Path:
    """Counts (and row shares) of each prediction, abstention and invalid answer per true class."""
    counts = np.array(confusion_matrix(c.y, c.action, c.valid))
    rows = counts.sum(axis=1, keepdims=True)
    shares = np.divide(counts, rows, out=np.zeros(counts.shape), where=rows > 0)
    fig = Figure(figsize=(6, 3.2))
    ax = fig.subplots()
    ax.imshow(shares, cmap="Blues", vmin=0, vmax=1, aspect="auto")
    for (i, j), n in np.ndenumerate(counts):
        ax.text(j, i, f"{n}\n({shares[i, j]:.0%})", ha="center", va="center",
                color="white" if shares[i, j] > 0.6 else "black")
    ax.set_xticks(range(4), ["Benign", "Abstain", "Malicious", "Invalid"])
    ax.set_yticks(range(2), ["Benign", "Malicious"])
    ax.set(xlabel="prediction", ylabel="truth", title=f"Confusion (n = {c.n})")
    fig.tight_layout()
    return _save(fig, path)


def network_logs_plots(outcomes: Sequence[dict[str, Any]], out_dir: Path) -> list[Path]:
    """Write ``reliability.png``, ``risk_coverage.png`` and ``confusion.png`` into ``out_dir``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    c = _Columns.of(outcomes)
    return [
        _reliability_plot(c, out_dir / "reliability.png"),
        _risk_coverage_plot(c, out_dir / "risk_coverage.png"),
        _confusion_plot(c, out_dir / "confusion.png"),
    ]
