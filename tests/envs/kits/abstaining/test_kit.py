"""The abstaining-classifier kit on its own, with a second environment's names (E4-like: Phishing / Legitimate),
so that what E1 relies on is also what a new environment gets."""

import json
from typing import Literal

import pytest
from pydantic import BaseModel, Field, ValidationError

from security_verifiers.core.parsing import parse_answer
from security_verifiers.core.scoring import CostProfile
from security_verifiers.core.types import Item, ParseStatus
from security_verifiers.envs.kits.abstaining import (
    AbstainingConfig,
    BayesBaseline,
    ClassifierOutcome,
    Labels,
    baseline_factories,
    classifier_plots,
    constant_baseline_names,
    score_answer,
)
from tests.envs.kits.abstaining.report import classifier_metrics

PHISHING = Labels(positive="Phishing", negative="Legitimate", probability="p_phishing")
ALARM_AVERSE = CostProfile(missed=1.0, false_alarm=10.0, abstain=0.5)  # abstain for 0.5 < p < 0.95


class PhishingAnswer(BaseModel):
    label: Literal["Phishing", "Legitimate", "Abstain"]
    p_phishing: float = Field(ge=0.0, le=1.0, strict=True)
    evidence: list[str] = Field(default_factory=list)


class StatedBaseline(BayesBaseline):
    """A probability model that reads the item's input only: its stated ``p``."""

    name = "stated"

    def probabilities(self, items: list[Item]) -> list[float]:
        return [item.input["p"] for item in items]


def item(p: float, truth: str, k: int = 0) -> Item:
    return Item(id=f"mail-{k}", split="test", input={"p": p}, target={"label": truth, "family": "lure"})


def fields(y: int) -> dict[str, object]:
    return {"y": y, "family": "lure", "split": "test", "difficulty": "easy"}


def score(text: str, y: int, config: AbstainingConfig | None = None):
    return score_answer(parse_answer(text, PhishingAnswer), fields(y), config or AbstainingConfig(), PHISHING)


# (reply, truth) -> reward: 0.7 * (1 - cost / 10) + 0.3 * (1 - Brier) under the default profile.
REWARD_CASES = [
    ('{"label": "Phishing", "p_phishing": 0.9}', 1, 0.7 + 0.3 * (1 - 0.01)),  # caught: cost 0
    ('{"label": "Legitimate", "p_phishing": 0.2}', 1, 0.3 * (1 - 0.64)),  # missed: cost 10
    ('{"label": "Abstain", "p_phishing": 0.4}', 0, 0.7 * 0.95 + 0.3 * (1 - 0.16)),  # abstained: cost 0.5
    ('{"label": "Phishing", "p_phishing": 0.6, "evidence": ["urgent"]}', 0, 0.7 * 0.9 + 0.3 * (1 - 0.36)),
]


@pytest.mark.parametrize(("reply", "y", "reward"), REWARD_CASES)
def test_reward_is_the_weighted_cost_and_brier(reply: str, y: int, reward: float) -> None:
    result = score(reply, y)
    assert result.reward == pytest.approx(reward)
    assert result.reward == pytest.approx(0.7 * result.components["decision"] + 0.3 * result.components["calibration"])
    assert set(result.outcome) == set(ClassifierOutcome.model_fields)


def test_an_invalid_answer_gets_the_minimum_and_the_costliest_error() -> None:
    result = score('{"label": "Spam", "p_phishing": 0.5}', 1)
    assert result.parse_status == ParseStatus.SCHEMA and result.reward == 0.0
    assert result.outcome["cost"] == 10.0 and result.outcome["action"] is None and result.outcome["p"] is None


def test_the_config_checks_its_weights() -> None:
    with pytest.raises(ValidationError, match="must equal 1"):
        AbstainingConfig(decision_weight=0.5, brier_weight=0.4)
    assert AbstainingConfig(decision_weight=0.6, brier_weight=0.4).component_weights() == {
        "decision": 0.6, "calibration": 0.4}


def test_baselines_act_by_the_configured_costs() -> None:
    """The honest baseline takes the Bayes action of the profile the environment is configured with."""
    items = [item(p, "Phishing", k) for k, p in enumerate((0.3, 0.7, 0.97))]
    for costs, labels in ((CostProfile(), ["Abstain", "Phishing", "Phishing"]),
                          (ALARM_AVERSE, ["Legitimate", "Abstain", "Phishing"])):
        factories = baseline_factories(AbstainingConfig(costs=costs), PHISHING, {"stated": StatedBaseline})
        policy = factories["stated"]()
        assert policy.describe()["costs"] == costs.model_dump()
        assert [json.loads(policy.answer(i, []))["label"] for i in items] == labels
        policy.prepare(items)  # the batch path gives the same answers
        assert [json.loads(policy.answer(i, []))["label"] for i in items] == labels


def test_baseline_names_and_the_reference() -> None:
    factories = baseline_factories(AbstainingConfig(), PHISHING, {"stated": StatedBaseline})
    assert list(factories) == ["reference", "stated", *constant_baseline_names(PHISHING)]
    assert constant_baseline_names(PHISHING) == ("always-phishing", "always-legitimate", "always-abstain")
    reference = factories["reference"]()
    assert score(reference.answer(item(0.2, "Phishing"), []), 1).reward == 1.0
    assert score(reference.answer(item(0.8, "Legitimate"), []), 0).reward == 1.0
    assert json.loads(factories["always-abstain"]().answer(item(0.2, "Phishing"), [])) == {
        "label": "Abstain", "p_phishing": 0.5}


def test_metrics_and_plots_use_the_environments_names(tmp_path) -> None:
    outcomes = [score(reply, y).outcome for reply, y, _ in REWARD_CASES]
    result = classifier_metrics(outcomes, AbstainingConfig(), PHISHING)
    assert result["breakdowns"]["family"]["lure"]["label"] == "mixed"
    assert result["metrics"]["tp"] == 1 and result["metrics"]["fn"] == 1 and result["metrics"]["fp"] == 1
    only_positive = classifier_metrics(outcomes[:2], AbstainingConfig(), PHISHING)
    assert only_positive["breakdowns"]["family"]["lure"]["label"] == "Phishing"
    paths = classifier_plots(ClassifierOutcome.read_all(outcomes), PHISHING, tmp_path)
    assert [p.name for p in paths] == ["reliability.png", "risk_coverage.png", "confusion.png"]
