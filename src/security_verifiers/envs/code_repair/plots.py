"""code-repair's report plots: repair by weakness, and the funnel from a patch sent to a full repair.

Built with the object-oriented API on an explicit Agg canvas (no pyplot state, safe in worker threads), with a
constrained layout and a label on every axis.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from security_verifiers.envs.code_repair.outcome import RepairOutcome, read_outcomes
from security_verifiers.envs.kits.plots import funnel_figure as kit_funnel
from security_verifiers.envs.kits.plots import save_figure


def by_cwe_figure(outcomes: Sequence[RepairOutcome]) -> Figure:
    """Per CWE: the share of rollouts that blocked every exploit, and the share fully repaired."""
    groups: dict[str, list[RepairOutcome]] = defaultdict(list)
    for o in outcomes:
        groups[o.cwe].append(o)
    names = sorted(groups, key=lambda c: int(c.split("-")[1]))
    blocked = [sum(o.exploit_blocked for o in groups[c]) / len(groups[c]) for c in names]
    repaired = [sum(o.repaired for o in groups[c]) / len(groups[c]) for c in names]
    fig = Figure(figsize=(9, max(3.0, 0.3 * len(names) + 1.5)), layout="constrained")
    ax = fig.add_subplot()
    ys = range(len(names))
    ax.barh([y + 0.2 for y in ys], blocked, height=0.4, color="#9ecae1", label="every exploit blocked")
    ax.barh([y - 0.2 for y in ys], repaired, height=0.4, color="#3182bd", label="repaired (and tests pass)")
    ax.set_yticks(list(ys), [f"{c} ({len(groups[c])})" for c in names])
    ax.set(xlim=(0, 1.05), xlabel="share of rollouts", ylabel="weakness (rollouts)", title="Repair by weakness")
    if names:
        ax.set_ylim(len(names) - 0.5, -0.5)
        ax.legend(loc="lower right")
    else:
        ax.text(0.5, 0.5, "no rollouts", ha="center", va="center", transform=ax.transAxes)
    return fig


def funnel_figure(outcomes: Sequence[RepairOutcome]) -> Figure:
    stages = [("rollouts", len(outcomes)),
              ("answer parsed", sum(o.valid for o in outcomes)),
              ("patch sent", sum(o.patch_present for o in outcomes)),
              ("applied", sum(o.patch_applied for o in outcomes)),
              ("exploits blocked", sum(o.exploit_blocked for o in outcomes)),
              ("repaired", sum(o.repaired for o in outcomes)),
              ("+ static clean", sum(o.repaired and o.static_clean for o in outcomes))]
    return kit_funnel(stages, "rollouts", width=8)


def code_repair_plots(stored: Sequence[Mapping[str, Any] | RepairOutcome], out_dir: Path) -> list[Path]:
    """``repair_by_cwe.png`` and ``patch_funnel.png`` in ``out_dir``."""
    outcomes = read_outcomes(stored)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    return [save_figure(by_cwe_figure(outcomes), out_dir / "repair_by_cwe.png"),
            save_figure(funnel_figure(outcomes), out_dir / "patch_funnel.png")]
