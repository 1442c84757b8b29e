"""E1's own policies: hand-written analyst rules, and a calibrated GBDT on window features.

With the kit's (``envs/kits/abstaining``) they bracket what a model should do: ``reference`` is the ceiling, the
constants are the floor every honest policy must clear (always-Abstain is the hardest of them to beat on reward),
``heuristic`` is what a few analyst rules achieve, and ``gbdt`` is what a small learned model on window features
achieves. Both read only ``item.input``, never the target or the metadata, and take the Bayes action of the cost
profile the environment is configured with (a required argument, which ``NetworkLogs.baselines`` passes).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from security_verifiers.core.scoring import CostProfile
from security_verifiers.core.types import Item
from security_verifiers.envs.kits.abstaining import BayesBaseline, Labels
from security_verifiers.envs.network_logs.capture import (
    FIELDS,
    PLACEHOLDERS,
    capture,
    coarsened,
    recorded,
    timing_known,
)
from security_verifiers.envs.network_logs.features import UNKNOWN_ROLE, failed, features, service_verdict
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
#: UDP ports of protocols that devices poll or announce on, read where the capture has a service column but left it
#: empty: Zeek has no analyzer for NTP, SSDP, DHCP or NetBIOS, and IoT devices query NTP every few seconds.
#: UDP only, and small requests only (see :func:`_polled_udp`): a TCP port without a recognised protocol is still
#: a sign, and a flood aimed at one of these ports still is one.
_POLLED_UDP_PORTS = frozenset({123, 161, 162, 514, 5353, 1900, 67, 68, 137, 138, 5355, 3702})
#: The largest request (bytes, packets) a polled UDP exchange sends: NTP 48 B, mDNS/SSDP/DHCP a few hundred.
_POLLED_UDP_MAX = (1_500, 4)
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
            w_dst, w_port, w_failed = w["id.resp_h"], w["id.resp_p"], failed(w)
            if w_port == port:
                self.port_n += 1
                self.port_failed += w_failed
                self.port_dsts.add(w_dst)
            if w_dst == dst:
                self.first_contact = min(self.first_contact, k)
                self.same_dst.append(w)
                self.dst_n += 1
                self.dst_failed += w_failed
                self.dst_ports.add(w_port)
                if w_port == port:
                    self.pair.append(w)
                    self.prior_uploads += (w["orig_bytes"] or 0) > 1_000_000
            elif w_failed and w["proto"] == "tcp":
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

    def lookup_before_first_contact(self, flow: dict[str, Any]) -> bool | None:
        """Whether a DNS lookup came before the host first contacted this server; ``None`` (cannot tell) when the
        first contact is the window's first flow: the lookup, if any, came before the window began."""
        if self.first_contact == 0:
            return None
        first = self.window[self.first_contact]["ts"] if self.first_contact < len(self.window) else flow["ts"]
        return self.looked_up(self.first_contact, first)

    def compromise_evidence(self) -> bool:
        """Signs of an infected host beside the flow: probes to several other hosts, small logins to several
        other hosts, an executable-sized download over plain HTTP from an address it never looked up."""
        return len(self.failed_elsewhere) >= 3 or len(self.logins_elsewhere) >= 3 or self.bare_downloads > 0


def _is_dns(flow: dict[str, Any]) -> bool:
    return flow["id.resp_p"] == 53 and flow["proto"] == "udp"


def _bare_http_download(flow: dict[str, Any]) -> bool:
    return (flow["proto"] == "tcp" and not is_internal(flow["id.resp_h"]) and (flow["resp_bytes"] or 0) > 25_000
            and (flow["service"] == "http" or flow["id.resp_p"] in (80, 81, 8080)))


@dataclass(frozen=True)
class Shown:
    """What the prompt shows of an item: the last ``window`` preceding flows, and every field but ``hidden``.

    The baselines read an item through it, so that under a shorter window or the compact prompt they know no more
    than the model they are compared with, and a teacher's answers (which ``sv train`` has a model imitate) depend
    only on what that model can read: a teacher that reads 20 flows while its student sees 3 teaches answers the
    student cannot learn (measured with the tiny model: SFT on the heuristic's full-window answers ended below the
    constant floor, on a GBDT's that saw the student's view above it). The default shows all an item holds (its
    window has at most 20 flows), so the default baselines are unchanged.
    """

    window: int = 20
    hidden: tuple[str, ...] = ()

    def __call__(self, item_input: dict[str, Any]) -> dict[str, Any]:
        window = item_input["window"][-self.window:] if self.window else []
        if len(window) == len(item_input["window"]) and not self.hidden:
            return item_input
        placeholders = {k: PLACEHOLDERS.get(k) for k in self.hidden}  # packet counts have none: unset
        described = capture(item_input)
        unrecorded = sorted({*described["unrecorded"], *self.hidden}, key=FIELDS.index)
        return {**item_input, "flow": {**item_input["flow"], **placeholders},
                "window": [{**w, **placeholders} for w in window],
                "capture": {"ts_resolution": described["ts_resolution"], "unrecorded": unrecorded}}

    def describe(self) -> dict[str, Any]:
        return {"window": self.window, "hidden": list(self.hidden)}


