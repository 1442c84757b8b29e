"""Baselines of an abstaining classifier: the truth, the constants, and Bayes-action policies.

A Bayes-action baseline states a probability and takes the action of least expected cost under the cost
profile the environment is *configured* with. It cannot be built without that profile: a baseline that fell
back to the default profile acts sub-optimally under any other one (``--env-option costs=...``), and the
leaderboard then ranks it below what it is entitled to. :func:`baseline_factories` binds the profile once, for
every baseline of an environment.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any

from security_verifiers.core.scoring import CostProfile
from security_verifiers.core.types import Item, Message
from security_verifiers.envs.kits.abstaining.reward import AbstainingConfig, Labels
from security_verifiers.models.base import Baseline, Policy


def bayes_answer(p: float, costs: CostProfile, labels: Labels) -> str:
    """The answer text for probability ``p``: the Bayes action under ``costs``, and ``p`` to 4 decimals.

    >>> E1 = Labels("Malicious", "Benign", "p_malicious")
    >>> bayes_answer(0.3, CostProfile(), E1), bayes_answer(0.3, CostProfile(missed=1, false_alarm=10), E1)
    ('{"label": "Abstain", "p_malicious": 0.3}', '{"label": "Benign", "p_malicious": 0.3}')
    """
    return labels.answer_text(costs.bayes_action(p), round(p, 4))


class ReferenceBaseline(Baseline):
    """The ground truth (``item.target["label"]``) with certainty: the reward ceiling (1.0 on every item)."""

    name = "reference"

    def __init__(self, labels: Labels) -> None:
        self.labels = labels

    def answer(self, item: Item, messages: list[Message]) -> str:
        label = item.target["label"]
        return json.dumps({"label": label, self.labels.probability: 1.0 if label == self.labels.positive else 0.0})


class ConstantBaseline(Baseline):
    """The same label on every item, with the probability that label implies (1, 0, or 1/2 for Abstain)."""

    def __init__(self, label: str, labels: Labels) -> None:
        probability = {labels.positive: 1.0, labels.negative: 0.0, labels.abstain: 0.5}
        if label not in probability:
            raise ValueError(f"label must be one of {', '.join(probability)}, got {label!r}")
        self.label = label
        self.name = f"always-{label.lower()}"
        self._text = json.dumps({"label": label, labels.probability: probability[label]})

    def describe(self) -> dict[str, Any]:
        return {"kind": "baseline", "name": self.name, "label": self.label}

    def answer(self, item: Item, messages: list[Message]) -> str:
        return self._text


class BayesBaseline(Baseline, ABC):
    """A probability per item (:meth:`probabilities`, from ``item.input`` only) and its Bayes action under
    ``costs``, which is required: pass the environment's configured profile (see :func:`baseline_factories`)."""

    def __init__(self, costs: CostProfile, labels: Labels) -> None:
        self.costs = costs
        self.labels = labels
        self._p: dict[str, float] = {}

    @abstractmethod
    def probabilities(self, items: list[Item]) -> list[float]:
        """The probability of the positive class of each item, read from its input only (never its target)."""

    def describe(self) -> dict[str, Any]:
        return {"kind": "baseline", "name": self.name, "costs": self.costs.model_dump()}

    def prepare(self, items: list[Item]) -> None:
        """Compute every item's probability in one batch (a learned model predicts much faster so)."""
        self._p.update(zip((i.id for i in items), self.probabilities(items), strict=True))

    def answer(self, item: Item, messages: list[Message]) -> str:
        p = self._p.get(item.id)
        if p is None:
            p = self.probabilities([item])[0]
        return bayes_answer(p, self.costs, self.labels)


def baseline_factories(config: AbstainingConfig, labels: Labels,
                       honest: Mapping[str, Callable[[CostProfile, Labels], BayesBaseline]]
                       ) -> dict[str, Callable[[], Policy]]:
    """An environment's baselines: ``reference``, the ``honest`` Bayes-action ones built with the *configured*
    costs, and the hacks ``always-<label>`` for the three labels (``always-abstain`` is the hardest to beat)."""
    costs = config.costs
    factories: dict[str, Callable[[], Policy]] = {"reference": lambda: ReferenceBaseline(labels)}
    for name, make in honest.items():
        factories[name] = lambda make=make: make(costs, labels)  # type: ignore[misc]
    for label in (labels.positive, labels.negative, labels.abstain):
        factories[f"always-{label.lower()}"] = lambda label=label: ConstantBaseline(label, labels)  # type: ignore[misc]
    return factories


def constant_baseline_names(labels: Labels) -> tuple[str, ...]:
    """The names :func:`baseline_factories` gives the constant (hacking) baselines."""
    return tuple(f"always-{label.lower()}" for label in (labels.positive, labels.negative, labels.abstain))
