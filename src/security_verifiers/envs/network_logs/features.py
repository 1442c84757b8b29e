"""Numeric features of one item's input (the flow, its host's role and the preceding window).

They encode what an analyst reads off a Zeek log: how many hosts and ports the host touched, how
many of its attempts failed, whether its connections to this server come at a regular interval with
a fixed size, whether a DNS lookup preceded the connection, how much it read internally before a
large upload. Used by the GBDT baseline; only ``item.input`` is read, never the target.

What the capture cannot tell is NaN, never a made-up number (the GBDT learns where NaN goes): the intervals
between connections when the timestamps are coarser than :data:`capture.FINE_TIMING_S` (CIC-IDS-2017's are
minutes: its flows of one minute would all look simultaneous), the service and the history letters when the
capture does not record them, the server's address and port where the capture lists them as unrecorded (the
ML-ready CSVs write 0 and ``unknown`` there), the whole window where the capture has no originator addresses
to group flows by host (an empty window there says nothing about the host's history), the host's role where the
loader could not name it, and the absence of a service where the capture's classifier is Argus's port table
(UNSW-NB15: ``-`` is "not classified", not "no protocol"). ``-1`` means "does not apply" (no earlier flow to
this server, say).
"""

from __future__ import annotations

import math
import statistics
from typing import Any

from security_verifiers.envs.network_logs.capture import recorded, timing_known
from security_verifiers.envs.network_logs.sites import is_internal

#: Zeek states of a connection attempt that never carried a conversation (S0 only for TCP: see :func:`failed`).
FAILED_STATES = frozenset({"S0", "REJ", "RSTOS0", "RSTRH", "SH", "SHR"})
_RESET_STATES = frozenset({"RSTO", "RSTR"})
_STANDARD_PORTS = frozenset({22, 25, 53, 80, 88, 123, 135, 161, 389, 443, 445, 514, 587, 993, 1883, 3306,
                             5060, 5353, 1900, 5432, 8883, 9100, 873, 5000, 102, 502, 4840, 20000, 3389, 8530,
                             554, 44818})
#: Roles whose job involves touching many hosts (scanning, polling, pulling, deploying).
SCANNER_ROLES = frozenset({"monitoring_server", "ci_runner", "backup_server", "engineering_workstation",
                           "scada_server", "historian"})
#: ``iot_device`` is the role the IoT-23 reader gives every host (its captures are of lab IoT devices).
EMBEDDED_ROLES = frozenset({"iot_camera", "iot_thermostat", "smart_plug", "smart_tv", "iot_hub", "printer",
                            "voip_phone", "plc", "rtu", "ip_camera", "iot_device"})
SERVER_ROLES = frozenset({"web_server", "db_server", "file_server", "historian", "scada_server"})
_NO_VALUE = -1.0
_UNKNOWN = math.nan

FEATURE_NAMES: tuple[str, ...] = (
    # the flow itself
    "proto_tcp", "proto_udp", "proto_icmp", "resp_port", "resp_port_standard", "service_known",
    "dst_internal", "duration", "log_orig_bytes", "log_resp_bytes", "log_orig_pkts", "log_resp_pkts",
    "state_failed", "state_rej", "state_reset", "state_sf", "orig_byte_share", "server_spoke_first",
    # the host
    "role_embedded", "role_server", "role_scanner",
    # the window as a whole
    "win_n", "win_log_span", "win_log_rate", "log_gap_prev", "win_distinct_dst", "win_distinct_port",
    "win_failed_frac", "win_external_frac", "win_max_log_orig_bytes", "win_log_external_orig_bytes",
    "win_log_internal_resp_bytes", "win_dns_frac", "win_dns_mean_orig_bytes", "win_long_quiet_frac",
    # the window relative to this flow
    "same_dst", "same_port", "same_dst_port", "distinct_dst_on_port", "distinct_port_on_dst",
    "same_port_failed_frac", "same_dst_failed_frac", "pair_interval_cv", "pair_log_interval",
    "pair_orig_bytes_cv", "pair_mean_log_orig_bytes", "dst_new", "dns_within_2s", "log_since_dns",
    "same_port_distinct_internal_dst", "pair_resp_bytes_cv", "prev_dns",
    # what else the host did: probes to other hosts, a download from another Internet host
    "other_failed_dsts", "other_external_max_log_resp",
)
#: The features read off the intervals between connections: NaN when the capture's clock is too coarse.
TIMING_FEATURES = frozenset({"win_log_span", "win_log_rate", "log_gap_prev", "pair_interval_cv",
                             "pair_log_interval", "dns_within_2s", "log_since_dns"})


