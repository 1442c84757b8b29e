"""E1 baselines on the quirks of the layouts real users import (issue 28): small hand-written items in each layout,
never rows copied from a dataset.

Zeek leaves ``service`` empty for protocols it has no analyzer for (NTP); Argus (UNSW-NB15) writes ``-`` for every
service its port table does not name; the ML-ready CSVs have no addresses or ports (0 / ``unknown`` placeholders)
and no window; CICFlowMeter's minute timestamps make a CDN download's connections look simultaneous; IoT-23's
reader names every host ``iot_device``.
"""

import math
from typing import Any

import pytest

from security_verifiers.core.scoring import CostProfile
from security_verifiers.core.types import Item
from security_verifiers.envs.network_logs.baselines import (
    CAPTURE_VIEWS,
    GBDTBaseline,
    heuristic_probability,
    machinelearningcve_view,
    unsw_set_view,
)
from security_verifiers.envs.network_logs.capture import ZEEK
from security_verifiers.envs.network_logs.env import LABELS
from security_verifiers.envs.network_logs.features import FEATURE_NAMES, failed, features
from security_verifiers.envs.network_logs.generator import generate

#: The probabilities the default costs (missed 10, false alarm 1, abstain 0.5) turn into Abstain.
ABSTAIN_BAND = (0.05, 0.5)
UNSW_SET = {"ts_resolution": None, "unrecorded": ["ts", "id.orig_h", "id.orig_p", "id.resp_h", "id.resp_p", "history"]}
CIC_ADDRESSED = {"ts_resolution": 60.0, "unrecorded": ["service", "history"]}
RAW_ARGUS = {"ts_resolution": 1.0, "unrecorded": ["history"]}


def _flow(ts: float | None, orig: tuple[str, int], resp: tuple[str, int], proto: str, service: str | None,
          state: str, nbytes: tuple[int, int], pkts: tuple[int, int], duration: float | None = 0.01,
          history: str = "") -> dict[str, Any]:
    return {"ts": ts, "id.orig_h": orig[0], "id.orig_p": orig[1], "id.resp_h": resp[0], "id.resp_p": resp[1],
            "proto": proto, "service": service, "duration": duration, "orig_bytes": nbytes[0],
            "resp_bytes": nbytes[1], "conn_state": state, "history": history, "orig_pkts": pkts[0],
            "resp_pkts": pkts[1]}


def _item(flow: dict[str, Any], window: list[dict[str, Any]], capture: dict[str, Any], role: str) -> dict[str, Any]:
    return {"capture": capture, "flow": flow, "window": window, "host": {"ip": flow["id.orig_h"], "role": role}}


def _ntp(ts: float, server: str, answered: bool) -> dict[str, Any]:
    """An IoT device's NTP query as Zeek logs it: no analyzer, so no service; often no reply (S0)."""
    return _flow(ts, ("192.168.1.50", 123), (server, 123), "udp", None, "SF" if answered else "S0",
                 (48, 48 if answered else 0), (1, 1 if answered else 0), 0.004 if answered else None,
                 "Dd" if answered else "D")


def test_ntp_without_a_service_in_a_zeek_capture_is_not_called_malicious() -> None:
    servers = ["147.231.100.5", "37.157.198.150", "89.221.210.188", "162.159.200.1"]
    window = [_ntp(1_533_043_000.0 + 7 * k, servers[k % 4], k % 3 != 0) for k in range(12)]
    item = _item(_ntp(1_533_043_090.0, servers[0], False), window, ZEEK, "iot_device")
    assert heuristic_probability(item) < ABSTAIN_BAND[0]


def test_a_udp_flood_on_a_polled_port_gets_no_escape() -> None:
    """The escape is for small requests: a stream of full-size datagrams to udp/123 is not a clock query."""
    window = [_flow(1_000.0 + 0.01 * k, ("10.0.0.9", 40_000 + k), ("10.0.0.1", 123), "udp", None, "S0",
                    (60_000, 0), (40, 0), 0.5) for k in range(12)]
    item = _item(_flow(1_000.2, ("10.0.0.9", 41_000), ("10.0.0.1", 123), "udp", None, "S0", (60_000, 0),
                       (40, 0), 0.5), window, ZEEK, "workstation")
    assert heuristic_probability(item) > ABSTAIN_BAND[1]


def _https(minute: float, k: int, resp_bytes: int, state: str = "S1") -> dict[str, Any]:
    return _flow(minute, ("192.168.10.16", 50_000 + k), ("199.244.48.55", 443), "tcp", None, state,
                 (1_300, resp_bytes), (8, 80), 0.2)


