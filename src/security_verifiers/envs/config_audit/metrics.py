"""Metrics of config-audit, computed from the scorer's outcomes only (so ``sv report`` can rebuild them).

Outcomes are read through :class:`~.outcome.AuditOutcome`: a missing key is an error, never a default. Detection
metrics are micro-averaged over all items: an unparseable answer claims nothing, so its
oracle findings count as missed (it is never dropped). Severity weights are the catalog's.

A micro-averaged F1 is dominated by the frequent rules, so it can look fine while a whole kind of finding (the
hard-coded secrets, say) is never found: the per-severity rows and ``worst_rules`` (the rules found least often
among those with enough findings to tell) are what the report shows beside the headline.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from security_verifiers.core.metrics import FEW, mean_or_none, ratio
from security_verifiers.core.metrics_builder import Breakdown, Statistic, build_metrics
from security_verifiers.core.metrics_report import ConstantPolicy
from security_verifiers.engines.findings import Severity, catalog
from security_verifiers.envs.config_audit.outcome import AuditOutcome, read_outcomes

#: ``worst_rules``: at most this many rules, each with at least :data:`WORST_RULES_MIN_FINDINGS` oracle findings
#: (a rule missed once out of once says little; the public test split has 1 to 6 findings per rule, its
#: hard-coded AWS key 3).
WORST_RULES = 5
WORST_RULES_MIN_FINDINGS = 3
#: The constant answer of config-audit: claim nothing and send no patch.
EMPTY_ANSWER = '{"findings": [], "patch": ""}'


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


def _finding_counts(tp: int, fp: int, fn: int) -> dict[str, Any]:
    """A rule's or a severity's row: counts, ``n_findings`` (the oracle's: tp + fn), rates, ``few_findings``."""
    return {"tp": tp, "fp": fp, "fn": fn, "n_findings": tp + fn, "precision": ratio(tp, tp + fp),
            "recall": ratio(tp, tp + fn), "few_findings": tp + fn < FEW}


def rule_rows_of(outcomes: Sequence[AuditOutcome]) -> dict[str, dict[str, Any]]:
    """One row per rule that was found, missed or claimed wrongly: severity, counts and rates (the plot's too)."""
    counts: dict[str, Counter[str]] = {}
    for o in outcomes:
        for kind, rules in (("tp", o.tp_rules or []), ("fp", o.fp_rules or []), ("fn", o.missed_rules)):
            for rule in rules:
                counts.setdefault(rule, Counter())[kind] += 1
    rows = {}
    for rule in sorted(counts):
        c = counts[rule]
        known = catalog().get(rule)
        rows[rule] = {"severity": known.severity.value if known else "unknown",
                      **_finding_counts(c["tp"], c["fp"], c["fn"])}
    return rows


def _by_severity(rule_rows: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out = {}
    for severity in Severity:
        rows = [r for r in rule_rows.values() if r["severity"] == severity.value]
        out[severity.value] = _finding_counts(*(sum(r[k] for r in rows) for k in ("tp", "fp", "fn")))
    return out


def _worst_rules(rule_rows: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The rules with the lowest recall among those the oracle found at least :data:`WORST_RULES_MIN_FINDINGS`
    times, and only those with something missed; ties go to the graver severity, then to more findings, then by id.
    """
    def severity_weight(row: dict[str, Any]) -> float:
        return Severity(row["severity"]).weight if row["severity"] in set(Severity) else 0.0

    candidates = [(rule, row) for rule, row in rule_rows.items()
                  if row["n_findings"] >= WORST_RULES_MIN_FINDINGS and row["recall"] is not None and row["recall"] < 1]
    candidates.sort(key=lambda pair: (pair[1]["recall"], -severity_weight(pair[1]), -pair[1]["n_findings"], pair[0]))
    return {rule: {k: row[k] for k in ("severity", "n_findings", "tp", "fn", "recall", "precision", "few_findings")}
            for rule, row in candidates[:WORST_RULES]}


def empty_answer_policy(outcomes: Sequence[AuditOutcome]) -> ConstantPolicy | None:
    """The empty answer (no finding claimed, no patch) and its mean reward on these outcomes' items.

    It is exact from the outcomes: on a clean file the empty claim scores detection 1 and the missing patch
    patch 1 (reward 1 whatever the weights); on a file with findings it detected nothing and fixed nothing
    (reward 0); it calls no tool, so it pays no budget cost. Its mean is the share of clean items. Not proven the
    best constant (a fixed claim could hit a resource name that recurs), but the one a lazy policy reaches for.
    ``None`` without outcomes.
    """
    if not outcomes:
        return None
    reward = float(np.mean([1.0 if o.clean else 0.0 for o in outcomes]))
    return ConstantPolicy(policy="empty-answer", answer=EMPTY_ANSWER, reward_mean=reward,
                          note="It claims nothing and patches nothing: reward 1 on a clean file, 0 on one with "
                               "findings, so its mean is the share of clean items. Not proven the best constant "
                               "answer, but the one a lazy policy reaches for.")


def statistics(outcomes: Sequence[AuditOutcome]) -> dict[str, Statistic]:
    """The bootstrap statistic of each metric with an interval: weighted detection and fix rates are ratios of sums
    over the drawn items (micro-averaged, as the point values are), not means of per-item values."""
    rewards = np.array([o.reward for o in outcomes], dtype=float)
    counts = [o.counts() for o in outcomes]
    tp_w = np.array([c.tp_w for c in counts])
    fp_w = np.array([c.fp_w for c in counts])
    fn_w = np.array([c.fn_w for c in counts])
    fixed = np.array([0.0 if o.clean else (o.patch_fixed_w or 0.0) for o in outcomes])
    weight = np.array([0.0 if o.clean else o.oracle_weight for o in outcomes])

    def f1w(idx: np.ndarray) -> float | None:
        return _f1(float(tp_w[idx].sum()), float(fp_w[idx].sum()), float(fn_w[idx].sum()))

    clean = np.array([o.clean for o in outcomes])
    false_alarm = np.array([o.clean and o.valid and (o.claimed or 0) > 0 for o in outcomes])
    patched = np.array([o.patch_present for o in outcomes])
    good_patch = np.array([bool(o.patch_present and o.patch_inventory_ok) for o in outcomes])
    tool_calls = np.array([o.tool_calls for o in outcomes], dtype=float)

    def rate(hits: np.ndarray, of: np.ndarray) -> Callable[[np.ndarray], float | None]:
        return lambda idx: ratio(int(hits[idx].sum()), int(of[idx].sum()))

    stats: dict[str, Callable[[np.ndarray], float | None]] = {
        "reward_mean": lambda idx: float(rewards[idx].mean()),
        "f1_weighted": f1w,
        "precision_weighted": lambda idx: ratio(float(tp_w[idx].sum()), float(tp_w[idx].sum() + fp_w[idx].sum())),
        "recall_weighted": lambda idx: ratio(float(tp_w[idx].sum()), float(tp_w[idx].sum() + fn_w[idx].sum())),
        "fix_rate": lambda idx: float(fixed[idx].sum() / weight[idx].sum()) if weight[idx].sum() else None,
        "patch_valid_rate": rate(good_patch, patched),
        "false_positive_rate_clean": rate(false_alarm, clean),
        "tool_calls_mean": lambda idx: float(tool_calls[idx].mean()),
    }
    return stats


#: By platform and cloud (Terraform files only), each row the group's flat metrics with its ``reward_ci`` and
#: ``few_items``; by severity, the rules found least often (``worst_rules``) and by rule, rows of findings
#: (``n_findings``, ``few_findings``).
BREAKDOWNS: dict[str, Breakdown] = {
    "platform": Breakdown(key=lambda o: o.platform),
    "cloud": Breakdown(key=lambda o: o.cloud, among=lambda o: o.platform == "terraform"),
    "severity": Breakdown(rows=lambda outcomes: _by_severity(rule_rows_of(outcomes))),
    "worst_rules": Breakdown(rows=lambda outcomes: _worst_rules(rule_rows_of(outcomes))),
    "rule": Breakdown(rows=rule_rows_of),
}


def config_audit_metrics(stored: Sequence[Mapping[str, Any] | AuditOutcome],
                         items: Sequence[str] | None = None) -> dict[str, Any]:
    """``{"metrics": flat, "intervals": ..., "breakdowns": {platform, cloud, severity, worst_rules, rule},
    "constant_policy": the empty answer}`` (what ``ConfigAudit.metrics`` builds from the same declarations);
    ``items`` (the item id of each outcome) makes the bootstrap resample items."""
    outcomes = read_outcomes(stored)
    return build_metrics(outcomes, items, flat_metrics, statistics, BREAKDOWNS, empty_answer_policy(outcomes))


def point_metrics(stored: Sequence[Mapping[str, Any] | AuditOutcome]) -> dict[str, Any]:
    """The flat metrics alone (a paired bootstrap recomputes them per resample)."""
    return flat_metrics(read_outcomes(stored))
