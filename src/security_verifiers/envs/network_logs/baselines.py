"""E1's own policies: hand-written analyst rules, and a calibrated GBDT on window features.

With the kit's (``envs/kits/abstaining``) they bracket what a model should do: ``reference`` is the ceiling, the
constants are the floor every honest policy must clear (always-Abstain is the hardest of them to beat on reward),
``heuristic`` is what a few analyst rules achieve, and ``gbdt`` is what a small learned model on window features
achieves. Both read only ``item.input``, never the target or the metadata, and take the Bayes action of the cost
profile the environment is configured with (a required argument, which ``NetworkLogs.baselines`` passes).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from security_verifiers.core.types import Item
from security_verifiers.envs.kits.abstaining import BayesBaseline
from security_verifiers.envs.network_logs.capture import capture, coarsened, recorded, timing_known
from security_verifiers.envs.network_logs.features import FAILED_STATES, features
from security_verifiers.envs.network_logs.generator import generate
from security_verifiers.envs.network_logs.sites import is_internal

# --------------------------------------------------------------------------------------------------
# Heuristic
# --------------------------------------------------------------------------------------------------
#: The one role whose job is sweeping the network, and the automation roles that log in to many hosts.
_SCANNER = "monitoring_server"
_AUTOMATION = frozenset({"monitoring_server", "ci_runner", "backup_server"})
_LOGIN_PORTS = frozenset({22, 23, 2323})
#: Services whose clients legitimately poll one server many times a minute.
_POLLED = frozenset({"postgresql", "mysql", "syslog", "snmp", "modbus", "dnp3_tcp", "ntp", "sip", "mqtt", "smb"})
#: Their ports, read where the capture records no service.
_POLLED_PORTS = frozenset({5432, 3306, 514, 161, 502, 20000, 123, 5060, 1883, 445})
_WEB_PORTS = frozenset({80, 443, 8080, 8443, 8883, 5223})


class _Window:
    """What one pass over the window tells about the flow to classify."""

    def __init__(self, flow: dict[str, Any], window: list[dict[str, Any]], resolution: float | None) -> None:
        dst, port = flow["id.resp_h"], flow["id.resp_p"]
        self.window, self.resolution = window, resolution
        self.port_dsts, self.dst_ports = {dst}, {port}
        self.pair: list[dict[str, Any]] = []
        self.same_dst: list[dict[str, Any]] = []
        self.first_contact = len(window)  # where the host's run of connections to this server began
        self.port_n = self.port_failed = self.dst_n = self.dst_failed = 0
        self.failed_elsewhere: set[str] = set()
        self.logins_elsewhere: set[str] = set()
        self.internal_reads = self.prior_uploads = self.bare_downloads = 0
        for k, w in enumerate(window):
            w_dst, w_port, failed = w["id.resp_h"], w["id.resp_p"], w["conn_state"] in FAILED_STATES
            if w_port == port:
                self.port_n += 1
                self.port_failed += failed
                self.port_dsts.add(w_dst)
            if w_dst == dst:
                self.first_contact = min(self.first_contact, k)
                self.same_dst.append(w)
                self.dst_n += 1
                self.dst_failed += failed
                self.dst_ports.add(w_port)
                if w_port == port:
                    self.pair.append(w)
                    self.prior_uploads += (w["orig_bytes"] or 0) > 1_000_000
            elif failed and w["proto"] == "tcp":
                self.failed_elsewhere.add(w_dst)
            elif w_port in _LOGIN_PORTS and (w["orig_bytes"] or 0) < 400:
                self.logins_elsewhere.add(w_dst)
            if (w["resp_bytes"] or 0) > 1_000_000 and is_internal(w_dst):
                self.internal_reads += 1
            elif w_dst != dst and _bare_http_download(w) and not self.looked_up(k, w["ts"]):
                self.bare_downloads += 1

    def looked_up(self, position: int, ts: float | None) -> bool:
        """Whether a DNS lookup came just before the flow at ``position`` (``len(window)``: the flow to classify):
        within a second where the clock shows it, within one tick of a coarser clock (all it can say), or
        right before it in the capture's order where there is no clock."""
        if ts is None or self.resolution is None:
            return position > 0 and _is_dns(self.window[position - 1])
        slack = max(1.0, self.resolution)
        for w in reversed(self.window[:position]):
            if ts - w["ts"] > slack:
                return False
            if _is_dns(w):
                return True
        return False

    def compromise_evidence(self) -> bool:
        """Signs of an infected host beside the flow: probes to several other hosts, small logins to several
        other hosts, an executable-sized download over plain HTTP from an address it never looked up."""
        return len(self.failed_elsewhere) >= 3 or len(self.logins_elsewhere) >= 3 or self.bare_downloads > 0


