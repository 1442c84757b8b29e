"""Plot pieces the environments' reports share: saving a figure as the reports do, and a funnel of stages (E2's
and E3's patch funnels). Figures are built with matplotlib's object API and the Agg canvas (no pyplot state, so
plots can be drawn from any thread of a run)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure


def save_figure(fig: Figure, path: Path) -> Path:
    """Write ``fig`` as a PNG at the reports' resolution; returns ``path``. zlib level 3, not PIL's 6: as small a
    file for these flat-coloured plots (measured: 455 KB against 479 KB for E2's rule recall) in a quarter less
    time, which a report pays at the end of every run."""
    FigureCanvasAgg(fig)
    fig.savefig(path, dpi=120, pil_kwargs={"compress_level": 3})
    return path


def funnel_figure(stages: Sequence[tuple[str, int]], unit: str, width: float = 7.0,
                  title: str = "Patch funnel") -> Figure:
    """One bar per stage, each a subset of the one before, labelled with its count of ``unit``."""
    fig = Figure(figsize=(width, 3.8), layout="constrained")
    ax = fig.add_subplot()
    ax.bar([s for s, _ in stages], [v for _, v in stages], color="#3182bd")
    for i, (_, v) in enumerate(stages):
        ax.text(i, v, str(v), ha="center", va="bottom")
    ax.set(xlabel="stage (each a subset of the one before)", ylabel=unit, title=title,
           ylim=(0, max(1, stages[0][1] if stages else 0) * 1.12))
    ax.tick_params(axis="x", labelrotation=15)
    return fig
