"""The template environment: classify a summary of an SSH server's failed logins as an attack or benign.

A one-field abstaining classifier built on the kit (``envs/kits/abstaining``): the answer is a label (Attack,
Benign or Abstain) and a probability; the reward is ``decision_weight`` * (cost-profile reward of the label) +
``brier_weight`` * (1 - Brier of the probability), both maximised by the truthful probability and its Bayes
action. What is the template's own: its data (:mod:`generator`, :mod:`items`), its prompt and the names of its
answer, and its heuristic baseline. See ``README.md`` for how to make an environment of your own from it.

It is not registered (a template is not an environment to list in ``sv envs`` or run in ``sv bench``): an
environment made from it adds ``@register`` above its class, the one line that lists it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from security_verifiers.core.metrics_builder import Breakdown, Statistic
from security_verifiers.core.metrics_report import ConstantPolicy
from security_verifiers.core.outcome import Outcome
from security_verifiers.core.parsing import parse_answer
from security_verifiers.core.types import Item, Message, Score, Transcript
from security_verifiers.envs._template.items import TemplateInput, TemplateTarget
from security_verifiers.envs.base import EnvConfig, Environment, ItemContract
from security_verifiers.envs.kits.abstaining import (
    AbstainingConfig,
    ClassifierOutcome,
    Labels,
    baseline_factories,
    classifier_plots,
    constant_baseline_names,
    score_answer,
)
from security_verifiers.envs.kits.abstaining import metrics as kit_metrics
from security_verifiers.envs.kits.public_sets import PublicSets
from security_verifiers.models.base import Policy

DATA_DIR = Path(__file__).parent / "data"
#: The template's names for the kit's actions and probability.
LABELS = Labels(positive="Attack", negative="Benign", probability="p_attack")


class Answer(BaseModel):
    """The answer grammar stated in the system prompt."""

    model_config = ConfigDict(extra="ignore")

    label: Literal["Attack", "Benign", "Abstain"]
    p_attack: float = Field(ge=0.0, le=1.0, allow_inf_nan=False, strict=True)


class TemplateConfig(AbstainingConfig):
    """The kit's reward settings (``costs``, ``decision_weight``, ``brier_weight``); the template adds none."""


SYSTEM_PROMPT = """You are a security analyst. You are shown one line summarising an SSH server's failed logins \
from one source address (addresses in 10.0.0.0/8 are the company's own). Decide whether it is an attack.

Answer with a single JSON object, and nothing after it:
{{"label": "Attack" | "Benign" | "Abstain", "p_attack": <number from 0 to 1>}}

- p_attack is your probability that the line shows an attack, scored with the Brier rule: report your honest \
belief.
- The label is scored with a cost profile: a missed attack costs {missed}, a false alarm {false_alarm}, Abstain \
{abstain}, a correct label 0. So the least costly choice is Attack when p_attack > {hi}, Benign when \
p_attack < {lo}, and Abstain in between.
"""


class TemplateEnvironment(Environment):
    name: ClassVar[str] = "template"
    version: ClassVar[str] = "1.0.0"
    config_class: ClassVar[type[EnvConfig]] = TemplateConfig
    headline_metrics: ClassVar[tuple[tuple[str, bool], ...]] = (
        ("reward_mean", True), ("expected_cost", False), ("f1", True), ("brier", False), ("abstain_rate", False),
    )
    splits: ClassVar[tuple[str, ...]] = ("train", "dev", "test")
    data_dir: ClassVar[Path] = DATA_DIR
    public_splits: ClassVar[tuple[str, ...]] = ("test",)
    honest_baselines: ClassVar[tuple[str, ...]] = ("heuristic",)
    hack_baselines: ClassVar[tuple[str, ...]] = constant_baseline_names(LABELS)
    item_contract: ClassVar[ItemContract] = ItemContract(TemplateInput, TemplateTarget, Answer)
    #: What the scorer stores of one rollout (the kit's outcome; a model of your own derives from ``Outcome``).
    outcome_model: ClassVar[type[Outcome]] = ClassifierOutcome
    config: TemplateConfig

    # -- data ---------------------------------------------------------------------------------
    def generate(self, split: str, n: int, seed: int) -> list[Item]:
        from security_verifiers.envs._template.generator import generate

        return generate(split, n, seed)

    def public_sets(self) -> PublicSets:
        from security_verifiers.envs._template.public import PUBLIC_SETS

        return PUBLIC_SETS

    # -- episode ------------------------------------------------------------------------------
    def prompt(self, item: Item) -> list[Message]:
        costs = self.config.costs
        lo, hi = costs.abstain_band()
        system = SYSTEM_PROMPT.format(missed=costs.missed, false_alarm=costs.false_alarm, abstain=costs.abstain,
                                      lo=round(lo, 4), hi=round(hi, 4))
        return [Message(role="system", content=system), Message(role="user", content=item.input["line"])]

    # -- the one scorer ------------------------------------------------------------------------
    def score(self, item: Item, transcript: Transcript) -> Score:
        fields = {"y": 1 if item.target["label"] == LABELS.positive else 0, "family": item.target["family"],
                  "split": item.split, "difficulty": item.meta.get("difficulty", "unknown")}
        return score_answer(parse_answer(transcript.final_text, Answer), fields, self.config, LABELS)

    def component_weights(self) -> dict[str, float]:
        return self.config.component_weights()

    # -- the metrics, declared (the abstaining kit's) ------------------------------------------
    breakdowns: ClassVar[Mapping[str, Breakdown]] = kit_metrics.classifier_breakdowns(LABELS)

    def flat_metrics(self, outcomes: Sequence[Any]) -> dict[str, Any]:
        return kit_metrics.flat_metrics(outcomes)

    def interval_statistics(self, outcomes: Sequence[Any]) -> Mapping[str, Statistic]:
        return kit_metrics.interval_statistics(outcomes)

    def run_metrics(self) -> dict[str, Any]:
        return kit_metrics.cost_metrics(self.config)

    def constant_policy(self, outcomes: Sequence[Any]) -> ConstantPolicy | None:
        return kit_metrics.constant_policy(outcomes, self.config, LABELS)

    def plots(self, outcomes: Sequence[dict[str, Any]], out_dir: Path) -> list[Path]:
        return classifier_plots(self.typed_outcomes(outcomes), LABELS, out_dir)

    def baselines(self) -> dict[str, Callable[[], Policy]]:
        from security_verifiers.envs._template.baselines import HeuristicBaseline

        return baseline_factories(self.config, LABELS, {"heuristic": HeuristicBaseline})