#: The role a reader writes where the capture names no role (CIC-IDS-2017, UNSW-NB15).
UNKNOWN_ROLE = "unknown"


def failed(flow: dict[str, Any]) -> bool:
    """Whether the flow is an attempt that never carried a conversation. An unanswered UDP datagram (S0) is not:
    NTP, mDNS, SSDP, DHCP, syslog and NetBIOS announcements are one-way by design; only for TCP does S0 mean a
    SYN nobody answered."""
    state = flow["conn_state"]
    return state in FAILED_STATES and (state != "S0" or flow["proto"] == "tcp")


def service_verdict(item_input: dict[str, Any]) -> bool:
    """Whether a flow without a service means that no analyzer recognised its protocol. Only where the capture
    records the service by inspecting the conversation (Zeek's dynamic protocol detection, which also writes the
    history letters): a capture without a service column cannot say, and one with a service column but no
    history is Argus's (UNSW-NB15), whose port table leaves most protocols unclassified (``-``)."""
    return recorded(item_input, "service") and recorded(item_input, "history")


def _log(x: float | None) -> float:
    return _NO_VALUE if x is None else math.log1p(max(0.0, float(x)))


def _cv(values: list[float]) -> float:
    """Coefficient of variation (0 = perfectly regular); -1 when there are too few values to tell."""
    if len(values) < 2:
        return _NO_VALUE
    mean = statistics.fmean(values)
    return statistics.pstdev(values) / mean if mean > 0 else 0.0


def _flow_features(flow: dict[str, Any], item_input: dict[str, Any]) -> list[float]:
    proto, state, port = flow["proto"], flow["conn_state"], int(flow["id.resp_p"])
    ob, rb = flow["orig_bytes"] or 0, flow["resp_bytes"] or 0
    port_known, dst_known = recorded(item_input, "id.resp_p"), recorded(item_input, "id.resp_h")
    if flow["service"] is not None:
        service = 1.0
    else:
        service = 0.0 if service_verdict(item_input) else _UNKNOWN
    return [
        float(proto == "tcp"), float(proto == "udp"), float(proto == "icmp"),
        float(port) if port_known else _UNKNOWN, float(port in _STANDARD_PORTS) if port_known else _UNKNOWN,
        service, float(is_internal(flow["id.resp_h"])) if dst_known else _UNKNOWN,
        _NO_VALUE if flow["duration"] is None else float(flow["duration"]), _log(flow["orig_bytes"]),
        _log(flow["resp_bytes"]), _log(flow["orig_pkts"]), _log(flow["resp_pkts"]),
        float(failed(flow)), float(state == "REJ"), float(state in _RESET_STATES),
        float(state == "SF"), ob / (ob + rb) if ob + rb else _NO_VALUE,
        float(flow["history"].startswith("ShAd")) if recorded(item_input, "history") else _UNKNOWN,
    ]


def _role_features(role: str) -> list[float]:
    if role == UNKNOWN_ROLE:
        return [_UNKNOWN] * 3
    return [float(role in EMBEDDED_ROLES), float(role in SERVER_ROLES), float(role in SCANNER_ROLES)]


def _is_dns(flow: dict[str, Any]) -> bool:
    return flow["id.resp_p"] == 53 and flow["proto"] == "udp"


