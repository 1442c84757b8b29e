"""Shortcut audit: how well can the flow's own fields, without the window, predict the label?

If they did, a model could score well without reading the window, and the benchmark would measure nothing
about reasoning over a host's behaviour. Three probes, each reported for every public split:

* one field (:func:`shortcut_audit`): for every field of the flow and for the host role, the best
  single-field predictor: numeric fields (timestamps, ports, sizes, durations; a missing value sorts below
  every number) by the best single threshold in either direction (in-sample, so optimistic) and by a small
  tree on that field (two-fold cross-validated); categorical fields (addresses, ports, protocol, service,
  state, history, role) by the per-value label rate learned on one half and applied to the other;
* two fields (:func:`pair_audit`): a depth-2 tree over every pair of fields, cross-validated the same way;
* the whole flow (:func:`fit_flow_only`): the GBDT baseline's learner trained on generated train items but
  shown only the flow's own fields; on the *hard* items it must do no better than a calibrated guesser who
  knows only their base rate (:func:`model_figures` reports both).
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


# --------------------------------------------------------------------------------------------------
# Field pairs: depth-2 trees
# --------------------------------------------------------------------------------------------------
def _rate_encoding(train: np.ndarray, y_train: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Each categorical value as its label rate on the training half (smoothed towards the base rate)."""
    prior = float(y_train.mean())
    counts: Counter[Any] = Counter(train.tolist())
    positives: Counter[Any] = Counter(v for v, label in zip(train.tolist(), y_train.tolist(), strict=True) if label)
    return np.array([(positives[v] + prior) / (counts[v] + 1.0) for v in values.tolist()])


def _column(items: Sequence[Item], name: str, kind: str) -> np.ndarray:
    raw = [_value(i, name) for i in items]
    if kind == "numeric":
        return np.array([_MISSING if v is None else float(v) for v in raw])
    return np.array([str(v) for v in raw], dtype=object)


def pair_audit(items: Sequence[Item], reward: Callable[[int, float], float], top: int = 5) -> list[dict[str, Any]]:
    """The best predictors that read two fields: a depth-2 tree over every pair of fields (categorical fields as
    their label rate on the training half), cross-validated on two fixed halves; the ``top`` pairs by mean
    reward (``reward(y, p)``: the environment's scorer on the Bayes answer of ``p``)."""
    y = np.array([1 if i.target["label"] == "Malicious" else 0 for i in items])
    columns = [(n, "numeric") for n in NUMERIC_FIELDS] + [(n, "categorical") for n in CATEGORICAL_FIELDS]
    data = {c: _column(items, *c) for c in columns}
    halves = _folds(len(y))
    rows = []
    for a_index, a in enumerate(columns):
        for b in columns[a_index + 1:]:
            if a[0] == b[0]:
                continue
            p = np.zeros(len(y))
            for train, test in ((halves[0], halves[1]), (halves[1], halves[0])):
                encoded = [data[c] if c[1] == "numeric" else _rate_encoding(data[c][train], y[train], data[c])
                           for c in (a, b)]
                x = np.column_stack(encoded).astype(float)
                tree = DecisionTreeClassifier(max_depth=2, min_samples_leaf=5, random_state=0).fit(x[train], y[train])
                p[test] = tree.predict_proba(x[test])[:, 1]
            auc = float(roc_auc_score(y, p)) if len(set(y.tolist())) == 2 else 0.5
            threshold = float(y.mean())
            rows.append({
                "fields": f"{a[0]} ({a[1][:3]}.) × {b[0]} ({b[1][:3]}.)",
                "balanced_accuracy": round(float(balanced_accuracy_score(y, p > threshold)), 4),
                "auc": round(max(auc, 1.0 - auc), 4),
                "reward": round(float(np.mean([reward(int(t), float(q)) for t, q in zip(y, p, strict=True)])), 4),
            })
    rows.sort(key=lambda r: (-r["reward"], -r["auc"], r["fields"]))
    return rows[:top]


