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

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from security_verifiers.core.metrics_builder import Breakdown
from security_verifiers.core.parsing import parse_answer
from security_verifiers.core.types import Item, Message, Score, Transcript
from security_verifiers.envs._template.items import TemplateInput, TemplateTarget
from security_verifiers.envs.base import EnvConfig, ItemContract
from security_verifiers.envs.kits.abstaining import (
    AbstainingConfig,
    AbstainingEnvironment,
    Labels,
    baseline_factories,
    classifier_breakdowns,
    constant_baseline_names,
    score_answer,
)
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


class TemplateEnvironment(AbstainingEnvironment):
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
    #: The answer's names. The kit's base stores the kit's outcome (``outcome_model``; a model of your own derives
    #: from it) and declares the metrics, plots and reward weights; the breakdowns are the kit's, by family, split
    #: and difficulty (add or replace rows here).
    labels: ClassVar[Labels] = LABELS
    breakdowns: ClassVar[Mapping[str, Breakdown]] = classifier_breakdowns(LABELS)
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

    def baselines(self) -> dict[str, Callable[[], Policy]]:
        from security_verifiers.envs._template.baselines import HeuristicBaseline

        return baseline_factories(self.config, LABELS, {"heuristic": HeuristicBaseline})