def _window_features(flow: dict[str, Any], window: list[dict[str, Any]], timing: bool) -> list[float]:
    n = len(window)
    if not n:
        return [0.0, _NO_VALUE, _NO_VALUE, _NO_VALUE, 0.0, 0.0, 0.0] + [_NO_VALUE] * 7
    external = [w for w in window if not is_internal(w["id.resp_h"])]
    dns = [w for w in window if _is_dns(w)]
    if timing:
        span = flow["ts"] - window[0]["ts"]
        clock = [_log(span), math.log(n / max(span, 1e-3)), _log(flow["ts"] - window[-1]["ts"])]
    else:
        clock = [_UNKNOWN] * 3
    return [
        float(n), *clock,
        float(len({w["id.resp_h"] for w in window})), float(len({w["id.resp_p"] for w in window})),
        sum(failed(w) for w in window) / n, len(external) / n,
        max(_log(w["orig_bytes"]) for w in window), _log(sum(w["orig_bytes"] or 0 for w in external)),
        _log(sum(w["resp_bytes"] or 0 for w in window if is_internal(w["id.resp_h"]))), len(dns) / n,
        statistics.fmean(w["orig_bytes"] or 0 for w in dns) if dns else _NO_VALUE,
        sum((w["duration"] or 0) > 60 and (w["orig_bytes"] or 0) < 20_000 for w in window) / n,
    ]


def _relative_features(flow: dict[str, Any], window: list[dict[str, Any]], timing: bool) -> list[float]:
    dst, port = flow["id.resp_h"], flow["id.resp_p"]
    same_dst = [w for w in window if w["id.resp_h"] == dst]
    same_port = [w for w in window if w["id.resp_p"] == port]
    pair = [w for w in same_dst if w["id.resp_p"] == port] + [flow]
    if timing:
        times = [w["ts"] for w in pair]
        intervals = [b - a for a, b in zip(times, times[1:], strict=False)]
        dns_times = [w["ts"] for w in window if _is_dns(w)]
        since_dns = flow["ts"] - dns_times[-1] if dns_times else None
        clock = [_cv(intervals), _log(statistics.fmean(intervals)) if intervals else _NO_VALUE]
        dns_clock = [float(since_dns is not None and since_dns <= 2.0), _log(since_dns)]
    else:
        clock, dns_clock = [_UNKNOWN] * 2, [_UNKNOWN] * 2
    return [
        float(len(same_dst)), float(len(same_port)), float(len(pair) - 1),
        float(len({w["id.resp_h"] for w in same_port} | {dst})),
        float(len({w["id.resp_p"] for w in same_dst} | {port})),
        sum(failed(w) for w in same_port) / len(same_port) if same_port else _NO_VALUE,
        sum(failed(w) for w in same_dst) / len(same_dst) if same_dst else _NO_VALUE,
        *clock, _cv([float(w["orig_bytes"] or 0) for w in pair]),
        statistics.fmean(_log(w["orig_bytes"]) for w in pair), float(not same_dst), *dns_clock,
        float(len({w["id.resp_h"] for w in same_port if is_internal(w["id.resp_h"])})),
        _cv([float(w["resp_bytes"] or 0) for w in pair]), float(bool(window) and _is_dns(window[-1])),
        float(len({w["id.resp_h"] for w in window if failed(w) and w["id.resp_h"] != dst})),
        max((_log(w["resp_bytes"]) for w in window if w["id.resp_h"] != dst and not is_internal(w["id.resp_h"])),
            default=_NO_VALUE),
    ]


def features(item_input: dict[str, Any]) -> list[float]:
    """The feature vector of one item's input, in the order of :data:`FEATURE_NAMES`."""
    flow, window, timing = item_input["flow"], item_input["window"], timing_known(item_input)
    head = _flow_features(flow, item_input) + _role_features(item_input["host"]["role"])
    if not recorded(item_input, "id.orig_h"):  # no host to group flows by: the window is unknown, not empty
        return head + [_UNKNOWN] * (len(FEATURE_NAMES) - len(head))
    return head + _window_features(flow, window, timing) + _relative_features(flow, window, timing)
