"""E4's metrics, declared for the one metrics builder: the abstaining-classifier kit's (detection, cost,
calibration, AURC, by family, split and difficulty) and the evidence part's, all from the stored outcomes
(:class:`~.env.PhishingOutcome`).

- ``evidence_precision``: confirmed evidence / scored evidence, over every valid answer (micro-averaged, so an
  answer quoting five things weighs five times one quoting one).
- ``evidence_recall``: planted indicators named by confirmed evidence / planted indicators, over the phishing
  items with a valid answer.
- ``evidence_grounded_rate``: quotes found in the email / quotes given.
- The constant-policy floor is the best constant label, with the items' phishing rate and no evidence: the
  evidence part an empty list earns (1 where there is nothing to find) counts only where that label is right.

The evidence metrics join the run's flat metrics and the family and split rows (not the difficulty rows).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from security_verifiers.core.metrics_builder import Breakdown
from security_verifiers.core.metrics_report import ConstantPolicy
from security_verifiers.core.scoring import Action, brier_score
from security_verifiers.envs.kits.abstaining import Labels
from security_verifiers.envs.kits.abstaining import metrics as kit_metrics
from security_verifiers.envs.kits.abstaining.metrics import CONSTANT_DECIMALS, Columns
from security_verifiers.envs.phishing.items import LABELS

if TYPE_CHECKING:
    from security_verifiers.envs.phishing.env import PhishingConfig, PhishingOutcome


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def evidence_metrics(outcomes: Sequence[PhishingOutcome]) -> dict[str, float | None]:
    """The evidence part's metrics (the module's docstring); a valid answer has every count."""
    valid = [o for o in outcomes if o.valid]
    phishing = [o for o in valid if o.y == 1]

    def total(counts: list[int | None]) -> int:
        return sum(c or 0 for c in counts)

    return {
        "evidence_precision": _ratio(total([o.evidence_confirmed for o in valid]),
                                     total([o.evidence_scored for o in valid])),
        "evidence_recall": _ratio(total([o.evidence_found for o in phishing]),
                                  total([o.evidence_to_find for o in phishing])),
        "evidence_grounded_rate": _ratio(total([o.evidence_grounded for o in valid]),
                                         total([o.evidence_given for o in valid])),
    }


def flat_metrics(outcomes: Sequence[PhishingOutcome]) -> dict[str, Any]:
    """The kit's flat metrics and the evidence part's."""
    return {**kit_metrics.flat_metrics(outcomes), **evidence_metrics(outcomes)}


BREAKDOWNS: dict[str, Breakdown] = kit_metrics.classifier_breakdowns(
    LABELS, family=lambda group: {**kit_metrics.family_row(group, LABELS), **evidence_metrics(group)},
    split=flat_metrics)


def constant_policy(outcomes: Sequence[PhishingOutcome], config: PhishingConfig,
                    labels: Labels) -> ConstantPolicy | None:
    """The best constant answer with no evidence. The evidence part is earned only under a correct committed label,
    where an empty list scores 1 on the items with nothing to find: for always-Legitimate the legitimate items,
    for always-Phishing the phishing items with nothing to find, for always-Abstain none."""
    c = Columns.of(outcomes)
    if c.n == 0:
        return None
    rate = float(c.y.mean())
    p = round(rate, CONSTANT_DECIMALS)
    costs, weight = config.costs, config.evidence_weight
    empty_scores: dict[Action, float] = {
        "negative": sum(1 for o in outcomes if o.y == 0) / c.n,
        "positive": sum(1 for o in outcomes if o.y == 1 and o.evidence_to_find == 0) / c.n,
        "abstain": 0.0,
    }

    def mean_reward(action: Action) -> float:
        kit = sum(share * (config.decision_weight * costs.decision_reward(action, y)
                           + config.brier_weight * (1.0 - brier_score(p, y)))
                  for y, share in ((1, rate), (0, 1.0 - rate)))
        return (1 - weight) * kit + weight * empty_scores[action]

    actions: tuple[Action, ...] = ("abstain", "negative", "positive")
    by_action: dict[Action, float] = {a: mean_reward(a) for a in actions}
    best = max(by_action, key=lambda a: by_action[a])  # a tie goes to the earlier: abstaining claims least
    others = ", ".join(f"always-{labels.label(a).lower()} {r:.4f}" for a, r in by_action.items() if a != best)
    return ConstantPolicy(
        policy=f"always-{labels.label(best).lower()}", answer=labels.answer_text(best, p)[:-1] + ', "evidence": []}',
        reward_mean=by_action[best],
        note=f"The best answer that ignores the item: the label of highest mean reward under the configured costs and "
             f"weights (the others: {others}), stating the items' {labels.positive} rate {p} as {labels.probability}, "
             f"with no evidence, which earns the evidence part only where its label is right and there is nothing to "
             f"find ({empty_scores[best]:.1%} of the items).")
