"""The heuristic's reading of an email: the log-odds of what code finds in it (structural indicators, a failed
From verdict, an unroutable sender, an image-only body) and of the lures its words carry (:mod:`.lures`), and the
answer format every E4 baseline writes. Its own module, because the heuristic baseline answers with it and the
classical model reads the same log-odds as features: neither imports the other for it."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable

from security_verifiers.envs.phishing.indicators import MAX_EVIDENCE
from security_verifiers.envs.phishing.lures import read_lures
from security_verifiers.envs.phishing.verifiers import Context

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


def answer_text(label: str, p: float, evidence: list[tuple[str, str]]) -> str:
    """The JSON answer every E4 baseline writes: label, probability (4 decimals) and at most
    :data:`~.indicators.MAX_EVIDENCE` pieces of evidence."""
    return json.dumps({"label": label, "p_phishing": round(p, 4),
                       "evidence": [{"quote": q, "indicator": i} for i, q in evidence[:MAX_EVIDENCE]]})



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


def heuristic_logit(ctx: Context) -> float:
    """Everything the heuristic reads, as one log-odds: the structural indicators, the signals no quote can show
    and the lures of the words (the classical model reads it as one feature)."""
    return math.fsum([indicator_logit(i for i, _ in ctx.detected), IMAGE_ONLY_WEIGHT if image_only(ctx) else 0.0,
                       FROM_VERDICT_WEIGHT if from_verdict_failed(ctx) else 0.0,
                       UNROUTABLE_SENDER_WEIGHT if unroutable_sender(ctx) else 0.0, lure_logit(ctx)])


def heuristic_signals(ctx: Context) -> list[str]:
    """The names of every signal :func:`heuristic_logit` counts in this message, in a fixed order: the structural
    indicators code detects, ``image_only``, ``from_verdict_failed``, ``unroutable_sender``, ``lure_<theme>``,
    ``disguised_letters``, ``recipient_in_subject`` and ``abused_tld``. Phishing's ``checked`` prompt shows them,
    so that a model too small to find them in the email can learn what they are worth; the log-odds is their
    weights' sum (a test holds the two together)."""
    lures = read_lures(ctx.mail)
    detected = {i for i, _ in ctx.detected}
    flags = {"image_only": image_only(ctx), "from_verdict_failed": from_verdict_failed(ctx),
             "unroutable_sender": unroutable_sender(ctx),
             **{f"lure_{theme}": theme in lures.themes for theme in LURE_THEME_WEIGHTS},
             "disguised_letters": lures.disguised_letters, "recipient_in_subject": lures.recipient_in_subject,
             "abused_tld": lures.abused_tld}
    return [i for i in HEURISTIC_WEIGHTS if i in detected] + [name for name, on in flags.items() if on]


#: The log-odds of each name :func:`heuristic_signals` gives.
SIGNAL_WEIGHTS: dict[str, float] = {
    **HEURISTIC_WEIGHTS, "image_only": IMAGE_ONLY_WEIGHT, "from_verdict_failed": FROM_VERDICT_WEIGHT,
    "unroutable_sender": UNROUTABLE_SENDER_WEIGHT, **{f"lure_{t}": w for t, w in LURE_THEME_WEIGHTS.items()},
    "disguised_letters": DISGUISED_LETTERS_WEIGHT, "recipient_in_subject": RECIPIENT_IN_SUBJECT_WEIGHT,
    "abused_tld": ABUSED_TLD_WEIGHT}


def heuristic_probability(ctx: Context) -> float:
    return 1.0 / (1.0 + math.exp(-heuristic_logit(ctx)))
