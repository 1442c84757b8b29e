"""E4's metrics: the abstaining-classifier kit's (detection, cost, calibration, AURC, by family, split and
difficulty) and the evidence part's, all from the stored outcomes.

- ``evidence_precision``: confirmed evidence / scored evidence, over every valid answer (micro-averaged, so an
  answer quoting five things weighs five times one quoting one).
- ``evidence_recall``: planted indicators named by confirmed evidence / planted indicators, over the phishing
  items with a valid answer.
- ``evidence_grounded_rate``: quotes found in the email / quotes given.
- The constant-policy floor adds the evidence an empty list earns (1 where there is nothing to find, else 0) to
  the kit's best constant label and probability.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from security_verifiers.core.metrics_report import CONSTANT_REWARD, ConstantPolicy
from security_verifiers.envs.kits.abstaining import Labels, classifier_metrics, point_metrics
from security_verifiers.envs.kits.abstaining.metrics import Columns, constant_policy
from security_verifiers.envs.phishing.env import PhishingConfig


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def evidence_metrics(outcomes: Sequence[Mapping[str, Any]]) -> dict[str, float | None]:
    valid = [o for o in outcomes if o["valid"]]
    phishing = [o for o in valid if o["y"] == 1]
    return {
        "evidence_precision": _ratio(sum(o["evidence_confirmed"] for o in valid), sum(o["evidence_scored"]
                                                                                     for o in valid)),
        "evidence_recall": _ratio(sum(o["evidence_found"] for o in phishing), sum(o["evidence_to_find"]
                                                                                for o in phishing)),
        "evidence_grounded_rate": _ratio(sum(o["evidence_grounded"] for o in valid), sum(o["evidence_given"]
                                                                                        for o in valid)),
    }


def _floor(outcomes: Sequence[Mapping[str, Any]], config: PhishingConfig, labels: Labels) -> ConstantPolicy | None:
    kit = constant_policy(Columns.of(outcomes), config, labels)
    if kit is None:
        return None
    nothing_to_find = sum(1 for o in outcomes if o["y"] == 0 or o["evidence_to_find"] == 0) / len(outcomes)
    weight = config.evidence_weight
    return ConstantPolicy(
        policy=kit.policy, answer=kit.answer[:-1] + ', "evidence": []}',
        reward_mean=(1 - weight) * kit.reward_mean + weight * nothing_to_find,
        note=kit.note + f" It gives no evidence, which earns the evidence part on the {nothing_to_find:.1%} of "
        "items with nothing to find (legitimate mail) and nothing on the rest.")


def phishing_metrics(outcomes: Sequence[dict[str, Any]], config: PhishingConfig, labels: Labels,
                     items: Sequence[str] | None = None) -> dict[str, Any]:
    out = classifier_metrics(outcomes, config, labels, items)
    floor = _floor(outcomes, config, labels)
    out["metrics"].update(evidence_metrics(outcomes))
    out["metrics"][CONSTANT_REWARD] = None if floor is None else floor.reward_mean
    out["constant_policy"] = None if floor is None else floor.model_dump()
    for key in ("family", "split"):
        for name, row in out["breakdowns"][key].items():
            row.update(evidence_metrics([o for o in outcomes if o[key] == name]))
    return out


def phishing_point_metrics(outcomes: Sequence[dict[str, Any]]) -> dict[str, Any]:
    return {**point_metrics(outcomes), **evidence_metrics(outcomes)}
