"""The shortcut audit of a set of E4 items: how well the best single feature decides the label alone.

A feature is the presence of a header name, the sender's domain, or a lower-cased word of the subject and body.
The rule "phishing when the feature is present" (or when it is absent) is scored by balanced accuracy; a data set
where one feature scores near 1.0 teaches that feature instead of reading the email. The data card reports the top
features, and a test holds the generator's best one below 0.8.
"""

from __future__ import annotations

import email
import email.policy
import html
import re
from collections import Counter
from collections.abc import Iterable
from email.message import EmailMessage

from security_verifiers.core.types import Item
from security_verifiers.envs.phishing.items import PhishingInput

_WORD = re.compile(r"[^\W_]+")
_TAG = re.compile(r"<[^>]+>")


def _text(msg: EmailMessage) -> str:
    plain = rich = None
    for part in msg.walk():
        if part.is_multipart() or part.get_filename():
            continue
        kind = part.get_content_type()
        try:
            if kind == "text/plain" and plain is None:
                plain = part.get_content()
            elif kind == "text/html" and rich is None:
                rich = html.unescape(_TAG.sub(" ", part.get_content()))
        except (LookupError, ValueError):
            continue
    return plain if plain is not None else (rich or "")


def features(item: Item) -> set[str]:
    """The audited features of one item: ``header:<name>``, ``from:<domain>``, ``word:<word>``."""
    raw = PhishingInput.model_validate(item.input).message_bytes()
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    assert isinstance(msg, EmailMessage)
    out = {f"header:{name.lower()}" for name in msg.keys()}
    sender = str(msg.get("From", ""))
    match = re.search(r"@([\w.-]+)", sender)
    if match:
        out.add(f"from:{match.group(1).lower()}")
    words = _WORD.findall(f"{msg.get('Subject', '')} {_text(msg)}".lower())
    out.update(f"word:{w}" for w in words)
    return out


def shortcut_audit(items: Iterable[Item], top: int = 10) -> dict[str, object]:
    """The best single-feature rule's balanced accuracy, and the ``top`` features with their rates by class."""
    counts: dict[str, Counter[str]] = {"Phishing": Counter(), "Legitimate": Counter()}
    totals: Counter[str] = Counter()
    for item in items:
        label = item.target["label"]
        totals[label] += 1
        counts[label].update(features(item))
    n_p, n_l = totals["Phishing"], totals["Legitimate"]
    if not n_p or not n_l:
        raise ValueError("the audit needs items of both labels")
    rows = []
    for feat in set(counts["Phishing"]) | set(counts["Legitimate"]):
        p, q = counts["Phishing"][feat] / n_p, counts["Legitimate"][feat] / n_l
        ba = (p + 1.0 - q) / 2.0
        rows.append((max(ba, 1.0 - ba), feat, p, q))
    rows.sort(key=lambda r: (-r[0], r[1]))
    return {
        "n": n_p + n_l,
        "phishing_share": round(n_p / (n_p + n_l), 4),
        "max_balanced_accuracy": round(rows[0][0], 4),
        "top": [{"feature": f, "balanced_accuracy": round(b, 4), "rate_phishing": round(p, 4),
                 "rate_legitimate": round(q, 4)} for b, f, p, q in rows[:top]],
    }


def item_text(item: Item) -> str:
    """The subject and body text of one item, as :func:`features` reads its words (not lower-cased)."""
    raw = PhishingInput.model_validate(item.input).message_bytes()
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    assert isinstance(msg, EmailMessage)
    return f"{msg.get('Subject', '')} {_text(msg)}"


def bag_of_words_audit(train_items: Iterable[Item], eval_items: Iterable[Item]) -> dict[str, object]:
    """How far the words alone go: TF-IDF (scikit-learn's defaults, lower-cased) of the subject and body, into a
    logistic regression fitted on ``train_items`` and measured on ``eval_items``: accuracy (at probability 0.5),
    Brier score of the phishing probability, false-positive rate on legitimate mail and recall on phishing. A
    generator whose classes use different words is solved here; real mail is not."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    train, held = list(train_items), list(eval_items)
    y_train = [int(i.target["label"] == "Phishing") for i in train]
    y = [int(i.target["label"] == "Phishing") for i in held]
    if len(set(y_train)) < 2 or not held:
        raise ValueError("the audit needs training items of both labels and items to measure")
    vectorizer = TfidfVectorizer(lowercase=True)
    model = LogisticRegression(max_iter=1000)
    model.fit(vectorizer.fit_transform([item_text(i) for i in train]), y_train)
    prob = model.predict_proba(vectorizer.transform([item_text(i) for i in held]))[:, 1]
    pred = [int(p >= 0.5) for p in prob]
    n_p, n_l = sum(y), len(y) - sum(y)
    return {
        "n_train": len(train),
        "n": len(held),
        "accuracy": round(sum(a == b for a, b in zip(pred, y, strict=True)) / len(y), 4),
        "brier": round(sum((float(p) - t) ** 2 for p, t in zip(prob, y, strict=True)) / len(y), 4),
        "fpr": round(sum(p and not t for p, t in zip(pred, y, strict=True)) / n_l, 4) if n_l else None,
        "recall": round(sum(p and t for p, t in zip(pred, y, strict=True)) / n_p, 4) if n_p else None,
    }
