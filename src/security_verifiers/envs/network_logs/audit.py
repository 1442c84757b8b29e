"""Shortcut audit: how well can one field of the flow (or the host role) alone predict the label?

If a single field predicted the label, a model could score well without reading the window, and the
benchmark would measure nothing about reasoning over a host's behaviour. For every field this finds
the best single-field predictor and reports its balanced accuracy and AUC:

* numeric fields (timestamps, ports, sizes, durations; a missing value sorts below every number): the
  best single threshold in either direction (in-sample, so optimistic) and a small decision tree on
  that field alone, scored by two-fold cross-validation (catches "only mid-sized values" rules);
* categorical fields (addresses, ports, protocol, service, state, history, role): the per-value label
  rate learned on one half and applied to the other, both ways round.

The largest balanced accuracy over all fields is the headline number of the data card.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from sklearn.metrics import balanced_accuracy_score, roc_auc_score, roc_curve
from sklearn.tree import DecisionTreeClassifier

from security_verifiers.core.types import Item

NUMERIC_FIELDS = ("ts", "id.orig_p", "id.resp_p", "duration", "orig_bytes", "resp_bytes", "orig_pkts",
                  "resp_pkts")
CATEGORICAL_FIELDS = ("id.orig_h", "id.orig_p", "id.resp_h", "id.resp_p", "proto", "service", "conn_state",
                      "history", "host.role")
_MISSING = -1.0
_FOLD_SEED = 20240301


def _value(item: Item, name: str) -> Any:
    if name == "host.role":
        return item.input["host"]["role"]
    return item.input["flow"].get(name)


def _folds(n: int) -> list[np.ndarray]:
    """Two fixed halves (the same on every machine) for the held-out estimates."""
    order = list(range(n))
    random.Random(_FOLD_SEED).shuffle(order)
    idx = np.array(order)
    return [idx[: n // 2], idx[n // 2:]]


def _threshold_scores(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Best single-threshold balanced accuracy and the AUC, each taken in the better direction."""
    auc = float(roc_auc_score(y, x))
    fpr, tpr, _ = roc_curve(y, x)
    bal = (tpr + 1.0 - fpr) / 2.0
    return float(max(bal.max(), 1.0 - bal.min())), max(auc, 1.0 - auc)


def _cross_validated(x: np.ndarray, y: np.ndarray,
                     fit_predict: Callable[..., np.ndarray]) -> tuple[float, float]:
    """Balanced accuracy and AUC of held-out scores; ``fit_predict`` returns (score, decision) columns."""
    scores, decisions = np.zeros(len(y)), np.zeros(len(y), dtype=int)
    a, b = _folds(len(y))
    for train, test in ((a, b), (b, a)):
        out = fit_predict(x[train], y[train], x[test])
        scores[test], decisions[test] = out[:, 0], out[:, 1]
    auc = float(roc_auc_score(y, scores))
    return float(balanced_accuracy_score(y, decisions)), max(auc, 1.0 - auc)


def _tree_fit_predict(x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray) -> np.ndarray:
    tree = DecisionTreeClassifier(max_leaf_nodes=8, min_samples_leaf=10, class_weight="balanced",
                                  random_state=0)
    tree.fit(x_train.reshape(-1, 1), y_train)
    proba = tree.predict_proba(x_test.reshape(-1, 1))[:, 1]
    return np.column_stack([proba, proba > 0.5])


def _rate_fit_predict(x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray) -> np.ndarray:
    """Per-value malicious rate (smoothed towards the base rate); above the base rate = Malicious."""
    prior = float(y_train.mean())
    counts: Counter[Any] = Counter(x_train.tolist())
    pairs = zip(x_train.tolist(), y_train.tolist(), strict=True)
    positives: Counter[Any] = Counter(v for v, label in pairs if label)
    rate = np.array([(positives[v] + prior) / (counts[v] + 1.0) for v in x_test.tolist()])
    return np.column_stack([rate, rate > prior])


def _numeric(items: Sequence[Item], name: str, y: np.ndarray) -> dict[str, float]:
    raw = [_value(i, name) for i in items]
    x = np.array([_MISSING if v is None else float(v) for v in raw])
    threshold_bal, auc = _threshold_scores(x, y)
    tree_bal, tree_auc = _cross_validated(x, y, _tree_fit_predict)
    return {"balanced_accuracy": round(max(threshold_bal, tree_bal), 4), "auc": round(max(auc, tree_auc), 4)}


def _categorical(items: Sequence[Item], name: str, y: np.ndarray) -> dict[str, float]:
    x = np.array([str(_value(i, name)) for i in items], dtype=object)
    bal, auc = _cross_validated(x, y, _rate_fit_predict)
    return {"balanced_accuracy": round(bal, 4), "auc": round(auc, 4)}


def _balance(values: Sequence[str]) -> dict[str, float]:
    counts = Counter(values)
    return {k: round(v / len(values), 4) for k, v in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))}


def shortcut_audit(items: Sequence[Item]) -> dict[str, Any]:
    """Best single-field predictors of the label, and the label, family and difficulty balance."""
    y = np.array([1 if i.target["label"] == "Malicious" else 0 for i in items])
    if len(set(y.tolist())) < 2:
        raise ValueError("the shortcut audit needs items of both labels")
    fields: dict[str, dict[str, Any]] = {}
    for name in NUMERIC_FIELDS:
        fields[name] = {"kind": "numeric", **_numeric(items, name, y)}
    for name in CATEGORICAL_FIELDS:
        cat = _categorical(items, name, y)
        if name in fields and fields[name]["balanced_accuracy"] >= cat["balanced_accuracy"]:
            fields[name]["kind"] = "numeric+categorical"
            continue
        fields[name] = {"kind": "categorical" if name not in fields else "numeric+categorical", **cat}
    worst = max(fields, key=lambda f: fields[f]["balanced_accuracy"])
    return {
        "n": len(items),
        "label_balance": _balance([i.target["label"] for i in items]),
        "family_balance": _balance([i.target["family"] for i in items]),
        "difficulty_balance": _balance([str(i.meta.get("difficulty", "unknown")) for i in items]),
        "fields": fields,
        "max_balanced_accuracy": fields[worst]["balanced_accuracy"],
        "max_field": worst,
    }
