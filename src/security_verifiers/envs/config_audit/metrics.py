"""Metrics of config-audit, computed from the scorer's outcomes only (so ``sv report`` can rebuild them).

Outcomes are read through :class:`~.outcome.AuditOutcome`: a missing key is an error, never a default. Detection
metrics are micro-averaged over all items: an unparseable answer claims nothing, so its
oracle findings count as missed (it is never dropped). Severity weights are the catalog's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from security_verifiers.core.metrics import bootstrap_ci, mean_or_none, ratio
from security_verifiers.engines.findings import Severity, catalog
from security_verifiers.envs.config_audit.outcome import AuditOutcome, read_outcomes

N_BOOT = 1000


def _f1(tp: float, fp: float, fn: float) -> float | None:
    """F1 as ``2tp / (2tp + fp + fn)``: 0 when there were findings and none was claimed (precision is undefined
    then, but a policy that claims nothing has found nothing), undefined only when there was nothing to find and
    nothing was claimed. The one definition, for the point value and for its bootstrap interval alike.

    >>> _f1(0, 0, 3), _f1(0, 0, 0), _f1(1, 1, 0)
    (0.0, None, 0.6666666666666666)
    """
    return ratio(2 * tp, 2 * tp + fp + fn)


def flat_metrics(outcomes: Sequence[AuditOutcome]) -> dict[str, Any]:
    n = len(outcomes)
    counts = [o.counts() for o in outcomes]
    sums = {k: sum(getattr(c, k) for c in counts) for k in ("tp", "fp", "fn", "tp_w", "fp_w", "fn_w")}
    clean = [o for o in outcomes if o.clean]
    positive = [o for o in outcomes if not o.clean]
    patches = [o for o in outcomes if o.patch_present]
    good_patches = [o for o in patches if o.patch_inventory_ok]
    return {
        "n": n,
        "format_valid_rate": ratio(sum(1 for o in outcomes if o.valid), n),
        "precision": ratio(sums["tp"], sums["tp"] + sums["fp"]),
        "recall": ratio(sums["tp"], sums["tp"] + sums["fn"]),
        "f1": _f1(sums["tp"], sums["fp"], sums["fn"]),
        "precision_weighted": ratio(sums["tp_w"], sums["tp_w"] + sums["fp_w"]),
        "recall_weighted": ratio(sums["tp_w"], sums["tp_w"] + sums["fn_w"]),
        "f1_weighted": _f1(sums["tp_w"], sums["fp_w"], sums["fn_w"]),
        "detection_mean": mean_or_none([o.detection if o.detection is not None else 0.0 for o in outcomes]),
        "clean_pass_rate": ratio(sum(1 for o in clean if o.valid and o.claimed == 0), len(clean)),
        "false_positive_rate_clean": ratio(sum(1 for o in clean if o.valid and (o.claimed or 0) > 0), len(clean)),
        "patch_rate": ratio(sum(1 for o in positive if o.patch_present), len(positive)),
        "patch_apply_rate": ratio(sum(1 for o in patches if o.patch_applied), len(patches)),
        "patch_valid_rate": ratio(len(good_patches), len(patches)),
        "fix_rate": ratio(sum(o.patch_fixed_w or 0.0 for o in positive), sum(o.oracle_weight for o in positive)),
        "new_findings_per_patch": ratio(sum(o.patch_n_new or 0 for o in good_patches), len(good_patches)),
        "tool_calls_mean": mean_or_none([o.tool_calls for o in outcomes]),
        "tool_seconds_mean": mean_or_none([o.tool_seconds for o in outcomes]),
        "over_budget_calls_mean": mean_or_none([o.over_budget for o in outcomes]),
        "reward_mean": mean_or_none([o.reward for o in outcomes]),
    }


def _by_rule(outcomes: Sequence[AuditOutcome]) -> dict[str, dict[str, Any]]:
    counts: dict[str, Counter[str]] = {}
    for o in outcomes:
        for kind, rules in (("tp", o.tp_rules or []), ("fp", o.fp_rules or []), ("fn", o.missed_rules)):
            for rule in rules:
                counts.setdefault(rule, Counter())[kind] += 1
    rows = {}
    for rule in sorted(counts):
        c = counts[rule]
        known = catalog().get(rule)
        rows[rule] = {"severity": known.severity.value if known else "unknown", "tp": c["tp"], "fp": c["fp"],
                      "fn": c["fn"], "precision": ratio(c["tp"], c["tp"] + c["fp"]),
                      "recall": ratio(c["tp"], c["tp"] + c["fn"])}
    return rows


def _by_severity(rule_rows: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out = {}
    for severity in Severity:
        rows = [r for r in rule_rows.values() if r["severity"] == severity.value]
        tp, fp, fn = (sum(r[k] for r in rows) for k in ("tp", "fp", "fn"))
        out[severity.value] = {"tp": tp, "fp": fp, "fn": fn, "precision": ratio(tp, tp + fp),
                               "recall": ratio(tp, tp + fn)}
    return out


def _intervals(outcomes: Sequence[AuditOutcome], items: Sequence[str] | None) -> dict[str, list[float | None]]:
    rewards = np.array([o.reward for o in outcomes], dtype=float)
    counts = [o.counts() for o in outcomes]
    tp_w = np.array([c.tp_w for c in counts])
    fp_w = np.array([c.fp_w for c in counts])
    fn_w = np.array([c.fn_w for c in counts])
    fixed = np.array([0.0 if o.clean else (o.patch_fixed_w or 0.0) for o in outcomes])
    weight = np.array([0.0 if o.clean else o.oracle_weight for o in outcomes])

    def f1w(idx: np.ndarray) -> float | None:
        return _f1(float(tp_w[idx].sum()), float(fp_w[idx].sum()), float(fn_w[idx].sum()))

    stats = {
        "reward_mean": lambda idx: float(rewards[idx].mean()),
        "f1_weighted": f1w,
        "fix_rate": lambda idx: float(fixed[idx].sum() / weight[idx].sum()) if weight[idx].sum() else None,
    }
    return {k: list(bootstrap_ci(len(outcomes), fn, n_boot=N_BOOT, seed=0, clusters=items)) for k, fn in stats.items()}


def config_audit_metrics(stored: Sequence[Mapping[str, Any] | AuditOutcome],
                         items: Sequence[str] | None = None) -> dict[str, Any]:
    """``{"metrics": flat, "intervals": ..., "breakdowns": {platform, cloud, rule, severity}}``; ``items`` (the
    item id of each outcome) makes the bootstrap resample items."""
    outcomes = read_outcomes(stored)
    rule_rows = _by_rule(outcomes)
    terraform = [o for o in outcomes if o.platform == "terraform"]
    return {
        "metrics": flat_metrics(outcomes),
        "intervals": _intervals(outcomes, items) if outcomes else {},
        "breakdowns": {
            "platform": _groups(outcomes, lambda o: o.platform),
            "cloud": _groups(terraform, lambda o: o.cloud),
            "severity": _by_severity(rule_rows),
            "rule": rule_rows,
        },
    }


def point_metrics(stored: Sequence[Mapping[str, Any] | AuditOutcome]) -> dict[str, Any]:
    """The flat metrics alone (a paired bootstrap recomputes them per resample)."""
    return flat_metrics(read_outcomes(stored))


def _groups(outcomes: Sequence[AuditOutcome], key: Callable[[AuditOutcome], str | None]) -> dict[str, dict[str, Any]]:
    """Flat metrics per value of ``key`` (``None`` read as 'unknown'), groups in sorted order."""
    groups: dict[str, list[AuditOutcome]] = {}
    for o in outcomes:
        groups.setdefault(str(key(o) or "unknown"), []).append(o)
    return {name: flat_metrics(groups[name]) for name in sorted(groups)}


def _save(fig: Figure, path: Path) -> Path:
    FigureCanvasAgg(fig)
    fig.savefig(path, dpi=120)
    return path


def config_audit_plots(stored: Sequence[Mapping[str, Any] | AuditOutcome], out_dir: Path) -> list[Path]:
    """``rule_recall.png`` (recall per rule, coloured by severity) and ``patch_funnel.png``."""
    outcomes = read_outcomes(stored)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = _by_rule(outcomes)
    fig = Figure(figsize=(8, max(3.0, 0.22 * len(rows) + 1)))
    ax = fig.add_subplot()
    names = [r for r in rows if rows[r]["recall"] is not None]
    colours = {"low": "#9ecae1", "medium": "#fdae6b", "high": "#e6550d", "critical": "#a50f15", "unknown": "#999"}
    ax.barh(names, [rows[r]["recall"] for r in names], color=[colours[rows[r]["severity"]] for r in names])
    ax.set_xlim(0, 1)
    ax.set_xlabel("recall (oracle findings detected)")
    ax.set_title("Detection by rule (colour = severity)")
    ax.invert_yaxis()
    fig.tight_layout()
    paths = [_save(fig, out_dir / "rule_recall.png")]

    positive = [o for o in outcomes if not o.clean]
    stages = [("items with findings", len(positive)),
              ("patch sent", sum(1 for o in positive if o.patch_present)),
              ("applied", sum(1 for o in positive if o.patch_applied)),
              ("valid + inventory kept", sum(1 for o in positive if o.patch_inventory_ok)),
              ("fixed everything", sum(1 for o in positive if o.fixed_everything))]
    fig = Figure(figsize=(7, 3.5))
    ax = fig.add_subplot()
    ax.bar([s for s, _ in stages], [v for _, v in stages], color="#3182bd")
    for i, (_, v) in enumerate(stages):
        ax.text(i, v, str(v), ha="center", va="bottom")
    ax.set_title("Patch funnel")
    ax.tick_params(axis="x", labelrotation=15)
    fig.tight_layout()
    paths.append(_save(fig, out_dir / "patch_funnel.png"))
    return paths
