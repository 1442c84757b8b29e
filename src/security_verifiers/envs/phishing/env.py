"""E4 ``phishing``: read one raw email and decide Phishing, Legitimate or Abstain, with a probability and quoted
evidence that code checks against the email.

Built on the abstaining-classifier kit (``envs/kits/abstaining``), as E1 is: the decision is scored by a cost
profile and the probability by the Brier rule, both maximised in expectation by the truthful probability and its
Bayes action. E4 adds the evidence part (:mod:`.evidence`), earned only alongside a committed, correct label:

    reward = (1 - evidence_weight) * (decision_weight * decision + brier_weight * (1 - Brier))
             + evidence_weight * evidence * [label is Phishing or Legitimate, and correct]

Evidence supports a decision; it is not a prize of its own. Without the gate, an Abstain (or a wrong label) that
quotes what code finds collected the evidence part, and on imported mail, where the target is those detections,
``abstain-with-evidence`` and "always Phishing with the detected quotes" beat the honest baselines. The gate adds
``evidence_weight * evidence`` to a correct commitment only, which moves the reward's best action away from the
cost profile's towards committing (the README's Scoring section gives the bands).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from security_verifiers.core.importing import Importer
from security_verifiers.core.metrics_builder import Breakdown
from security_verifiers.core.metrics_report import ConstantPolicy
from security_verifiers.core.outcome import Outcome
from security_verifiers.core.parsing import Parsed, parse_answer
from security_verifiers.core.scoring import CostProfile
from security_verifiers.core.types import Item, Message, Score, Transcript
from security_verifiers.envs.base import EnvConfig, ItemContract, register
from security_verifiers.envs.kits.abstaining import (
    CALIBRATION,
    DECISION,
    AbstainingConfig,
    AbstainingEnvironment,
    ClassifierOutcome,
    Labels,
    score_answer,
)
from security_verifiers.envs.kits.abstaining.metrics import DEFINITIONS as KIT_DEFINITIONS
from security_verifiers.envs.kits.public_sets import PublicSets
from security_verifiers.envs.kits.robust import Rewrite
from security_verifiers.envs.phishing import metrics as phishing_metrics
from security_verifiers.envs.phishing.evidence import EvidenceItem, score_evidence
from security_verifiers.envs.phishing.heuristic import heuristic_signals
from security_verifiers.envs.phishing.indicators import INDICATORS, MAX_EVIDENCE
from security_verifiers.envs.phishing.items import LABELS, Mailbox, PhishingInput, PhishingTarget
from security_verifiers.envs.phishing.message import parse
from security_verifiers.envs.phishing.verifiers import Context
from security_verifiers.models.base import Policy

DATA_DIR = Path(__file__).parent / "data"
EVIDENCE = "evidence"
#: Contexts (parsed message, rendering, references) kept for the items scored most recently.
CONTEXT_CACHE = 4096


class Answer(BaseModel):
    """The answer grammar stated in the system prompt."""

    model_config = ConfigDict(extra="ignore")

    label: Literal["Phishing", "Legitimate", "Abstain"]
    p_phishing: float = Field(ge=0.0, le=1.0, allow_inf_nan=False, strict=True)
    evidence: list[EvidenceItem] = Field(default_factory=list, max_length=MAX_EVIDENCE)


class PhishingConfig(AbstainingConfig):
    """The kit's reward settings with E4's costs, and the weight of the evidence part."""

    costs: CostProfile = Field(default_factory=lambda: CostProfile(missed=5.0, false_alarm=2.0, abstain=1.0),
                               description="Decision costs: a phishing email let through costs 5, a legitimate one "
                               "quarantined 2, sending it to a human 1.")
    evidence_weight: float = Field(0.2, ge=0, le=0.5, description="Weight of the evidence part of the reward.")
    prompt_style: Literal["full", "compact", "checked"] = Field(
        "full", description="compact: a short instruction that names the indicators without describing them, for "
        "models with small context windows; checked: the compact prompt and, after the email, a line of the "
        "signals code finds in it (the heuristic's: detected indicators, authentication verdicts, lure themes), "
        "for models too small to find them; the email shown and the scorer are the same.")

    def component_weights(self) -> dict[str, float]:
        rest = 1.0 - self.evidence_weight
        return {DECISION: rest * self.decision_weight, CALIBRATION: rest * self.brier_weight,
                EVIDENCE: self.evidence_weight}


def committed_and_correct(outcome: dict[str, Any]) -> bool:
    """Whether a valid answer's label is Phishing or Legitimate and right: the only answers evidence earns on.

    >>> [committed_and_correct({"valid": True, "action": a, "y": 1}) for a in ("positive", "abstain", "negative")]
    [True, False, False]
    """
    action = outcome["action"] if outcome["valid"] else None
    return action == ("positive" if outcome["y"] == 1 else "negative")


class PhishingOutcome(ClassifierOutcome):
    """The kit's outcome and what the evidence part counted (``None`` for an invalid answer)."""

    evidence_given: int | None
    evidence_grounded: int | None
    evidence_scored: int | None
    evidence_confirmed: int | None
    #: Indicators the recall counts on this item (0 on legitimate mail), and how many the answer named.
    evidence_to_find: int
    evidence_found: int | None
    #: The evidence part as earned: its score under a committed, correct label, else 0.
    evidence_score: float | None


