"""The report plots of an abstaining classifier: reliability, risk-coverage and confusion.

Figures are built with the object-oriented API on an explicit Agg canvas: no pyplot state, no GUI backend,
nothing left open to close, and safe to call from worker threads. Axis and tick names come from the
environment's :class:`.reward.Labels`. Legends sit outside the axes (a constrained layout makes room for them):
a miscalibrated model's curve runs anywhere in the unit square, so no corner inside it is safe.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from security_verifiers.core.metrics import (
    aurc,
    confusion_matrix,
    decision_confidence_loss,
    ece,
    reliability_bins,
    risk_coverage_curve,
)
from security_verifiers.envs.kits.abstaining.metrics import N_BINS, Columns
from security_verifiers.envs.kits.abstaining.reward import ClassifierOutcome, Labels
from security_verifiers.envs.kits.plots import save_figure


def _no_data(ax: Any, what: str) -> None:
    ax.text(0.5, 0.5, f"no {what}", ha="center", va="center", transform=ax.transAxes)


def reliability_figure(c: Columns, labels: Labels) -> Figure:
    """Observed positive fraction per forecast bin against the diagonal, with bin counts below."""
    fig = Figure(figsize=(5.5, 6.4), layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    p_valid, y_valid = c.forecasts()
    bins = reliability_bins(p_valid, y_valid, N_BINS)
    centers = [(k / N_BINS + (k + 1) / N_BINS) / 2 for k in range(N_BINS)]  # the bins' lo and hi
    top.plot([0, 1], [0, 1], linestyle="--", color="grey", label="perfect calibration")
    filled = [b for b in bins if b["count"]]
    top.plot([b["mean_p"] for b in filled], [b["frac_positive"] for b in filled], marker="o", label="model")
    top.set(xlim=(0, 1), ylim=(0, 1), ylabel=f"observed fraction {labels.positive.lower()}")
    ece_value = ece(p_valid, y_valid, N_BINS)
    top.set_title(f"Reliability (ECE = {ece_value:.3f}, n = {p_valid.size})" if ece_value is not None
                  else "Reliability")
    if filled:
        fig.legend(*top.get_legend_handles_labels(), loc="outside lower center", ncols=2)
    else:
        _no_data(top, "valid answers")
    counts = [b["count"] for b in bins]
    bars = bottom.bar(centers, counts, width=1 / N_BINS, edgecolor="black", color="tab:blue", alpha=0.6)
    bottom.bar_label(bars, labels=[str(n) if n else "" for n in counts], fontsize=7)
    bottom.set(xlabel=f"stated {labels.probability}", ylabel="answers")
    return fig


def risk_coverage_figure(c: Columns) -> Figure:
    """Error rate of the most confident answers as more of them are accepted."""
    fig = Figure(figsize=(5.5, 4.4), layout="constrained")
    ax = fig.subplots()
    confidence, loss = decision_confidence_loss(*c.forecasts())
    coverage, risk = risk_coverage_curve(confidence, loss)
    if coverage.size:
        ax.step(np.r_[0.0, coverage], np.r_[risk[0], risk], where="pre", label="model")
        ax.axhline(risk[-1], linestyle="--", color="grey", label="error rate at full coverage")
        fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncols=2)
        ax.set_title(f"Risk–coverage (AURC = {aurc(confidence, loss):.3f})")
    else:
        _no_data(ax, "valid answers")
        ax.set_title("Risk–coverage")
    # Zoom on the risks that occur (small error rates would be a flat line on a 0–1 axis).
    top = max(0.05, 1.1 * float(risk.max())) if risk.size else 1.0
    ax.set(xlim=(0, 1), ylim=(0, min(1.0, top)), xlabel="coverage (most confident first)",
           ylabel="risk (error rate of p ≥ 0.5)")
    return fig


def confusion_figure(c: Columns, labels: Labels) -> Figure:
    """Counts (and row shares) of each prediction, abstention and invalid answer per true class."""
    counts = np.array(confusion_matrix(c.y, c.action, c.valid))
    rows = counts.sum(axis=1, keepdims=True)
    shares = np.divide(counts, rows, out=np.zeros(counts.shape), where=rows > 0)
    fig = Figure(figsize=(6, 3.2), layout="constrained")
    ax = fig.subplots()
    ax.imshow(shares, cmap="Blues", vmin=0, vmax=1, aspect="auto")
    for (i, j), n in np.ndenumerate(counts):
        ax.text(j, i, f"{n}\n({shares[i, j]:.0%})", ha="center", va="center",
                color="white" if shares[i, j] > 0.6 else "black")
    ax.set_xticks(range(4), [labels.negative, labels.abstain, labels.positive, "Invalid"])
    ax.set_yticks(range(2), [labels.negative, labels.positive])
    ax.set(xlabel="prediction", ylabel="truth", title=f"Confusion (n = {c.n})")
    return fig


def classifier_figures(outcomes: Sequence[ClassifierOutcome | Mapping[str, Any]], labels: Labels) -> dict[str, Figure]:
    """The three figures by file name (what :func:`classifier_plots` writes), of outcomes read or stored (an
    environment whose outcome model adds fields passes them read)."""
    c = Columns.of(ClassifierOutcome.read_all(outcomes))
    return {"reliability.png": reliability_figure(c, labels), "risk_coverage.png": risk_coverage_figure(c),
            "confusion.png": confusion_figure(c, labels)}


def classifier_plots(outcomes: Sequence[ClassifierOutcome | Mapping[str, Any]], labels: Labels,
                     out_dir: Path) -> list[Path]:
    """Write ``reliability.png``, ``risk_coverage.png`` and ``confusion.png`` into ``out_dir``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    return [save_figure(fig, out_dir / name) for name, fig in classifier_figures(outcomes, labels).items()]
