"""Built-in E1 policies: the truth, constants, hand-written rules, and a calibrated GBDT on features.

They bracket what a model should do: ``reference`` is the ceiling, the constants are the floor every
honest policy must clear (always-Abstain is the hardest of them to beat on reward), ``heuristic`` is
what a few analyst rules achieve, and ``gbdt`` is what a small learned model on window features achieves.
All but ``reference`` read only ``item.input``, never the target or the metadata.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from security_verifiers.core.scoring import CostProfile
from security_verifiers.core.types import Item, Message
from security_verifiers.envs.network_logs.features import FAILED_STATES, features
from security_verifiers.envs.network_logs.generator import generate, is_internal
from security_verifiers.models.base import Baseline

_COSTS = CostProfile()
_ACTION_LABEL = {"positive": "Malicious", "negative": "Benign", "abstain": "Abstain"}


def bayes_answer(p: float) -> str:
    """The answer text for probability ``p``: the cost profile's Bayes action and ``p`` itself."""
    return json.dumps({"label": _ACTION_LABEL[_COSTS.bayes_action(p)], "p_malicious": round(p, 4)})


class ReferenceBaseline(Baseline):
    """The ground truth with certainty: the reward ceiling (1.0 on every item)."""

    name = "reference"

    def answer(self, item: Item, messages: list[Message]) -> str:
        malicious = item.target["label"] == "Malicious"
        return json.dumps({"label": item.target["label"], "p_malicious": 1.0 if malicious else 0.0})


class ConstantBaseline(Baseline):
    """The same label on every item, with the probability that label implies."""

    _P = {"Malicious": 1.0, "Benign": 0.0, "Abstain": 0.5}

    def __init__(self, label: str) -> None:
        if label not in self._P:
            raise ValueError(f"label must be one of {', '.join(self._P)}, got {label!r}")
        self.label = label
        self.name = f"always-{label.lower()}"
        self._text = json.dumps({"label": label, "p_malicious": self._P[label]})

    def describe(self) -> dict[str, Any]:
        return {"kind": "baseline", "name": self.name, "label": self.label}

    def answer(self, item: Item, messages: list[Message]) -> str:
        return self._text


# --------------------------------------------------------------------------------------------------
# Heuristic
# --------------------------------------------------------------------------------------------------
#: The one role whose job is sweeping the network, and the automation roles that log in to many hosts.
_SCANNER = "monitoring_server"
_AUTOMATION = frozenset({"monitoring_server", "ci_runner", "backup_server"})
_DB_PORTS = frozenset({3306, 5432, 1433})
_LOGIN_PORTS = frozenset({22, 23, 2323})


def heuristic_probability(item_input: dict[str, Any]) -> float:
    """A probability of attack from a handful of analyst rules over one pass of the window.

    The rules are the textbook ones (many hosts on one port failing = horizontal scan, many ports on
    one host = vertical scan, repeated small logins = brute force, a burst to one service = flood, a
    clockwork series = beacon, a big upload after internal reads = exfiltration, a download from a
    bare IP = dropper). The analyst is conservative: whatever the rules cannot clear gets a middle
    probability, so that the Bayes action abstains instead of risking a missed attack.
    """
    flow, window, role = item_input["flow"], item_input["window"], item_input["host"]["role"]
    dst, port, ts = flow["id.resp_h"], flow["id.resp_p"], flow["ts"]
    port_dsts, dst_ports, pair_times = {dst}, {port}, [ts]
    port_failed = port_n = logins = 0
    last_dns = internal_reads = prior_uploads = 0.0
    for w in window:
        w_port, w_dst = w["id.resp_p"], w["id.resp_h"]
        if w_port == port:
            port_n += 1
            port_dsts.add(w_dst)
            failed = w["conn_state"] in FAILED_STATES
            port_failed += failed
            logins += not failed and (w["orig_bytes"] or 0) < 10_000
        if w_dst == dst:
            dst_ports.add(w_port)
            if w_port == port:
                pair_times.append(w["ts"])
                prior_uploads += (w["orig_bytes"] or 0) > 1_000_000
        if w_port == 53:
            last_dns = w["ts"]
        elif (w["resp_bytes"] or 0) > 1_000_000 and is_internal(w_dst):
            internal_reads += 1
    if (len(port_dsts) >= 8 and port_failed >= 0.4 * port_n) or len(dst_ports) >= 8:
        return 0.04 if role == _SCANNER else 0.97
    automation = role in _AUTOMATION
    if port in _LOGIN_PORTS and logins >= 2 and not automation:
        return 0.9 if logins >= 4 else 0.3
    series = _series_probability(flow, pair_times, automation)
    if series is not None:
        return series
    return _single_flow_probability(flow, ts - last_dns, internal_reads, prior_uploads, len(pair_times))


