"""The regression gate: does a run score worse than a baseline run, beyond a tolerance and beyond chance?

``sv gate RUN --against BASELINE`` compares the two runs item by item (:func:`~security_verifiers.report.compare.
compare_runs`: the same environment version and config, the items both scored, a paired bootstrap over items). A
metric *fails* when its drop (the change in its worse direction: down for a metric where higher is better, up for
one where lower is) is larger than its tolerance **and** the 95% interval of the change lies wholly on the worse
side of 0. A drop within the tolerance, or one the interval cannot tell from noise, passes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from security_verifiers.core.errors import ConfigError
from security_verifiers.core.metrics import BOOT_SEED, N_BOOT
from security_verifiers.envs.base import get_env
from security_verifiers.report.compare import compare_runs

#: The largest drop a metric may show without failing, in the metric's own units, unless one is given for it.
DEFAULT_MAX_DROP = 0.01
PASS, FAIL, UNDEFINED = "PASS", "FAIL", "n/a"


def parse_metric(spec: str, headline: Mapping[str, bool]) -> tuple[str, bool]:
    """``KEY`` (a headline metric: its direction is the environment's) or ``KEY:higher`` / ``KEY:lower``.

    >>> parse_metric("f1", {"f1": True})
    ('f1', True)
    >>> parse_metric("precision:higher", {})
    ('precision', True)
    """
    key, _, direction = spec.partition(":")
    if direction:
        if direction not in ("higher", "lower"):
            raise ConfigError(f"--metric {spec}: the direction after ':' is 'higher' or 'lower' (which is better)")
        return key, direction == "higher"
    if key not in headline:
        raise ConfigError(f"--metric {key} is not a headline metric of this environment ({', '.join(headline)}), so "
                          f"its direction is unknown: write {key}:higher or {key}:lower")
    return key, headline[key]


def parse_max_drops(specs: Sequence[str]) -> tuple[float, dict[str, float]]:
    """``--max-drop`` values: a number is every metric's tolerance, ``KEY=NUMBER`` one metric's.

    >>> parse_max_drops(["0.02", "f1=0.05"])
    (0.02, {'f1': 0.05})
    """
    default, per_metric = DEFAULT_MAX_DROP, {}
    for spec in specs:
        key, sep, number = spec.rpartition("=")
        try:
            value = float(number)
        except ValueError:
            raise ConfigError(f"--max-drop {spec}: give a number, or KEY=NUMBER for one metric") from None
        if not value >= 0:
            raise ConfigError(f"--max-drop {spec}: a tolerance is a number >= 0")
        if sep:
            per_metric[key] = value
        else:
            default = value
    return default, per_metric


def gate_runs(run: Path, against: Path, metrics: Sequence[str] = (), max_drops: Sequence[str] = (),
              n_boot: int = N_BOOT, seed: int = BOOT_SEED) -> dict[str, Any]:
    """The gate's verdict on ``run`` against the baseline run ``against``: ``{"passed", "env", "items", "rows"}``,
    one row per metric (the environment's headline metrics unless ``metrics`` names others)."""
    default, per_metric = parse_max_drops(max_drops)
    comparison = compare_runs(against, run, n_boot=n_boot, seed=seed)
    env = get_env(comparison["env"]["name"])
    headline = dict(env.headline_metrics)
    chosen = [parse_metric(spec, headline) for spec in metrics] or list(env.headline_metrics)
    unknown = [key for key, _ in chosen if key not in comparison["metrics"]]
    if unknown:
        raise ConfigError(f"metric(s) {', '.join(unknown)} not reported by {env.name}; it reports "
                          f"{', '.join(comparison['metrics'])}")
    stray = sorted(set(per_metric) - {key for key, _ in chosen})
    if stray:
        raise ConfigError(f"--max-drop names metric(s) the gate does not check: {', '.join(stray)}")
    rows = [_row(key, higher, comparison["metrics"][key], per_metric.get(key, default)) for key, higher in chosen]
    return {"passed": all(row["verdict"] != FAIL for row in rows), "env": comparison["env"],
            "run": comparison["b"], "against": comparison["a"], "items": comparison["items"],
            "bootstrap": comparison["bootstrap"], "rows": rows}


def _row(key: str, higher_is_better: bool, compared: Mapping[str, Any], max_drop: float) -> dict[str, Any]:
    """One metric's verdict: the drop is the change (run - baseline) towards worse, with its interval."""
    delta, (lo, hi) = compared["delta"], compared["ci"]
    row = {"metric": key, "higher_is_better": higher_is_better, "baseline": compared["a"], "run": compared["b"],
           "delta": delta, "ci": [lo, hi], "max_drop": max_drop, "drop": None, "verdict": UNDEFINED}
    if delta is None or lo is None or hi is None:
        return row  # undefined on one side (no positive item, no answer of that kind): nothing to gate
    sign = 1.0 if higher_is_better else -1.0
    drop, drop_lo = -sign * delta, min(-sign * lo, -sign * hi)  # drop > 0 is worse; drop_lo: its interval's low end
    row["drop"] = drop
    row["verdict"] = FAIL if drop > max_drop and drop_lo > 0 else PASS
    return row