#: Everything (the full prompt and a window of 20 flows: every item's whole input).
SHOWN_ALL = Shown()


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
    timing, service_known = timing_known(item_input), service_verdict(item_input)
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
    if flow["service"] is None and _polled_udp(flow):
        return 0.02
    # A login needs a session: unanswered SYNs to port 22 are a client retrying a dead server (or a probe), not guesses.
    if (tcp and port in _LOGIN_PORTS and len(pair) >= 4 and not failed(flow)
            and (flow["service"] is not None or not service_known)):
        return _login_probability(pair, timing)
    victim = [*seen.same_dst, flow]
    if timing and len(victim) >= 9 and _mean_gap(victim) < 1.0:
        return 0.95  # connections to one host many a second: a flood
    if not timing and len(victim) >= 14 and not _spread_over_ticks(victim, capture(item_input)["ts_resolution"]):
        # No clock: the window filled by one server is a flood only if its connections carry nothing back (small
        # answers, failed attempts); a count alone is also a browser's or updater's parallel downloads from a CDN.
        starved = sum(failed(f) or (f["resp_bytes"] or 0) < _FLOOD_ANSWER_MAX for f in victim)
        return 0.95 if starved >= 0.5 * len(victim) else 0.3
    if tcp and failed(flow):
        if len(seen.failed_elsewhere) >= 3:
            return 0.6
        return 0.04 if len(seen.pair) >= 2 else 0.3
    if len(pair) >= 4 and (flow["orig_bytes"] or 0) < 5_000 and (flow["resp_bytes"] or 0) < 25_000:
        return _series_probability(flow, pair, seen, service_known, role in _AUTOMATION)
    p = _single_flow_probability(flow, seen, service_known)
    # Every rule that clears a flow reads its server port or its window: where the capture records neither
    # (UNSW-NB15's training/testing sets), nothing cleared it, so the analyst abstains rather than says Benign.
    return 0.3 if p < 0.05 and not recorded(item_input, "id.resp_p") and not window else p


def _spread_over_ticks(flows: list[dict[str, Any]], resolution: float | None) -> bool:
    """Whether a coarse clock still shows the flows spread over more than two of its ticks: a device's calls to
    its cloud over ten minutes, not a flood (which fills a window within a tick or two of a minute clock)."""
    stamps = [f["ts"] for f in flows if f.get("ts") is not None]
    return resolution is not None and len(stamps) == len(flows) and max(stamps) - min(stamps) > 2 * resolution


#: The answer (bytes) below which a connection in a clockless window filled by one server counts as a flood's:
#: a refusal, an error page, a stalled request; a content download is tens of kilobytes.
_FLOOD_ANSWER_MAX = 10_000


def _polled_udp(flow: dict[str, Any]) -> bool:
    """A small UDP request to a port that devices poll or announce on (NTP, SNMP, syslog, mDNS, SSDP, DHCP)."""
    return (flow["proto"] == "udp" and flow["id.resp_p"] in _POLLED_UDP_PORTS
            and (flow["orig_bytes"] or 0) <= _POLLED_UDP_MAX[0] and (flow["orig_pkts"] or 0) <= _POLLED_UDP_MAX[1])


def _mean_gap(pair: list[dict[str, Any]]) -> float:
    times = sorted(f["ts"] for f in pair)
    return (times[-1] - times[0]) / (len(times) - 1)


