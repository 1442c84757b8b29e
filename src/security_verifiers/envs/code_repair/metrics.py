"""Metrics of code-repair, computed from the scorer's outcomes only (so ``sv report`` can rebuild them).

Rates are over every rollout unless said otherwise: a rollout whose patch was absent, did not apply, or was not
run counts as not repaired, not blocking, not passing (the unpatched program is the vulnerable one). Bootstrap
intervals resample items.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from security_verifiers.core.metrics import bootstrap_ci, group_indices, group_reward, mean_of, mean_or_none, ratio
from security_verifiers.envs.code_repair.outcome import RepairOutcome, read_outcomes


def flat_metrics(outcomes: Sequence[RepairOutcome]) -> dict[str, Any]:
    """Detection metrics over every rollout; repair metrics over the rollouts of items that have tests (generated
    programs, imported cases), so that a run of detection-only records shows them as not applicable (None), not 0."""
    n = len(outcomes)
    programs = [o for o in outcomes if o.kind == "program"]
    present = [o for o in programs if o.patch_present]
    applied = [o for o in programs if o.patch_applied]
    m = len(programs)
    return {
        "n": n,
        "n_repairable": m,
        "format_valid_rate": ratio(sum(o.valid for o in outcomes), n),
        "cwe_accuracy": ratio(sum(o.cwe_correct for o in outcomes), n),
        "localization_rate": ratio(sum(o.located for o in outcomes), n),
        "patch_rate": ratio(len(present), m),
        "patch_apply_rate": ratio(len(applied), len(present)),
        "functional_pass_rate": ratio(sum(o.functional_fraction == 1.0 for o in programs), m),
        "exploit_blocked_rate": ratio(sum(o.exploit_blocked for o in programs), m),
        "repair_rate": ratio(sum(o.repaired for o in programs), m),
        "static_clean_rate": ratio(sum(o.repaired and o.static_clean for o in programs), m),
        "harness_probe_rate": ratio(sum(bool(o.harness_probes) for o in programs), m),
        "timeout_rate": ratio(sum(o.timed_out for o in programs), m),
        "tool_calls_mean": mean_or_none([o.tool_calls for o in outcomes]),
        "patch_lines_mean": mean_or_none([o.patch_lines for o in applied if o.patch_lines is not None]),
        "reward_mean": mean_or_none([o.reward for o in outcomes]),
    }


def _intervals(outcomes: Sequence[RepairOutcome], items: Sequence[str] | None) -> dict[str, list[float | None]]:
    nan = float("nan")
    arrays = {"reward_mean": np.array([o.reward for o in outcomes], dtype=float),
              "repair_rate": np.array([o.repaired if o.kind == "program" else nan for o in outcomes], dtype=float),
              "exploit_blocked_rate": np.array([o.exploit_blocked if o.kind == "program" else nan
                                                for o in outcomes], dtype=float),
              "cwe_accuracy": np.array([o.cwe_correct for o in outcomes], dtype=float)}

    return {k: list(bootstrap_ci(len(outcomes), mean_of(v), clusters=items)) for k, v in arrays.items()}


def _groups(outcomes: Sequence[RepairOutcome], items: Sequence[str] | None,
            key: Callable[[RepairOutcome], str]) -> dict[str, dict[str, Any]]:
    rewards = np.array([o.reward for o in outcomes], dtype=float)
    out = {}
    for name, idx in group_indices([key(o) for o in outcomes]).items():
        out[name] = {**flat_metrics([outcomes[i] for i in idx]),
                     **group_reward(rewards[idx], None if items is None else [items[i] for i in idx])}
    return out


def code_repair_metrics(stored: Sequence[Mapping[str, Any] | RepairOutcome],
                        items: Sequence[str] | None = None) -> dict[str, Any]:
    """``{"metrics": flat, "intervals": ..., "breakdowns": {cwe, split, variant}}``."""
    outcomes = read_outcomes(stored)
    return {
        "metrics": flat_metrics(outcomes),
        "intervals": _intervals(outcomes, items) if outcomes else {},
        "breakdowns": {
            "cwe": _groups(outcomes, items, lambda o: o.cwe),
            "split": _groups(outcomes, items, lambda o: o.split),
            "variant": _groups(outcomes, items, lambda o: f"{o.family}/{o.variant}"),
        },
    }


def point_metrics(stored: Sequence[Mapping[str, Any] | RepairOutcome]) -> dict[str, Any]:
    return flat_metrics(read_outcomes(stored))