def test_a_clockless_window_of_large_downloads_from_one_server_is_not_called_malicious() -> None:
    """20 HTTPS downloads of 100 kB from one CDN server within one CICFlowMeter minute: parallel downloads."""
    minute = 1_499_441_400.0
    item = _item(_https(minute, 20, 100_000), [_https(minute, k, 100_000) for k in range(20)], CIC_ADDRESSED,
                 "unknown")
    assert heuristic_probability(item) <= ABSTAIN_BAND[1]


def test_a_clockless_window_of_starved_connections_to_one_server_is_still_a_flood() -> None:
    minute = 1_499_441_400.0
    window = [_https(minute, k, 0, "S0") for k in range(20)]
    item = _item(_https(minute, 20, 300), window, CIC_ADDRESSED, "unknown")
    assert heuristic_probability(item) > ABSTAIN_BAND[1]


def test_a_server_first_contacted_at_the_windows_start_is_not_never_looked_up() -> None:
    """The lookup of a server the whole window talks to came before the window began: the absence of a DNS
    flow in a truncated window is no evidence."""
    window = [_flow(1_000.0 + 5 * k, ("10.0.0.5", 50_000 + k), ("93.184.216.34", 443), "tcp", "ssl", "SF",
                    (900, 80_000), (10, 70), 0.3, "ShADadFf") for k in range(19)]
    item = _item(_flow(1_100.0, ("10.0.0.5", 51_000), ("93.184.216.34", 443), "tcp", "ssl", "SF",
                       (900, 80_000), (10, 70), 0.3, "ShADadFf"), window, ZEEK, "workstation")
    assert heuristic_probability(item) < ABSTAIN_BAND[0]


def _dns(ts: float, qsize: int) -> dict[str, Any]:
    return _flow(ts, ("192.168.10.9", 53_000), ("192.168.10.3", 53), "udp", "dns", "SF", (qsize, qsize + 120),
                 (1, 1), 0.001, "Dd")


def test_active_directory_lookups_are_not_a_tunnel() -> None:
    """Windows hosts look up ``_ldap._tcp.<site>._sites.dc._msdcs.<domain>`` names: queries of 70-110 bytes."""
    sizes = [72, 95, 110, 68, 104, 88, 101, 76, 109, 97, 84, 106]
    window = [_dns(1_000.0 + 0.2 * k, q) for k, q in enumerate(sizes)]
    item = _item(_dns(1_003.0, 105), window, ZEEK, "workstation")
    assert heuristic_probability(item) <= ABSTAIN_BAND[1]


def test_a_dns_tunnel_is_still_one() -> None:
    window = [_dns(1_000.0 + 0.2 * k, 170 + 7 * (k % 11)) for k in range(15)]
    item = _item(_dns(1_003.1, 230), window, ZEEK, "workstation")
    assert heuristic_probability(item) > ABSTAIN_BAND[1]


def _unsw_row(service: str | None) -> dict[str, Any]:
    """A UNSW-NB15 testing-set row as the reader writes it: placeholders for the missing address and port."""
    flow = _flow(None, ("unknown", 0), ("unknown", 0), "udp", service, "S0", (496, 0), (2, 0), 1e-05)
    return _item(flow, [], UNSW_SET, "unknown")


def _feature(vector: list[float], name: str) -> float:
    return vector[FEATURE_NAMES.index(name)]


def test_features_of_an_unrecorded_port_and_address_are_missing_not_zero() -> None:
    vector = features(_unsw_row(None))
    for name in ("resp_port", "resp_port_standard", "dst_internal"):
        assert math.isnan(_feature(vector, name)), name
    assert _feature(vector, "log_orig_bytes") == pytest.approx(math.log1p(496))


def test_a_layout_without_addresses_has_an_unknown_window_not_an_empty_one() -> None:
    vector = features(_unsw_row(None))
    for name in ("win_n", "win_distinct_dst", "same_dst", "dst_new", "other_failed_dsts"):
        assert math.isnan(_feature(vector, name)), name


def test_argus_dash_service_is_unclassified_not_absent() -> None:
    """Argus names a dozen services and writes ``-`` for the rest: no verdict; a named one is still one."""
    assert math.isnan(_feature(features(_unsw_row(None)), "service_known"))
    assert _feature(features(_unsw_row("dns")), "service_known") == 1.0
    raw = _item(_flow(1_000.0, ("59.166.0.1", 1_024), ("149.171.126.3", 5_555), "tcp", None, "SF", (500, 300),
                      (4, 4)), [], RAW_ARGUS, "unknown")
    assert math.isnan(_feature(features(raw), "service_known"))
    zeek = {**raw, "capture": ZEEK}
    assert _feature(features(zeek), "service_known") == 0.0