SYSTEM_PROMPT = """You are an email security analyst. You are shown one email as it arrived (its headers, a summary \
of its Received chain, its attachments, its links as "text → target", and its text) and what the recipient's \
mail system knows of their organisation. Decide whether the email is phishing (an attempt to steal credentials \
or money, or to deliver malware, by deception).

Answer with a single JSON object, and nothing after it:
{{"label": "Phishing" | "Legitimate" | "Abstain", "p_phishing": <number from 0 to 1>, "evidence": [{{"quote": \
"<exact text from the email>", "indicator": "<indicator id>"}}]}}

- p_phishing is your probability that the email is phishing, scored with the Brier rule: report your honest belief.
- The label is scored with a cost profile: a phishing email labelled Legitimate costs {missed}, a legitimate one \
labelled Phishing costs {false_alarm}, Abstain (send to a human) costs {abstain}, a correct label 0. So the least \
costly choice is Phishing when p_phishing > {hi}, Legitimate when p_phishing < {lo}, and Abstain in between.
- evidence: at most {max_evidence} items. Each quote must be copied exactly from the email shown (one header \
value, one attachment or link line, or one sentence of the text, at most) and must show its indicator there; \
code checks every quote. Evidence earns credit only with a correct Phishing or Legitimate label (none with \
Abstain or a wrong label): on a phishing email, evidence that names its real indicators; on any email, a quote \
that is not in it or does not show its indicator costs. Give no evidence rather than weak evidence.

Indicators:
{indicators}
"""


COMPACT_SYSTEM_PROMPT = """Is this email phishing? Answer with one JSON object and nothing after it:
{{"label": "Phishing" | "Legitimate" | "Abstain", "p_phishing": <your probability, 0 to 1>, "evidence": \
[{{"quote": "<exact text from the email>", "indicator": "<indicator id>"}}]}}
Costs: missed phishing {missed}, false alarm {false_alarm}, Abstain {abstain}; p_phishing is Brier-scored. Evidence \
(at most {max_evidence}) earns only with a correct Phishing or Legitimate label; a quote not in the email or not \
showing its indicator costs.
Indicators: {indicators}
"""


def _mailbox_lines(mailbox: dict[str, Any] | None) -> list[str]:
    if mailbox is None:
        return ["Recipient organisation: unknown."]
    box = Mailbox.model_validate(mailbox)
    lines = [f"Recipient organisation: {box.organisation} (mail domains: {', '.join(box.domains)})."]
    if box.people:
        lines.append(f"Its staff include: {', '.join(box.people)}.")
    if box.partners:
        lines.append("Its partners: " + "; ".join(f"{p.name} ({', '.join(p.domains)})" for p in box.partners) + ".")
    return lines


