"""config-audit's report plots: recall per rule (coloured by severity) and the patch funnel.

Built with the object-oriented API on an explicit Agg canvas (no pyplot state, safe in worker threads), with a
constrained layout so that a legend placed outside the axes never covers a bar, and a label on every axis.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure
from matplotlib.patches import Patch

from security_verifiers.engines.findings import Severity
from security_verifiers.envs.config_audit.metrics import rule_rows_of
from security_verifiers.envs.config_audit.outcome import AuditOutcome, read_outcomes
from security_verifiers.envs.kits.plots import funnel_figure, save_figure

#: Bar colour per severity, light to dark with the weight.
SEVERITY_COLOURS = {"low": "#9ecae1", "medium": "#fdae6b", "high": "#e6550d", "critical": "#a50f15",
                    "unknown": "#999999"}


def rule_recall_figure(outcomes: Sequence[AuditOutcome]) -> Figure:
    """One bar per rule the oracle found: its recall, coloured by severity, labelled ``found/findings``."""
    rows = rule_rows_of(outcomes)
    names = [r for r in rows if rows[r]["recall"] is not None]
    fig = Figure(figsize=(9, max(3.0, 0.22 * len(names) + 1.5)), layout="constrained")
    ax = fig.add_subplot()
    ax.barh(names, [rows[r]["recall"] for r in names], color=[SEVERITY_COLOURS[rows[r]["severity"]] for r in names])
    for y, rule in enumerate(names):
        ax.text(rows[rule]["recall"] + 0.01, y, f"{rows[rule]['tp']}/{rows[rule]['n_findings']}", va="center",
                fontsize=7)
    ax.set(xlim=(0, 1.15), xlabel="recall (oracle findings detected; bar label: found/findings)", ylabel="rule",
           title="Detection by rule")
    if names:
        ax.set_ylim(len(names) - 0.5, -0.5)  # the first rule on top, no empty band around the bars
    else:
        ax.text(0.5, 0.5, "no oracle findings", ha="center", va="center", transform=ax.transAxes)
    present = [s.value for s in Severity if any(rows[r]["severity"] == s.value for r in names)]
    present += ["unknown"] if any(rows[r]["severity"] == "unknown" for r in names) else []
    if present:
        fig.legend(handles=[Patch(color=SEVERITY_COLOURS[s], label=s) for s in present], title="severity",
                   loc="outside right upper")
    return fig


def patch_funnel_figure(outcomes: Sequence[AuditOutcome]) -> Figure:
    """How many items with findings got a patch, one that applied, one that kept the config, one that fixed all."""
    positive = [o for o in outcomes if not o.clean]
    stages = [("items with findings", len(positive)),
              ("patch sent", sum(1 for o in positive if o.patch_present)),
              ("applied", sum(1 for o in positive if o.patch_applied)),
              ("valid + inventory kept", sum(1 for o in positive if o.patch_inventory_ok)),
              ("fixed everything", sum(1 for o in positive if o.fixed_everything))]
    return funnel_figure(stages, "items", width=7)


def config_audit_plots(stored: Sequence[Mapping[str, Any] | AuditOutcome], out_dir: Path) -> list[Path]:
    """``rule_recall.png`` and ``patch_funnel.png`` in ``out_dir``."""
    outcomes = read_outcomes(stored)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    return [save_figure(rule_recall_figure(outcomes), out_dir / "rule_recall.png"),
            save_figure(patch_funnel_figure(outcomes), out_dir / "patch_funnel.png")]