def _is_dns(flow: dict[str, Any]) -> bool:
    return flow["id.resp_p"] == 53 and flow["proto"] == "udp"


def _bare_http_download(flow: dict[str, Any]) -> bool:
    return (flow["proto"] == "tcp" and not is_internal(flow["id.resp_h"]) and (flow["resp_bytes"] or 0) > 25_000
            and (flow["service"] == "http" or flow["id.resp_p"] in (80, 81, 8080)))


def heuristic_probability(item_input: dict[str, Any]) -> float:
    """A probability of attack from a handful of analyst rules over one pass of the window.

    The rules are the textbook ones (many hosts on one port failing = horizontal scan, many failing ports on
    one host = vertical scan, repeated small logins = brute force, a window filled by one service = flood,
    long DNS names in bulk = tunnel, a heartbeat beside signs of infection = C&C, a big upload after internal
    reads = exfiltration, a download from an address never looked up = dropper). The analyst is conservative:
    what the rules cannot clear gets a middle probability, so that the Bayes action abstains instead of
    risking a missed attack; and reads no interval off a clock that cannot show it (a capture whose
    timestamps count minutes shows a page load's connections as simultaneous).
    """
    flow, window, role = item_input["flow"], item_input["window"], item_input["host"]["role"]
    timing, service_known = timing_known(item_input), recorded(item_input, "service")
    seen = _Window(flow, window, capture(item_input)["ts_resolution"])
    tcp = flow["proto"] == "tcp"
    if tcp and ((len(seen.port_dsts) >= 8 and seen.port_failed >= 0.3 * seen.port_n) or (
            len(seen.dst_ports) >= 8 and seen.dst_failed >= 0.5 * seen.dst_n)):
        return 0.04 if role == _SCANNER else 0.97
    port, pair = flow["id.resp_p"], [*seen.pair, flow]
    if port == 53 and flow["proto"] == "udp":
        return _dns_probability(pair)
    if flow["service"] in _POLLED or (not service_known and port in _POLLED_PORTS):
        return 0.02
    if tcp and port in _LOGIN_PORTS and len(pair) >= 4 and (flow["service"] is not None or not service_known):
        return _login_probability(pair, timing)
    victim = [*seen.same_dst, flow]
    if (timing and len(victim) >= 9 and _mean_gap(victim) < 1.0) or (not timing and len(victim) >= 14):
        return 0.95  # connections to one host many a second, or (no clock) filling the window: a flood
    if tcp and flow["conn_state"] in FAILED_STATES:
        if len(seen.failed_elsewhere) >= 3:
            return 0.6
        return 0.04 if len(seen.pair) >= 2 else 0.3
    if len(pair) >= 4 and (flow["orig_bytes"] or 0) < 5_000 and (flow["resp_bytes"] or 0) < 25_000:
        return _series_probability(flow, pair, seen, service_known, role in _AUTOMATION)
    return _single_flow_probability(flow, seen, service_known)


def _mean_gap(pair: list[dict[str, Any]]) -> float:
    times = sorted(f["ts"] for f in pair)
    return (times[-1] - times[0]) / (len(times) - 1)


