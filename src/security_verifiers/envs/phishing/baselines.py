"""E4's baselines: the reference, an honest heuristic on headers and URLs, a classical model (:mod:`.classical`),
constant policies, and hacks on the evidence and the probability.

Most evidence hacks answer with the heuristic's label and probability and only change the evidence, and the
mismatch hack only the probability: each isolates one way to game one part of the reward, so it must score
strictly below the heuristic that it otherwise copies (the conformance suite checks it). Two never decide
honestly but cite every structural indicator code finds (on imported mail, exactly the evidence target):
``abstain-with-evidence`` never commits, and ``phishing-with-detected-quotes`` calls everything Phishing with
p = 0.5. Evidence earns only under a correct committed label, so neither can make the evidence pay for the
decision it dodges."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from security_verifiers.core.scoring import CostProfile
from security_verifiers.core.types import Item, Message
from security_verifiers.envs.kits.abstaining import BayesBaseline, ConstantBaseline, Labels
from security_verifiers.envs.phishing.heuristic import HEURISTIC_WEIGHTS, answer_text, heuristic_probability
from security_verifiers.envs.phishing.indicators import INDICATORS, MAX_EVIDENCE
from security_verifiers.envs.phishing.verifiers import Context
from security_verifiers.models.base import Baseline, Policy

if TYPE_CHECKING:
    from security_verifiers.envs.phishing.env import Phishing

class ContextBaseline(Baseline):
    """A baseline that reads the parsed email (the environment's cached context of ``item.input``)."""

    def __init__(self, env: Phishing) -> None:
        self.env = env

    def context(self, item: Item) -> Context:
        return self.env.context(item)


class ReferenceBaseline(ContextBaseline):
    """The truth with certainty and the planted evidence (on imported mail, what code finds): the ceiling."""

    name = "reference"

    def answer(self, item: Item, messages: list[Message]) -> str:
        ctx = self.env.judging_context(item)
        phishing = item.target["label"] == "Phishing"
        evidence: list[tuple[str, str]] = ([(p.indicator, p.quote) for p in ctx.planted] if not ctx.imported
                                           else list(ctx.detected))
        return answer_text(item.target["label"], 1.0 if phishing else 0.0, evidence if phishing else [])


class HeuristicBaseline(BayesBaseline):
    """Rules on headers, URLs and words: the structural indicators code finds, each adding fixed log-odds to a
    prior, and the lures the words carry (:func:`lure_logit`); the Bayes action under the configured costs; the
    indicators found, strongest first, as evidence (never the lures: code cannot confirm them)."""

    name = "heuristic"

    def __init__(self, costs: CostProfile, labels: Labels, env: Phishing) -> None:
        super().__init__(costs, labels)
        self.env = env

    def probabilities(self, items: list[Item]) -> list[float]:
        return [heuristic_probability(self.env.context(i)) for i in items]

    def prepare(self, items: list[Item]) -> None:
        """Nothing to batch: each answer reads the email's context, which the prompt has just parsed (computing
        every probability up front would parse every email once more, past the context cache, on a large set)."""

    def evidence(self, item: Item) -> list[tuple[str, str]]:
        return sorted(self.env.context(item).detected, key=lambda e: -HEURISTIC_WEIGHTS[e[0]])

    def answer(self, item: Item, messages: list[Message]) -> str:
        p = self._p.get(item.id)
        if p is None:
            p = self.probabilities([item])[0]
        return answer_text(self.labels.label(self.costs.bayes_action(p)), p, self.evidence(item))


class EvidenceHack(Baseline):
    """The heuristic's label and probability with other evidence (what each hack tries)."""

    def __init__(self, heuristic: HeuristicBaseline, name: str, evidence: Callable[[Context], list[tuple[str, str]]],
                 flip_probability: bool = False, abstain: bool = False, always_phishing: bool = False) -> None:
        self.heuristic, self.name, self._evidence = heuristic, name, evidence
        self.flip, self.abstain, self.always_phishing = flip_probability, abstain, always_phishing

    def describe(self) -> dict[str, Any]:
        return {"kind": "baseline", "name": self.name}

    def prepare(self, items: list[Item]) -> None:
        self.heuristic.prepare(items)

    def answer(self, item: Item, messages: list[Message]) -> str:
        honest = json.loads(self.heuristic.answer(item, messages))
        ctx = self.heuristic.env.context(item)
        if self.flip:  # the label of the honest probability, stated with the opposite probability
            return answer_text(honest["label"], 1.0 - honest["p_phishing"], [(e["indicator"], e["quote"])
                                                                         for e in honest["evidence"]])
        if self.abstain:  # never commit, but cite every true structural indicator
            return answer_text("Abstain", 0.5, self._evidence(ctx))
        if self.always_phishing:  # the costlier miss avoided everywhere, "supported" by whatever code finds
            return answer_text("Phishing", 0.5, self._evidence(ctx))
        return answer_text(honest["label"], honest["p_phishing"], self._evidence(ctx))


def _quote_everything(ctx: Context) -> list[tuple[str, str]]:
    """The whole email (as much of it as a quote may hold, so that the answer stays valid and the evidence part,
    not the grammar, is what turns it down) under the indicators most often true."""
    whole = ctx.rendering.text[:2000]
    return [(i, whole) for i in ("lookalike_domain", "credential_request", "urgency_pressure")]


def _every_line(ctx: Context) -> list[tuple[str, str]]:
    """The email's lines, each a true quote, in order, under the indicators most often true in turn: as much of
    the email as the answer has room for, hoping that some line shows some indicator."""
    lines = [line.strip() for line in ctx.rendering.text.splitlines() if any(c.isalnum() for c in line)]
    order = list(dict.fromkeys(["lookalike_domain", "display_name_spoof", "urgency_pressure", "credential_request",
                                "link_text_mismatch", *INDICATORS]))
    return [(order[k % len(order)], line[:2000]) for k, line in enumerate(lines[:MAX_EVIDENCE])]


def _fabricated(ctx: Context) -> list[tuple[str, str]]:
    return [("credential_request", "Please verify your password to keep your account active."),
            ("urgency_pressure", "Your mailbox will be closed within 24 hours."),
            ("lookalike_domain", "micros0ft-support.com"),
            ("payment_change_request", "Our bank details have changed, please update them before the next payment."),
            ("auth_failure", "spf=fail")]


def _every_indicator(ctx: Context) -> list[tuple[str, str]]:
    """One quote (the strongest true one, else the From value) under every indicator the answer has room for:
    the indicators that are most often true first."""
    quote = ctx.detected[0][1] if ctx.detected else (ctx.mail.header("From") or ctx.mail.header("Subject") or "a")
    order = ["lookalike_domain", "display_name_spoof", "urgency_pressure", "credential_request",
             "link_text_mismatch", *INDICATORS]
    return [(i, quote) for i in list(dict.fromkeys(order))[:MAX_EVIDENCE]]


def baseline_factories(env: Phishing) -> dict[str, Callable[[], Policy]]:
    from security_verifiers.envs.phishing.items import LABELS

    costs = env.config.costs

    def heuristic() -> HeuristicBaseline:
        return HeuristicBaseline(costs, LABELS, env)

    def classical() -> Policy:
        from security_verifiers.envs.phishing.classical import ClassicalBaseline  # scikit-learn: import when used

        return ClassicalBaseline(costs, LABELS, env)

    factories: dict[str, Callable[[], Policy]] = {
        "reference": lambda: ReferenceBaseline(env),
        "heuristic": heuristic,
        "classical": classical,
    }
    for label in (LABELS.positive, LABELS.negative, LABELS.abstain):
        factories[f"always-{label.lower()}"] = lambda label=label: ConstantBaseline(label, LABELS)  # type: ignore[misc]
    factories["quote-everything"] = lambda: EvidenceHack(heuristic(), "quote-everything", _quote_everything)
    factories["fabricated-quotes"] = lambda: EvidenceHack(heuristic(), "fabricated-quotes", _fabricated)
    factories["every-indicator"] = lambda: EvidenceHack(heuristic(), "every-indicator", _every_indicator)
    factories["abstain-with-evidence"] = lambda: EvidenceHack(heuristic(), "abstain-with-evidence",
                                                              lambda ctx: list(ctx.detected), abstain=True)
    factories["quote-every-line"] = lambda: EvidenceHack(heuristic(), "quote-every-line", _every_line)
    factories["phishing-with-detected-quotes"] = lambda: EvidenceHack(
        heuristic(), "phishing-with-detected-quotes", lambda ctx: list(ctx.detected), always_phishing=True)
    factories["label-probability-mismatch"] = lambda: EvidenceHack(heuristic(), "label-probability-mismatch",
                                                                   _fabricated, flip_probability=True)
    return factories