# --------------------------------------------------------------------------------------------------
# A model of the flow's own fields
# --------------------------------------------------------------------------------------------------
_FLOW_NUMERIC = ("ts", "id.orig_p", "id.resp_p", "duration", "orig_bytes", "resp_bytes", "orig_pkts", "resp_pkts")
_FLOW_CATEGORICAL = ("proto", "service", "conn_state", "history")


def _octets(ip: str) -> list[float]:
    parts = ip.split(".")
    return [float(p) for p in parts] if len(parts) == 4 and all(p.isdigit() for p in parts) else [_MISSING] * 4


class FlowOnlyEncoder:
    """The flow's own fields as numbers: numeric fields as they are, addresses as their four octets (so a tree
    can split on subnets, which stand for device roles), the other fields as codes learned on the training
    items. No window, no role: what a model that ignores the window can read."""

    def __init__(self, train: Sequence[Item]) -> None:
        self.codes = {f: {v: k for k, v in enumerate(sorted({str(i.input["flow"][f]) for i in train}))}
                      for f in _FLOW_CATEGORICAL}

    def matrix(self, items: Sequence[Item]) -> np.ndarray:
        rows = []
        for item in items:
            flow = item.input["flow"]
            row = [_MISSING if flow[f] is None else float(flow[f]) for f in _FLOW_NUMERIC]
            row += [float(self.codes[f].get(str(flow[f]), -1)) for f in _FLOW_CATEGORICAL]
            rows.append(row + _octets(flow["id.orig_h"]) + _octets(flow["id.resp_h"]))
        return np.array(rows, dtype=float)


def fit_flow_only(train: Sequence[Item]) -> tuple[FlowOnlyEncoder, Any]:
    """The GBDT baseline's learner and calibration, on the flow's own fields only (one thread)."""
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.ensemble import HistGradientBoostingClassifier
    from threadpoolctl import threadpool_limits

    encoder = FlowOnlyEncoder(train)
    y = np.array([1 if i.target["label"] == "Malicious" else 0 for i in train])
    gbdt = HistGradientBoostingClassifier(max_iter=200, learning_rate=0.1, max_leaf_nodes=31, l2_regularization=1.0,
                                          random_state=0)
    with threadpool_limits(1):
        model = CalibratedClassifierCV(gbdt, method="isotonic", cv=3).fit(encoder.matrix(train), y)
    return encoder, model


def model_figures(p: np.ndarray, y: np.ndarray, reward: Callable[[int, float], float],
                  n_boot: int = 200) -> dict[str, Any]:
    """Mean reward, AUC (with a bootstrap 95% interval) and alarm rate of probabilities ``p`` on labels ``y``,
    beside the best constant answer's reward (what a calibrated guesser who knows only the base rate gets)."""
    rewards = np.array([reward(int(t), float(q)) for t, q in zip(y, p, strict=True)])
    grid = np.round(np.linspace(0.0, 1.0, 101), 2)
    constant = max(float(np.mean([reward(int(t), float(q)) for t in y])) for q in grid)
    both = len(set(y.tolist())) == 2
    auc = _auc(y, p) if both else None
    low = high = None
    if both:
        rng, aucs = np.random.default_rng(_FOLD_SEED), []
        for _ in range(n_boot):
            idx = rng.integers(0, len(y), len(y))
            if len(set(y[idx].tolist())) == 2:
                aucs.append(_auc(y[idx], p[idx]))
        low, high = (round(float(v), 4) for v in np.percentile(aucs, [2.5, 97.5]))
    return {"n": int(len(y)), "base_rate": round(float(y.mean()), 4), "reward": round(float(rewards.mean()), 4),
            "best_constant_reward": round(constant, 4), "auc": None if auc is None else round(auc, 4),
            "auc_low": low, "auc_high": high}


def _auc(y: np.ndarray, p: np.ndarray) -> float:
    """ROC AUC as the Mann-Whitney statistic (ties count half): ``roc_auc_score``'s value, fast enough to
    bootstrap."""
    from scipy.stats import rankdata

    ranks = rankdata(p)
    positives = int(y.sum())
    negatives = len(y) - positives
    return float((ranks[y == 1].sum() - positives * (positives + 1) / 2) / (positives * negatives))