def _cv(values: list[float]) -> float:
    mean = sum(values) / len(values)
    return (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5 / mean if mean > 0 else 0.0


def _dns_probability(pair: list[dict[str, Any]]) -> float:
    """Lookups to the resolver: many long names in a row are a tunnel; ordinary bursts are browsing.

    The lengths are set above what ordinary names reach: Active Directory's service lookups
    (``_ldap._tcp.dc._msdcs.<domain>``) average about 80 bytes a query on real Windows networks, while a
    tunnel fills its names with encoded data (160 bytes and more)."""
    names = sum(f["orig_bytes"] or 0 for f in pair) / len(pair)
    if len(pair) >= 10 and names > 140:
        return 0.9
    return 0.3 if len(pair) >= 6 and names > 100 else 0.02


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
    looked_up = seen.lookup_before_first_contact(flow)  # None: the first contact opens the window, cannot tell
    if ob > 2_000_000 and external:
        if seen.prior_uploads:
            return 0.03
        return 0.85 if seen.internal_reads >= 2 else 0.3
    if _bare_http_download(flow):
        if looked_up:
            return 0.03
        if seen.compromise_evidence():
            return 0.9
        if looked_up is None:
            return 0.3
        return 0.9 if len(seen.pair) >= 1 else 0.6
    if external and flow["proto"] == "tcp" and (flow["resp_bytes"] or 0) > 25_000 and len(seen.pair) >= 2:
        return 0.6 if looked_up is False else 0.03  # repeated downloads from a server never looked up
    if external and seen.compromise_evidence():
        return 0.6 if seen.pair else 0.3
    if external and service_known and flow["service"] is None and flow["id.resp_p"] not in _WEB_PORTS:
        return 0.3
    return 0.02


class _ShownBaseline(BayesBaseline):
    """A Bayes-action baseline that reads each item as the prompt shows it (:class:`Shown`)."""

    def __init__(self, costs: CostProfile, labels: Labels, shown: Shown = SHOWN_ALL) -> None:
        super().__init__(costs, labels)
        self.shown = shown

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), **({"shown": self.shown.describe()} if self.shown != SHOWN_ALL else {})}


class HeuristicBaseline(_ShownBaseline):
    """Hand-written analyst rules (:func:`heuristic_probability`) and the Bayes action of the configured costs."""

    name = "heuristic"

    def probabilities(self, items: list[Item]) -> list[float]:
        return [heuristic_probability(self.shown(item.input)) for item in items]


# --------------------------------------------------------------------------------------------------
# GBDT
# --------------------------------------------------------------------------------------------------
#: Fitted models by (train size, train seed, view): trained once per process, never written to disk.
_FITTED: dict[tuple[int, int, Shown], Any] = {}


def _unnamed(view: dict[str, Any]) -> dict[str, Any]:
    """The view with the host's role as the real readers write it: CIC-IDS-2017 and UNSW-NB15 name no roles."""
    return {**view, "host": {**view["host"], "role": UNKNOWN_ROLE}}


def _cic_state(f: dict[str, Any]) -> dict[str, Any]:
    missed_fin = f["conn_state"] == "SF" and ((f["duration"] or 0) > 120 or f["id.orig_p"] % 2 == 1)
    return {**f, "conn_state": "S1"} if missed_fin else f


def cicflowmeter_view(item_input: dict[str, Any]) -> dict[str, Any]:
    """The item as CIC-IDS-2017's CSVs would have recorded it: timestamps in minutes, no service, no history,
    and the state a reader can infer from CICFlowMeter's flag counts. A connection it timed out (after 120 s)
    or whose FIN it did not count (it misses many: Engelen et al., 2021; half of them here, by the parity of
    the source port) reads as still open (S1)."""
    view = coarsened(item_input, 60.0, ("service", "history"))
    return _unnamed({**view, "flow": _cic_state(view["flow"]), "window": [_cic_state(w) for w in view["window"]]})


def machinelearningcve_view(item_input: dict[str, Any]) -> dict[str, Any]:
    """The item as CIC-IDS-2017's ``MachineLearningCVE`` CSVs record it: CICFlowMeter's flows with the destination
    port only (no timestamps, no addresses, so no window either)."""
    view = coarsened(item_input, None, ("id.orig_h", "id.orig_p", "id.resp_h", "service", "history"))
    return _unnamed({**view, "flow": _cic_state(view["flow"]), "window": []})


#: The services Argus's port table names (UNSW-NB15 writes ``-`` for every other protocol).
ARGUS_SERVICES = frozenset({"dns", "http", "ftp", "ftp-data", "smtp", "ssh", "pop3", "snmp", "ssl", "dhcp", "irc",
                            "radius"})
#: Argus's states as the UNSW-NB15 reader writes them back in Zeek's (``loaders._unsw_state``): closed (SF),
#: connected (S1), requested or interrupted (S0), reset (RSTO), ICMP (OTH).
_ARGUS_STATES = {"SF": "SF", "S0": "S0", "S1": "S1", "S2": "S1", "S3": "S1", "REJ": "RSTO", "RSTO": "RSTO",
                 "RSTR": "RSTO", "RSTOS0": "RSTO", "RSTRH": "RSTO", "SH": "S0", "SHR": "S0", "OTH": "S1"}
#: The IP and transport header bytes a packet adds to Argus's byte counts (Zeek counts payload only).
_HEADER_BYTES = {"tcp": 40, "udp": 28, "icmp": 28}


def _argus_flow(f: dict[str, Any]) -> dict[str, Any]:
    proto, header = f["proto"], _HEADER_BYTES.get(f["proto"], 28)
    state = "OTH" if proto == "icmp" else ("SF" if proto == "udp" and f["conn_state"] == "SF"
                                             else _ARGUS_STATES.get(f["conn_state"], "S1"))
    return {**f, "service": f["service"] if f["service"] in ARGUS_SERVICES else None, "conn_state": state,
            "orig_bytes": (f["orig_bytes"] or 0) + header * (f["orig_pkts"] or 0),
            "resp_bytes": (f["resp_bytes"] or 0) + header * (f["resp_pkts"] or 0)}