def _series_probability(flow: dict[str, Any], pair_times: list[float], automation: bool) -> float | None:
    """Repeated connections to this one service: a burst (brute force, flood) or a beacon."""
    if len(pair_times) < 4:
        return None
    times = sorted(pair_times)
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    mean = sum(gaps) / len(gaps)
    if flow["id.resp_p"] in _DB_PORTS or flow["service"] in ("syslog", "snmp", "modbus"):
        return 0.02
    if mean < 5.0 and len(pair_times) >= 10:
        return 0.95
    spread = (sum((g - mean) ** 2 for g in gaps) / len(gaps)) ** 0.5 / mean if mean > 0 else 0.0
    small = (flow["orig_bytes"] or 0) < 5_000
    if spread < 0.05 and small:
        return 0.1 if automation else 0.85
    return 0.3 if small and not is_internal(flow["id.resp_h"]) else None


def _single_flow_probability(flow: dict[str, Any], since_dns: float, internal_reads: float,
                             prior_uploads: float, pair_n: int) -> float:
    """Rules about the flow itself, given a little context (DNS before it, reads before an upload)."""
    external = not is_internal(flow["id.resp_h"])
    ob, rb = flow["orig_bytes"] or 0, flow["resp_bytes"] or 0
    if ob > 2_000_000 and external:
        return 0.03 if prior_uploads else (0.8 if internal_reads >= 2 else 0.3)
    if rb > 25_000 and external:
        if since_dns > 5.0:
            return 0.9 if pair_n >= 2 else 0.6
        return 0.1 if flow["service"] == "http" else 0.02
    if flow["conn_state"] in FAILED_STATES and flow["proto"] == "tcp":
        return 0.04 if pair_n >= 3 else 0.3
    if external and flow["service"] is None:
        return 0.3
    return 0.02


class HeuristicBaseline(Baseline):
    """Hand-written analyst rules (:func:`heuristic_probability`) and the Bayes action."""

    name = "heuristic"

    def answer(self, item: Item, messages: list[Message]) -> str:
        return bayes_answer(heuristic_probability(item.input))


# --------------------------------------------------------------------------------------------------
# GBDT
# --------------------------------------------------------------------------------------------------
#: Fitted models by (train size, train seed): trained once per process, never written to disk.
_FITTED: dict[tuple[int, int], Any] = {}


def _fit(train_size: int, train_seed: int) -> Any:
    """Gradient boosting on the window features, calibrated by isotonic regression over 3 folds.

    scikit-learn is imported here, not at module level, so that the other baselines (the heuristic
    runs in the throughput benchmark) never pay for importing it.
    """
    import numpy as np
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.ensemble import HistGradientBoostingClassifier

    items = generate("train", train_size, seed=train_seed)
    x = np.array([features(i.input) for i in items])
    y = np.array([1 if i.target["label"] == "Malicious" else 0 for i in items])
    gbdt = HistGradientBoostingClassifier(max_iter=250, learning_rate=0.08, max_leaf_nodes=31,
                                          l2_regularization=1.0, random_state=0)
    return CalibratedClassifierCV(gbdt, method="isotonic", cv=3).fit(x, y)


class GBDTBaseline(Baseline):
    """A calibrated ``HistGradientBoostingClassifier`` on :func:`features`, trained on generated items."""

    name = "gbdt"
    train_size: ClassVar[int] = 4000
    train_seed: ClassVar[int] = 0

    def __init__(self) -> None:
        self._p: dict[str, float] = {}

    def describe(self) -> dict[str, Any]:
        return {"kind": "baseline", "name": self.name, "train_size": self.train_size,
                "train_seed": self.train_seed}

    def model(self) -> Any:
        key = (self.train_size, self.train_seed)
        if key not in _FITTED:
            _FITTED[key] = _fit(*key)
        return _FITTED[key]

    def probabilities(self, items: list[Item]) -> list[float]:
        import numpy as np

        if not items:
            return []
        x = np.array([features(i.input) for i in items])
        return [float(p) for p in self.model().predict_proba(x)[:, 1]]

    def prepare(self, items: list[Item]) -> None:
        """Predict every item in one batch (much faster than one call per item)."""
        self._p.update(zip((i.id for i in items), self.probabilities(items), strict=True))

    def answer(self, item: Item, messages: list[Message]) -> str:
        p = self._p.get(item.id)
        if p is None:
            p = self.probabilities([item])[0]
        return bayes_answer(p)
