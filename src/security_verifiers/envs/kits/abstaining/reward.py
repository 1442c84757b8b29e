"""The abstaining classifier's answer convention, its cost-profile + Brier reward, and its typed outcome.

A binary task with a third action, Abstain, and a stated probability of the positive class. The reward is
``decision_weight`` * (cost-profile reward of the label) + ``brier_weight`` * (1 - Brier of the probability).
Both parts are maximised in expectation by the truthful probability and its Bayes action, and they are
separable, so the sum is too: the incentive-compatible reward of DESIGN.md principle 2, in one place so that
every classification environment (E1 network-logs, E4 phishing) scores by the same arithmetic.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal, Protocol, cast

from pydantic import BaseModel, Field, model_validator

from security_verifiers.core.outcome import Outcome
from security_verifiers.core.parsing import Parsed, ParseFailure
from security_verifiers.core.scoring import Action, CostProfile, brier_score
from security_verifiers.core.types import ParseStatus, Score
from security_verifiers.envs.base import EnvConfig

#: The reward's components, by the names ``Score.components`` and ``component_weights`` use.
DECISION, CALIBRATION = "decision", "calibration"


@dataclass(frozen=True)
class Labels:
    """How one environment names the three actions and the probability in its answers.

    >>> E1 = Labels(positive="Malicious", negative="Benign", probability="p_malicious")
    >>> E1.action("Benign"), E1.label("positive")
    ('negative', 'Malicious')
    >>> E1.answer_text("abstain", 0.3)
    '{"label": "Abstain", "p_malicious": 0.3}'
    """

    positive: str
    negative: str
    #: The answer's field holding the probability of the positive class.
    probability: str
    abstain: str = "Abstain"

    def action(self, label: str) -> Action:
        """The action a label stands for; a label outside the three is an error (the answer model rules it out)."""
        actions: dict[str, Action] = {self.positive: "positive", self.negative: "negative", self.abstain: "abstain"}
        return actions[label]

    def label(self, action: Action) -> str:
        return {"positive": self.positive, "negative": self.negative, "abstain": self.abstain}[action]

    def answer_text(self, action: Action, p: float) -> str:
        """A minimal answer in the environment's grammar (what the baselines reply)."""
        return json.dumps({"label": self.label(action), self.probability: p})


class _Labelled(Protocol):
    label: str


class AbstainingConfig(EnvConfig):
    """The reward's settings, shared by every abstaining-classifier environment (which adds its own fields)."""

    costs: CostProfile = Field(default_factory=CostProfile, description="Decision costs of the task.")
    decision_weight: float = Field(0.7, ge=0, le=1, description="Weight of the cost-profile part.")
    brier_weight: float = Field(0.3, ge=0, le=1, description="Weight of the Brier part on the probability.")

    @model_validator(mode="after")
    def _weights_sum_to_one(self) -> AbstainingConfig:
        if abs(self.decision_weight + self.brier_weight - 1.0) > 1e-9:
            raise ValueError("decision_weight + brier_weight must equal 1 so the reward stays in [0, 1]")
        return self

    def component_weights(self) -> dict[str, float]:
        return {DECISION: self.decision_weight, CALIBRATION: self.brier_weight}


class ClassifierOutcome(Outcome):
    """What the scorer records of one answer, and all that the metrics and plots read.

    ``y``, ``family``, ``split`` and ``difficulty`` describe the item; the rest the answer. An invalid (unparsed)
    answer has no action, probability or Brier, the costliest error's cost and reward 0: it stays in every
    all-item quantity and drops out of those that need a parsed answer.
    """

    y: Literal[0, 1] = Field(description="The truth: 1 for the positive class.")
    family: str = Field(description="The item's family (attack or benign activity, phishing kind...).")
    split: str
    difficulty: str = Field(description="The item's difficulty tier, 'unknown' where it has none.")
    valid: bool = Field(description="Whether the answer parsed.")
    action: Action | None = Field(description="The action the label stands for; None when invalid.")
    p: float | None = Field(description="The stated probability of the positive class; None when invalid.")
    cost: float = Field(description="The decision's cost under the configured profile (its maximum when invalid).")
    brier: float | None = Field(description="Brier score of p; None when invalid.")
    reward: float


def score_answer(parsed: Parsed[BaseModel] | ParseFailure, item_fields: dict[str, object],
                 config: AbstainingConfig, labels: Labels) -> Score:
    """Score one parsed answer (or parse failure) of an abstaining classifier.

    ``item_fields`` are the item's ``y``, ``family``, ``split`` and ``difficulty`` (the outcome's first fields).
    An environment whose reward has more parts (E4's quoted evidence) adds them to this score's components.

    >>> cfg, E1 = AbstainingConfig(), Labels("Malicious", "Benign", "p_malicious")
    >>> score_answer(ParseFailure(ParseStatus.EMPTY, "empty"), {"y": 1, "family": "scan", "split": "test",
    ...              "difficulty": "easy"}, cfg, E1).outcome["cost"]
    10.0
    """
    if isinstance(parsed, ParseFailure):
        outcome = ClassifierOutcome.model_validate({
            **item_fields, "valid": False, "action": None, "p": None, "cost": config.costs.max_cost,
            "brier": None, "reward": 0.0})
        return Score(reward=0.0, components={DECISION: 0.0, CALIBRATION: 0.0}, outcome=outcome.model_dump(),
                     parse_status=parsed.status, parse_error=parsed.message)
    answer = parsed.value
    y = 1 if item_fields["y"] == 1 else 0
    action = labels.action(cast(_Labelled, answer).label)
    p = getattr(answer, labels.probability)
    decision = config.costs.decision_reward(action, y)
    brier = brier_score(p, y)
    reward = config.decision_weight * decision + config.brier_weight * (1.0 - brier)
    outcome = ClassifierOutcome.model_validate({
        **item_fields, "valid": True, "action": action, "p": p, "cost": config.costs.cost(action, y),
        "brier": brier, "reward": reward})
    return Score(reward=reward, components={DECISION: decision, CALIBRATION: 1.0 - brier},
                 outcome=outcome.model_dump(), parse_status=ParseStatus.OK)