def argus_view(item_input: dict[str, Any]) -> dict[str, Any]:
    """The item as raw UNSW-NB15 (Argus) records it: timestamps in whole seconds, no history, Argus's service
    names (``-`` for the rest), its states and its byte counts (with headers)."""
    view = coarsened(item_input, 1.0, ("history",))
    return _unnamed({**view, "flow": _argus_flow(view["flow"]), "window": [_argus_flow(w) for w in view["window"]]})


def unsw_set_view(item_input: dict[str, Any]) -> dict[str, Any]:
    """The item as UNSW-NB15's training/testing-set CSVs record it: Argus's flow with no timestamps, addresses
    or ports (so no window either)."""
    view = coarsened(item_input, None, ("id.orig_h", "id.orig_p", "id.resp_h", "id.resp_p", "history"))
    return _unnamed({**view, "flow": _argus_flow(view["flow"]), "window": []})


#: How training items are also shown as real captures record them (half of the items, each in one of them in
#: turn), so that the model has seen NaN where each layout users import has no value (no clock, no service, no
#: addresses, no window) and their ways of writing states and sizes. Half, not more: the items as Zeek logs them
#: stay the majority, or the model's reading of full Zeek windows (the public splits) loses to the views'.
CAPTURE_VIEWS: tuple[Callable[[dict[str, Any]], dict[str, Any]], ...] = (
    cicflowmeter_view, argus_view, unsw_set_view, machinelearningcve_view)


def training_matrix(items: list[Item], shown: Shown = SHOWN_ALL) -> tuple[Any, Any]:
    """Features and labels of the training items, with every other one also as one real capture shows it, each as
    the prompt shows it (``shown``)."""
    import numpy as np

    rows, labels = [], []
    for k, item in enumerate(items):
        y = 1 if item.target["label"] == "Malicious" else 0
        views = [item.input]
        if k % 2 == 0:
            views.append(CAPTURE_VIEWS[k // 2 % len(CAPTURE_VIEWS)](item.input))
        for view in views:
            rows.append(features(shown(view)))
            labels.append(y)
    return np.array(rows, dtype=float), np.array(labels)


def _fit(train_size: int, train_seed: int, shown: Shown = SHOWN_ALL) -> Any:
    """Gradient boosting on the window features, calibrated by isotonic regression over 3 folds.

    scikit-learn is imported here, not at module level, so that the other baselines (the heuristic
    runs in the throughput benchmark) never pay for importing it. One thread: the machines this runs on
    are small and shared, and sklearn's threads would fight for their cores.
    """
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.ensemble import HistGradientBoostingClassifier
    from threadpoolctl import threadpool_limits

    x, y = training_matrix(generate("train", train_size, seed=train_seed), shown)
    gbdt = HistGradientBoostingClassifier(max_iter=200, learning_rate=0.1, max_leaf_nodes=31,
                                          l2_regularization=1.0, random_state=0)
    with threadpool_limits(1):
        return CalibratedClassifierCV(gbdt, method="isotonic", cv=3).fit(x, y)


class GBDTBaseline(_ShownBaseline):
    """Calibrated ``HistGradientBoostingClassifier`` models on :func:`features`, each trained on its own generated
    items, averaged; and the Bayes action of the configured costs.

    Several models, not one: what one model says on traffic unlike its training items (real captures, the OOD
    families) depends on the luck of its training seed. Measured on real benign flows over training seeds 0-4,
    one model's false alarms ranged 66-85% (CIC-IDS-2017) and 25-47% (UNSW-NB15), its UNSW detection 18-62%; the
    average of the five is a property of the generator and the method, not of a seed.
    """

    name = "gbdt"
    train_size: ClassVar[int] = 4000
    train_seeds: ClassVar[tuple[int, ...]] = (0, 1, 2, 3, 4)

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "train_size": self.train_size, "train_seeds": list(self.train_seeds)}

    def models(self) -> list[Any]:
        keys = [(self.train_size, seed, self.shown) for seed in self.train_seeds]
        for key in keys:
            if key not in _FITTED:
                _FITTED[key] = _fit(*key)
        return [_FITTED[key] for key in keys]

    def probabilities(self, items: list[Item]) -> list[float]:
        import numpy as np
        from threadpoolctl import threadpool_limits

        if not items:
            return []
        x = np.array([features(self.shown(i.input)) for i in items], dtype=float)
        with threadpool_limits(1):
            p = np.mean([model.predict_proba(x)[:, 1] for model in self.models()], axis=0)
        return [float(v) for v in p]