def _cv(values: list[float]) -> float:
    mean = sum(values) / len(values)
    return (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5 / mean if mean > 0 else 0.0


def _dns_probability(pair: list[dict[str, Any]]) -> float:
    """Lookups to the resolver: many long names in a row are a tunnel; ordinary bursts are browsing."""
    names = sum(f["orig_bytes"] or 0 for f in pair) / len(pair)
    if len(pair) >= 10 and names > 100:
        return 0.9
    return 0.3 if len(pair) >= 6 and names > 80 else 0.02


def _login_probability(pair: list[dict[str, Any]], timing: bool) -> float:
    """Repeated logins to one server: a scheduled job runs like clockwork with real work in each session;
    a guesser's sessions are small (a banner, a guess, a refusal), one after another."""
    if timing:
        times = sorted(f["ts"] for f in pair)
        if _cv([b - a for a, b in zip(times, times[1:], strict=False)]) < 0.05:
            return 0.05
    sent = sum(f["orig_bytes"] or 0 for f in pair) / len(pair)
    small = sent < (2_800 if pair[-1]["id.resp_p"] == 22 else 400)
    if small:
        return 0.93 if len(pair) >= 6 else 0.3
    return 0.1


def _series_probability(flow: dict[str, Any], pair: list[dict[str, Any]], seen: _Window, service_known: bool,
                        automation: bool) -> float:
    """Repeated small requests to one Internet server: a heartbeat. Devices and updaters send fixed-size
    heartbeats too, so regularity alone proves nothing: it takes signs of infection beside it, or a protocol
    no analyzer recognised on a port no client software uses."""
    if is_internal(flow["id.resp_h"]):
        return 0.02
    if seen.compromise_evidence():
        return 0.1 if automation else 0.92
    if service_known and flow["service"] is None and flow["id.resp_p"] not in _WEB_PORTS:
        return 0.85
    sizes = [f["orig_bytes"] or 0 for f in pair]
    return 0.3 if max(sizes) - min(sizes) <= 32 else 0.04


def _single_flow_probability(flow: dict[str, Any], seen: _Window, service_known: bool) -> float:
    """Rules about the flow itself, given a little context (a lookup before the host first contacted this
    server, reads before an upload, signs of infection)."""
    external = not is_internal(flow["id.resp_h"])
    ob = flow["orig_bytes"] or 0
    first = seen.window[seen.first_contact]["ts"] if seen.first_contact < len(seen.window) else flow["ts"]
    looked_up = seen.looked_up(seen.first_contact, first)  # before the host first contacted this server
    if ob > 2_000_000 and external:
        if seen.prior_uploads:
            return 0.03
        return 0.85 if seen.internal_reads >= 2 else 0.3
    if _bare_http_download(flow):
        if looked_up:
            return 0.03
        return 0.9 if len(seen.pair) >= 1 or seen.compromise_evidence() else 0.6
    if external and flow["proto"] == "tcp" and (flow["resp_bytes"] or 0) > 25_000 and len(seen.pair) >= 2:
        return 0.03 if looked_up else 0.6  # repeated downloads from a server never looked up
    if external and seen.compromise_evidence():
        return 0.6 if seen.pair else 0.3
    if external and service_known and flow["service"] is None and flow["id.resp_p"] not in _WEB_PORTS:
        return 0.3
    return 0.02


class HeuristicBaseline(BayesBaseline):
    """Hand-written analyst rules (:func:`heuristic_probability`) and the Bayes action of the configured costs."""

    name = "heuristic"

    def probabilities(self, items: list[Item]) -> list[float]:
        return [heuristic_probability(item.input) for item in items]


# --------------------------------------------------------------------------------------------------
# GBDT
# --------------------------------------------------------------------------------------------------
#: Fitted models by (train size, train seed): trained once per process, never written to disk.
_FITTED: dict[tuple[int, int], Any] = {}
def cicflowmeter_view(item_input: dict[str, Any]) -> dict[str, Any]:
    """The item as CIC-IDS-2017's CSVs would have recorded it: timestamps in minutes, no service, no history,
    and the state a reader can infer from CICFlowMeter's flag counts. A connection it timed out (after 120 s)
    or whose FIN it did not count (it misses many: Engelen et al., 2021; half of them here, by the parity of
    the source port) reads as still open (S1)."""
    view = coarsened(item_input, 60.0, ("service", "history"))

    def state(f: dict[str, Any]) -> dict[str, Any]:
        missed_fin = f["conn_state"] == "SF" and ((f["duration"] or 0) > 120 or f["id.orig_p"] % 2 == 1)
        return {**f, "conn_state": "S1"} if missed_fin else f

    return {**view, "flow": state(view["flow"]), "window": [state(w) for w in view["window"]]}


def argus_view(item_input: dict[str, Any]) -> dict[str, Any]:
    """The item as raw UNSW-NB15 (Argus) records it: timestamps in whole seconds, no history."""
    return coarsened(item_input, 1.0, ("history",))


#: How training items are also shown as real captures record them (every third item each), so that the model
#: has seen NaN where those captures have no value and their ways of writing states.
CAPTURE_VIEWS: tuple[Callable[[dict[str, Any]], dict[str, Any]], ...] = (cicflowmeter_view, argus_view)


def training_matrix(items: list[Item]) -> tuple[Any, Any]:
    """Features and labels of the training items, with every third one also as each real capture shows it."""
    import numpy as np

    rows, labels = [], []
    for k, item in enumerate(items):
        y = 1 if item.target["label"] == "Malicious" else 0
        views = [item.input]
        if k % 3 < len(CAPTURE_VIEWS):
            views.append(CAPTURE_VIEWS[k % 3](item.input))
        for view in views:
            rows.append(features(view))
            labels.append(y)
    return np.array(rows, dtype=float), np.array(labels)


def _fit(train_size: int, train_seed: int) -> Any:
    """Gradient boosting on the window features, calibrated by isotonic regression over 3 folds.

    scikit-learn is imported here, not at module level, so that the other baselines (the heuristic
    runs in the throughput benchmark) never pay for importing it. One thread: the machines this runs on
    are small and shared, and sklearn's threads would fight for their cores.
    """
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.ensemble import HistGradientBoostingClassifier
    from threadpoolctl import threadpool_limits

    x, y = training_matrix(generate("train", train_size, seed=train_seed))
    gbdt = HistGradientBoostingClassifier(max_iter=200, learning_rate=0.1, max_leaf_nodes=31,
                                          l2_regularization=1.0, random_state=0)
    with threadpool_limits(1):
        return CalibratedClassifierCV(gbdt, method="isotonic", cv=3).fit(x, y)


class GBDTBaseline(BayesBaseline):
    """A calibrated ``HistGradientBoostingClassifier`` on :func:`features`, trained on generated items, and the
    Bayes action of the configured costs."""

    name = "gbdt"
    train_size: ClassVar[int] = 4000
    train_seed: ClassVar[int] = 0

    def describe(self) -> dict[str, Any]:
        return {"kind": "baseline", "name": self.name, "train_size": self.train_size,
                "train_seed": self.train_seed, "costs": self.costs.model_dump()}

    def model(self) -> Any:
        key = (self.train_size, self.train_seed)
        if key not in _FITTED:
            _FITTED[key] = _fit(*key)
        return _FITTED[key]

    def probabilities(self, items: list[Item]) -> list[float]:
        import numpy as np
        from threadpoolctl import threadpool_limits

        if not items:
            return []
        x = np.array([features(i.input) for i in items], dtype=float)
        with threadpool_limits(1):
            return [float(p) for p in self.model().predict_proba(x)[:, 1]]
