"""The classical baseline: TF-IDF of the rendered email plus header and URL features, into a logistic regression
trained on the generated train split only; the Bayes action of its probability; its strongest verifiable
features as evidence.

This is the bar a model must clear to be worth more than a spam filter, and the sim-to-real check of the
generator: trained on generated mail only, it is evaluated on hand-written mail in the layouts of public corpora
(:mod:`.sim_to_real`). The model is trained once per process (a few seconds) from a fixed seed, so its answers
are the same on every machine.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy.sparse import csr_matrix, hstack
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression

from security_verifiers.core.scoring import CostProfile
from security_verifiers.core.types import Item, Message
from security_verifiers.envs.kits.abstaining import BayesBaseline, Labels
from security_verifiers.envs.phishing.domains import is_free_mail
from security_verifiers.envs.phishing.indicators import MAX_EVIDENCE
from security_verifiers.envs.phishing.verifiers import STRUCTURAL_VERIFIERS, Context

if TYPE_CHECKING:
    from security_verifiers.envs.phishing.env import Phishing

TRAIN_ITEMS = 4000
TRAIN_SEED = 7
#: Sentences that say what a language indicator says (the classical model cites the strongest of them).
LEXICON: dict[str, re.Pattern[str]] = {
    "credential_request": re.compile(r"password|passcode|sign[ -]?in|log[ -]?in|verify your|confirm your|"
                                     r"credentials|re-?authenticat|validate your|security code", re.I),
    "payment_change_request": re.compile(r"\bwire\b|bank details|account number|routing|\biban\b|direct deposit|"
                                         r"payment details|remit|transfer", re.I),
    "gift_card_request": re.compile(r"gift ?cards?", re.I),
    "urgency_pressure": re.compile(r"urgent|immediately|within \d+ ?(hours|minutes)|\btoday\b|asap|suspend|"
                                   r"final notice|right away|confidential|as soon as|deadline|expire", re.I),
    "qr_code_lure": re.compile(r"\bqr\b|scan the code|scan this code", re.I),
}


def features(ctx: Context) -> list[float]:
    """Header and URL features: each structural indicator found, how many were found and the heuristic's log-odds
    of them (so that an indicator the train split never shows still moves the model: a learned weight of an
    unseen feature is 0), and counts code reads without a verdict."""
    from security_verifiers.envs.phishing.baselines import HEURISTIC_PRIOR, HEURISTIC_WEIGHTS

    found = {indicator for indicator, _ in ctx.detected}
    mail = ctx.mail
    sender = mail.sender.domain if mail.sender else ""
    return [*(1.0 if i in found else 0.0 for i in STRUCTURAL_VERIFIERS), len(found) / 3,
            (HEURISTIC_PRIOR + sum(HEURISTIC_WEIGHTS[i] for i in found)) / 3,
            1.0 if sender and is_free_mail(sender) else 0.0,
            min(len(mail.links), 10) / 10, min(len(mail.attachments), 5) / 5,
            1.0 if not mail.headers.get("Authentication-Results") else 0.0,
            1.0 if mail.reply_to else 0.0]


@dataclass
class _Model:
    vectorizer: TfidfVectorizer
    classifier: LogisticRegression
    #: The weight of each structural indicator in the fitted model (how the evidence is ranked).
    indicator_weights: dict[str, float]


_MODEL: _Model | None = None
_LOCK = threading.Lock()


def _text(ctx: Context) -> str:
    return ctx.rendering.text


def train(env: Phishing) -> _Model:
    """Fit on the generated train split (never the public test or OOD sets)."""
    items = env.dataset("train", n=TRAIN_ITEMS, seed=TRAIN_SEED).items
    contexts = [env.context(i) for i in items]
    y = np.array([1 if i.target["label"] == "Phishing" else 0 for i in items])
    vectorizer = TfidfVectorizer(sublinear_tf=True, min_df=3, max_features=20000, ngram_range=(1, 2),
                                 token_pattern=r"(?u)\b[\w.@-]{2,}\b", dtype=np.float64)
    x = hstack([vectorizer.fit_transform([_text(c) for c in contexts]),
                csr_matrix(np.array([features(c) for c in contexts]))]).tocsr()
    classifier = LogisticRegression(C=4.0, max_iter=2000, solver="liblinear")
    classifier.fit(x, y)
    tail = classifier.coef_[0][-len(features(contexts[0])):]
    weights = dict(zip(STRUCTURAL_VERIFIERS, (float(w) for w in tail), strict=False))
    return _Model(vectorizer, classifier, weights)


def model(env: Phishing) -> _Model:
    global _MODEL
    with _LOCK:
        if _MODEL is None:
            _MODEL = train(env)
        return _MODEL


class ClassicalBaseline(BayesBaseline):
    name = "classical"

    def __init__(self, costs: CostProfile, labels: Labels, env: Phishing) -> None:
        super().__init__(costs, labels)
        self.env = env

    def probabilities(self, items: list[Item]) -> list[float]:
        fitted = model(self.env)
        contexts = [self.env.context(i) for i in items]
        x = hstack([fitted.vectorizer.transform([_text(c) for c in contexts]),
                    csr_matrix(np.array([features(c) for c in contexts]))]).tocsr()
        return [float(p) for p in fitted.classifier.predict_proba(x)[:, 1]]

    def evidence(self, item: Item, action: str) -> list[tuple[str, str]]:
        """The structural indicators found, ranked by the model's weight of each (positive weights only), then,
        when it calls the email phishing, the sentence that most says each language indicator."""
        fitted = model(self.env)
        ctx = self.env.context(item)
        structural = sorted((e for e in ctx.detected if fitted.indicator_weights.get(e[0], 0.0) > 0),
                            key=lambda e: -fitted.indicator_weights[e[0]])
        if action != "positive":
            return structural
        vocabulary, coef = fitted.vectorizer.vocabulary_, fitted.classifier.coef_[0]
        analyzer = fitted.vectorizer.build_analyzer()
        sentences = [s.text for s in ctx.rendering.segments if s.kind == "body"]
        language = []
        for indicator, pattern in LEXICON.items():
            candidates = [s for s in sentences if pattern.search(s)]
            if candidates:
                best = max(candidates, key=lambda s: sum(coef[vocabulary[t]] for t in analyzer(s) if t in vocabulary))
                language.append((indicator, best))
        return (structural + language)[:MAX_EVIDENCE]

    def answer(self, item: Item, messages: list[Message]) -> str:
        from security_verifiers.envs.phishing.baselines import _answer

        p = self._p.get(item.id)
        if p is None:
            p = self.probabilities([item])[0]
        action = self.costs.bayes_action(p)
        return _answer(self.labels.label(action), p, self.evidence(item, action))