def test_cicflowmeter_without_addresses_keeps_its_recorded_port() -> None:
    cve = {"ts_resolution": None, "unrecorded": ["ts", "id.orig_h", "id.orig_p", "id.resp_h", "service", "history"]}
    item = _item(_flow(None, ("unknown", 0), ("unknown", 443), "tcp", None, "SF", (900, 50_000), (8, 40)), [],
                 cve, "unknown")
    vector = features(item)
    assert _feature(vector, "resp_port") == 443.0 and _feature(vector, "resp_port_standard") == 1.0
    assert math.isnan(_feature(vector, "dst_internal"))


def test_one_way_udp_is_not_a_failed_attempt() -> None:
    assert not failed(_ntp(0.0, "147.231.100.5", answered=False))
    assert failed(_flow(0.0, ("10.0.0.5", 40_000), ("10.0.0.7", 22), "tcp", None, "S0", (0, 0), (2, 0)))
    window = [_ntp(1_000.0 + k, "147.231.100.5", False) for k in range(10)]
    item = _item(_ntp(1_011.0, "147.231.100.5", False), window, ZEEK, "iot_device")
    assert _feature(features(item), "win_failed_frac") == 0.0


@pytest.mark.parametrize(("role", "embedded"), [("iot_device", 1.0), ("smart_plug", 1.0), ("workstation", 0.0)])
def test_iot23_hosts_are_embedded_devices(role: str, embedded: float) -> None:
    item = _item(_ntp(1_000.0, "147.231.100.5", True), [], ZEEK, role)
    assert _feature(features(item), "role_embedded") == embedded


def test_an_unnamed_role_is_unknown_not_a_workstation() -> None:
    vector = features(_item(_ntp(1_000.0, "147.231.100.5", True), [], ZEEK, "unknown"))
    assert all(math.isnan(_feature(vector, n)) for n in ("role_embedded", "role_server", "role_scanner"))


def test_the_gbdt_trains_on_every_layout_users_import() -> None:
    """Each missing-field pattern of the readers (loaders.py) appears in a capture view."""
    item = generate("train", 1, seed=3)[0].input
    patterns = {tuple(view(item)["capture"]["unrecorded"]) for view in CAPTURE_VIEWS}
    assert ("ts", "id.orig_h", "id.orig_p", "id.resp_h", "id.resp_p", "history") in patterns  # UNSW-NB15 sets
    assert ("ts", "id.orig_h", "id.orig_p", "id.resp_h", "service", "history") in patterns  # MachineLearningCVE
    assert ("service", "history") in patterns and ("history",) in patterns
    for view in (unsw_set_view, machinelearningcve_view):
        shown = view(item)
        assert shown["window"] == [] and shown["capture"]["ts_resolution"] is None
        assert shown["host"]["role"] == "unknown"
    assert unsw_set_view(item)["flow"]["conn_state"] in {"SF", "S0", "S1", "RSTO", "OTH"}


def test_the_gbdt_does_not_call_a_retried_connection_in_a_unsw_set_row_malicious() -> None:
    """A client retrying a dead server for 15 s, as UNSW-NB15's testing set writes it (Argus ``REQ``: SYNs only,
    sizes with headers; no ports, addresses or window). Scanners send a probe once or twice; the OS resends an
    application's SYN on its back-off schedule. Trained on items whose unanswered attempts were all scanner-like
    (at most three SYNs in 3 s), the GBDT called such rows Malicious."""
    flow = _flow(None, ("unknown", 0), ("unknown", 0), "tcp", None, "S0", (900, 0), (20, 0), 15.0)
    item = Item(id="unsw-retry", split="real", input=_item(flow, [], UNSW_SET, "unknown"), target={"label": "Benign"})
    [p] = GBDTBaseline(CostProfile(), LABELS).probabilities([item])
    assert p <= ABSTAIN_BAND[1], p


def test_unanswered_syns_to_a_login_port_are_not_guesses() -> None:
    """A client retrying a dead SSH server, as CIC-IDS-2017 writes it (minute clock, no service): no session, so no
    password was guessed; the login rule called it a brute force."""
    def retry(ts: float) -> dict[str, Any]:
        return _flow(ts, ("192.168.10.5", 50_000 + int(ts)), ("192.168.10.9", 22), "tcp", None, "S0", (0, 0), (3, 0),
                     9.0)

    window = [retry(60.0 * k) for k in range(6)]
    assert heuristic_probability(_item(retry(360.0), window, CIC_ADDRESSED, "unknown")) <= ABSTAIN_BAND[1]
