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
import math
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from security_verifiers.core.scoring import CostProfile
from security_verifiers.core.types import Item, Message
from security_verifiers.envs.kits.abstaining import BayesBaseline, ConstantBaseline, Labels
from security_verifiers.envs.phishing.indicators import INDICATORS, MAX_EVIDENCE
from security_verifiers.envs.phishing.lures import read_lures
from security_verifiers.envs.phishing.verifiers import Context
from security_verifiers.models.base import Baseline, Policy

if TYPE_CHECKING:
    from security_verifiers.envs.phishing.env import Phishing

#: Log-odds each structural indicator adds to the heuristic's prior (hand-set from what each signal means, not
#: fitted: a fitted model is the classical baseline's job).
HEURISTIC_WEIGHTS = {
    "lookalike_domain": 3.0, "display_name_spoof": 2.2, "reply_to_mismatch": 1.0, "auth_failure": 1.2,
    "link_text_mismatch": 0.7, "ip_or_shortener_url": 2.2, "free_hosting_credential_page": 2.6,
    "oauth_consent_lure": 2.5, "risky_attachment": 2.4, "credential_form": 2.6,
}
HEURISTIC_PRIOR = -2.0
#: Log-odds of what the heuristic reads but no quote can show: a body that is an image and a link, whose words a
#: filter (and the reader's eye for a lure's wording) cannot see.
IMAGE_ONLY_WEIGHT = 1.5
#: Log-odds added when the receiving server's own verdict on the From domain is a failure (``dmarc=fail``,
#: Microsoft's ``compauth=fail``): stronger than the indicator's other failures (a soft SPF fail, a broken DKIM
#: signature, a DMARC record in error), which forwarding and mailing lists cause in honest mail too.
#: Not when a DKIM signature failed as well: a list or forwarder that rewrote the message broke a signature the
#: sender had made, while a forger has none of the From domain to break.
FROM_VERDICT_WEIGHT = 1.0
_BROKEN_SIGNATURE = re.compile(r"\bdkim\s*=\s*fail\b", re.IGNORECASE)
#: Log-odds of a From address whose domain no mail can come from or go back to (no dot: ``alerta@detran``; a comma
#: for a dot: ``noreply@brand,com``): a forged sender, but one that alone leaves room for a misconfigured host.
UNROUTABLE_SENDER_WEIGHT = 1.5
_FROM_VERDICT_FAIL = re.compile(r"\b(dmarc|compauth)\s*=\s*fail\b", re.IGNORECASE)
#: Log-odds of each theme of lure the words carry (:mod:`.lures`). Honest transactional mail threatens accounts
#: (a password reset), asks for money (an invoice), tracks parcels and sets deadlines, so one of those alone leaves
#: an email with no structural indicator Legitimate, and two make it Abstain; a prize or a crypto wallet, rare in
#: honest mail to a person, alone makes it Abstain. No theme alone makes it Phishing; three can.
LURE_THEME_WEIGHTS = {"prize": 0.8, "crypto": 0.8, "account_threat": 0.5, "money": 0.5, "delivery": 0.5,
                      "urgency": 0.5}
#: Log-odds of a subject or sender name in disguised letters (mathematical alphabets, small capitals, overlaid
#: strokes): written to be read by a person and not by a filter.
DISGUISED_LETTERS_WEIGHT = 1.5
#: Log-odds of the recipient's own address in the subject or the sender's name: a mail merge on a harvested
#: address, where a sender who knows the recipient uses their name.
RECIPIENT_IN_SUBJECT_WEIGHT = 1.2
#: Log-odds of a sender on a top-level domain that abuse reports find most used for phishing and spam.
ABUSED_TLD_WEIGHT = 0.8


def _answer(label: str, p: float, evidence: list[tuple[str, str]]) -> str:
    return json.dumps({"label": label, "p_phishing": round(p, 4),
                       "evidence": [{"quote": q, "indicator": i} for i, q in evidence[:MAX_EVIDENCE]]})


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
        return _answer(item.target["label"], 1.0 if phishing else 0.0, evidence if phishing else [])


def image_only(ctx: Context) -> bool:
    """An HTML body of images and links with almost no words of its own (image descriptions not counted)."""
    mail = ctx.mail
    words = len(re.sub(r"\[image:[^\]]*\]", " ", mail.body).split())
    return mail.images > 0 and bool(mail.links) and words < 5


def from_verdict_failed(ctx: Context) -> bool:
    """Whether an Authentication-Results header says the From domain failed DMARC (or Microsoft's composite
    authentication) with no broken DKIM signature: the receiver found the visible sender unauthenticated, not
    merely a relay path broken."""
    results = ctx.mail.header("Authentication-Results")
    return _FROM_VERDICT_FAIL.search(results) is not None and _BROKEN_SIGNATURE.search(results) is None


def unroutable_sender(ctx: Context) -> bool:
    """Whether the From address has a domain that is no internet domain (no dot in it, or a comma)."""
    sender = ctx.mail.sender
    if sender is None or "@" not in sender.address:
        return False
    domain = sender.domain.strip(".")
    return bool(domain) and ("." not in domain or "," in domain)


def indicator_logit(indicators: Iterable[str]) -> float:
    """The heuristic's log-odds of these structural indicators, each counted once (before the image-only signal):
    the prior plus each one's weight, summed exactly (``math.fsum``), so the same whatever order they come in. A
    float sum's last bits follow its order, and a set of strings iterates in an order ``PYTHONHASHSEED`` sets: the
    classical model, which reads this as a feature, was fitted a little differently from one process to another."""
    return math.fsum([HEURISTIC_PRIOR, *(HEURISTIC_WEIGHTS[i] for i in set(indicators))])


def lure_logit(ctx: Context) -> float:
    """The log-odds of what the words and names say (:mod:`.lures`): read by the heuristic, never evidence."""
    lures = read_lures(ctx.mail)
    return math.fsum([*(LURE_THEME_WEIGHTS[t] for t in lures.themes),
                      DISGUISED_LETTERS_WEIGHT if lures.disguised_letters else 0.0,
                      RECIPIENT_IN_SUBJECT_WEIGHT if lures.recipient_in_subject else 0.0,
                      ABUSED_TLD_WEIGHT if lures.abused_tld else 0.0])


def heuristic_probability(ctx: Context) -> float:
    logit = math.fsum([indicator_logit(i for i, _ in ctx.detected), IMAGE_ONLY_WEIGHT if image_only(ctx) else 0.0,
                       FROM_VERDICT_WEIGHT if from_verdict_failed(ctx) else 0.0,
                       UNROUTABLE_SENDER_WEIGHT if unroutable_sender(ctx) else 0.0, lure_logit(ctx)])
    return 1.0 / (1.0 + math.exp(-logit))


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
        return _answer(self.labels.label(self.costs.bayes_action(p)), p, self.evidence(item))


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
            return _answer(honest["label"], 1.0 - honest["p_phishing"], [(e["indicator"], e["quote"])
                                                                         for e in honest["evidence"]])
        if self.abstain:  # never commit, but cite every true structural indicator
            return _answer("Abstain", 0.5, self._evidence(ctx))
        if self.always_phishing:  # the costlier miss avoided everywhere, "supported" by whatever code finds
            return _answer("Phishing", 0.5, self._evidence(ctx))
        return _answer(honest["label"], honest["p_phishing"], self._evidence(ctx))


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
