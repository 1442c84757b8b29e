"""Metrics of code-repair, computed from the scorer's outcomes only (so ``sv report`` can rebuild them).

Rates are over every rollout unless said otherwise: a rollout whose patch was absent, did not apply, or was not
run counts as not repaired, not blocking, not passing (the unpatched program is the vulnerable one). Bootstrap
intervals resample items.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from security_verifiers.core.metrics import mean_or_none, ratio
from security_verifiers.core.metrics_builder import Breakdown
from security_verifiers.envs.code_repair.outcome import RepairOutcome


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


def _program(value: Callable[[RepairOutcome], bool]) -> Callable[[RepairOutcome], float]:
    """A rate over the rollouts of items with tests: NaN on the others (left out of the mean)."""
    return lambda o: float(value(o)) if o.kind == "program" else float("nan")


#: The metrics with a bootstrap interval, each the mean of a per-outcome value.
INTERVALS: dict[str, Callable[[RepairOutcome], float]] = {
    "reward_mean": lambda o: o.reward,
    "repair_rate": _program(lambda o: o.repaired),
    "exploit_blocked_rate": _program(lambda o: o.exploit_blocked),
    "cwe_accuracy": lambda o: float(o.cwe_correct),
}
#: By weakness, split and program (``family/variant``).
BREAKDOWNS: dict[str, Breakdown] = {
    "cwe": Breakdown(key=lambda o: o.cwe),
    "split": Breakdown(key=lambda o: o.split),
    "variant": Breakdown(key=lambda o: f"{o.family}/{o.variant}"),
}