@register
class Phishing(AbstainingEnvironment):
    name: ClassVar[str] = "phishing"
    version: ClassVar[str] = "0.3.4"
    config_class: ClassVar[type[EnvConfig]] = PhishingConfig
    headline_metrics: ClassVar[tuple[tuple[str, bool], ...]] = (
        ("reward_mean", True), ("expected_cost", False), ("f1", True), ("brier", False),
        ("evidence_precision", True), ("evidence_recall", True), ("abstain_rate", False),
    )
    metric_definitions: ClassVar[Mapping[str, str]] = {
        **KIT_DEFINITIONS,
        "reward_mean": "Mean reward over all scored rollouts (infrastructure errors left out): (1 - "
                       "evidence_weight) x [decision_weight x (1 - cost / max_cost) + brier_weight x (1 - (p - "
                       "y)^2)] + evidence_weight x the evidence score "
                       "(README, Scoring), the evidence score earned only under a correct Phishing or Legitimate "
                       "label (an empty list on legitimate mail scores 1); an unparseable answer earns 0.",
        "evidence_precision": "Confirmed pieces of evidence / scored pieces of evidence, summed over every valid "
                              "answer (micro-averaged: an answer with five pieces weighs five times one with one; "
                              "language indicators on imported mail are not scored); "
                              "a piece is confirmed when its quote lies in one segment of the email and its "
                              "indicator's verifier (or, for a language indicator, a planted span) confirms it there.",
        "evidence_recall": "Indicators of the item named by confirmed evidence / indicators to find, summed over the "
                           "phishing items with a valid answer (legitimate items have none to find); undefined when "
                           "there is nothing to find.",
    }
    example_fields: ClassVar[tuple[str, ...]] = ("family", "y", "action", "p", "cost", "evidence_given",
                                                 "evidence_confirmed", "evidence_to_find", "evidence_found")
    splits: ClassVar[tuple[str, ...]] = ("train", "dev", "test", "ood")
    data_dir: ClassVar[Path] = DATA_DIR
    default_generated_size: ClassVar[int] = 1000
    public_splits: ClassVar[tuple[str, ...]] = ("test", "ood")
    honest_baselines: ClassVar[tuple[str, ...]] = ("heuristic", "classical")
    hack_baselines: ClassVar[tuple[str, ...]] = (
        "always-phishing", "always-legitimate", "always-abstain", "quote-everything", "fabricated-quotes",
        "every-indicator", "quote-every-line", "abstain-with-evidence", "phishing-with-detected-quotes",
        "label-probability-mismatch")
    item_contract: ClassVar[ItemContract] = ItemContract(PhishingInput, PhishingTarget, Answer)
    outcome_model: ClassVar[type[Outcome]] = PhishingOutcome
    labels: ClassVar[Labels] = LABELS
    breakdowns: ClassVar[Mapping[str, Breakdown]] = phishing_metrics.BREAKDOWNS
    config: PhishingConfig

    @classmethod
    def importer(cls) -> Importer:
        from security_verifiers.envs.phishing.importer import IMPORTER

        return IMPORTER

    def __init__(self, config: EnvConfig | None = None) -> None:
        super().__init__(config)
        self._contexts: OrderedDict[tuple[str, int], Context] = OrderedDict()

    # -- data ---------------------------------------------------------------------------------
    def generate(self, split: str, n: int, seed: int) -> list[Item]:
        from security_verifiers.envs.phishing.generator import generate

        return generate(split, n, seed)

    def public_sets(self) -> PublicSets:
        from security_verifiers.envs.phishing.public import PUBLIC_SETS

        return PUBLIC_SETS

    def rewrites(self) -> tuple[Rewrite, ...]:
        from security_verifiers.envs.phishing.rewrites import REWRITES

        return REWRITES

    def rewrite_problem(self, original: Item, rewritten: Item) -> str | None:
        from security_verifiers.envs.phishing.rewrites import rewrite_problem

        return rewrite_problem(original, rewritten)

    def context(self, item: Item) -> Context:
        """The parsed email of ``item`` and what is derived from its input alone (cached: the prompt, the scorer
        and the baselines all read it). It holds nothing of the target: see :meth:`judging_context`."""
        key = (item.id, hash(item.input["raw"]))
        ctx = self._contexts.get(key)
        if ctx is None:
            data = PhishingInput.model_validate(item.input)
            ctx = Context(parse(data.message_bytes()), data.mailbox)
            self._contexts[key] = ctx
            if len(self._contexts) > CONTEXT_CACHE:
                self._contexts.popitem(last=False)
        else:
            self._contexts.move_to_end(key)
        return ctx

    def judging_context(self, item: Item) -> Context:
        """:meth:`context` with the target's planted evidence and source: what the scorer judges against."""
        target = PhishingTarget.model_validate(item.target)
        return self.context(item).judged(target.planted, imported=target.source == "imported")

    # -- episode ------------------------------------------------------------------------------
    def prompt(self, item: Item) -> list[Message]:
        costs = self.config.costs
        if self.config.prompt_style in ("compact", "checked"):
            system = COMPACT_SYSTEM_PROMPT.format(missed=costs.missed, false_alarm=costs.false_alarm,
                                                  abstain=costs.abstain, max_evidence=MAX_EVIDENCE,
                                                  indicators=", ".join(INDICATORS))
        else:
            lo, hi = costs.abstain_band()
            indicators = "\n".join(f"- {name}: {what}" for name, (_, what) in INDICATORS.items())
            system = SYSTEM_PROMPT.format(missed=costs.missed, false_alarm=costs.false_alarm, abstain=costs.abstain,
                                          lo=round(lo, 4), hi=round(hi, 4), max_evidence=MAX_EVIDENCE,
                                          indicators=indicators)
        ctx = self.context(item)
        checks = []
        if self.config.prompt_style == "checked":
            checks = ["", f"Checks: {', '.join(heuristic_signals(ctx)) or 'none'}"]
        user = "\n".join([*_mailbox_lines(item.input.get("mailbox")), "", "The email:", "", ctx.rendering.text,
                          *checks])
        return [Message(role="system", content=system), Message(role="user", content=user)]

    # -- the one scorer ------------------------------------------------------------------------
    def score(self, item: Item, transcript: Transcript) -> Score:
        phishing = item.target["label"] == LABELS.positive
        fields = {"y": 1 if phishing else 0, "family": item.target["family"], "split": item.split,
                  "difficulty": item.meta.get("difficulty", "unknown")}
        parsed = parse_answer(transcript.final_text, Answer)
        base = score_answer(parsed, fields, self.config, LABELS)  # type: ignore[arg-type]
        ctx = self.judging_context(item)
        to_find = score_evidence([], ctx, phishing).to_find
        empty: dict[str, Any] = {"evidence_given": None, "evidence_grounded": None, "evidence_scored": None,
                                 "evidence_confirmed": None, "evidence_to_find": to_find, "evidence_found": None,
                                 "evidence_score": None}
        if not isinstance(parsed, Parsed):
            outcome = PhishingOutcome.model_validate({**base.outcome, **empty})
            return base.model_copy(update={"components": {**base.components, EVIDENCE: 0.0},
                                           "outcome": outcome.model_dump()})
        result = score_evidence(parsed.value.evidence, ctx, phishing)  # type: ignore[attr-defined]
        earned = result.score if committed_and_correct(base.outcome) else 0.0
        weight = self.config.evidence_weight
        reward = (1.0 - weight) * base.reward + weight * earned
        outcome = PhishingOutcome.model_validate({
            **base.outcome, "reward": reward, "evidence_given": result.given, "evidence_grounded": result.grounded,
            "evidence_scored": result.scored, "evidence_confirmed": result.confirmed, "evidence_to_find": to_find,
            "evidence_found": result.found, "evidence_score": earned})
        return base.model_copy(update={"reward": reward, "components": {**base.components, EVIDENCE: earned},
                                       "outcome": outcome.model_dump()})

    # -- the metrics: the kit's, with the evidence part's (metrics.py) ---------------------------
    def flat_metrics(self, outcomes: Sequence[Any]) -> dict[str, Any]:
        return phishing_metrics.flat_metrics(outcomes)

    def constant_policy(self, outcomes: Sequence[Any]) -> ConstantPolicy | None:
        return phishing_metrics.constant_policy(outcomes, self.config, LABELS)

    def baselines(self) -> dict[str, Callable[[], Policy]]:
        from security_verifiers.envs.phishing.baselines import baseline_factories

        return baseline_factories(self)
