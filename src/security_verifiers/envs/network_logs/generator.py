"""Deterministic generator of E1 items: one Zeek conn record to classify, plus its host's recent flows.

Each item is a host timeline: a host with a device role, the benign background traffic of that role
(:mod:`activities`), and an episode (:mod:`episodes`, :mod:`pairs`) that ends with the flow to classify.
The window is the flows the same host opened just before it.

Difficulty says how much the flow itself tells:

* ``easy``: the flow, read with the host's role, is typical of its label (a Mirai probe to port 37215, a
  UDP flood, a monitoring server's sweep, the host's ordinary traffic);
* ``hard``: the flow and the role are drawn from one distribution shared by an attack and its benign twin,
  before the label is drawn (:mod:`pairs`): the flow alone is worth a coin flip, only the window tells;
* ``ambiguous``: the whole episode is shared by an attack and its twin and the label is sampled from a
  latent probability stored in the target, so a calibrated analyst reports a middle probability.

The ``ood`` split is an industrial (OT) network with other device roles and services, and attack families
never used in the other splits. Only ``random.Random`` instances seeded from a SHA-256 of the split and
seed are used, and every float is rounded, so the output is byte-identical on every machine.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass

from security_verifiers.core.datasets import item_id
from security_verifiers.core.errors import DatasetError
from security_verifiers.core.types import Item
from security_verifiers.envs.network_logs import episodes as e
from security_verifiers.envs.network_logs import pairs as p
from security_verifiers.envs.network_logs.activities import OT_PROFILES, PROFILES, background
from security_verifiers.envs.network_logs.capture import ZEEK
from security_verifiers.envs.network_logs.sites import ENTERPRISE_IOT, OT_INDUSTRIAL, Network
from security_verifiers.envs.network_logs.traffic import Timeline

GENERATOR_VERSION = "2.2.0"
SPLITS = ("train", "dev", "test", "ood")
#: Preceding flows of the host shown with each item.
WINDOW = 20
#: Attack families of the in-distribution splits and of the ``ood`` split (disjoint by construction).
IN_DIST_ATTACKS = ("portscan_horizontal", "portscan_vertical", "telnet_bruteforce", "ssh_bruteforce",
                   "cc_heartbeat", "ddos_flood", "malware_download", "exfiltration")
OOD_ATTACKS = ("dns_tunneling", "http_slowloris", "lateral_smb")

#: Easy items whose window is cut short, as for a host that just came up or a capture that just began (real
#: captures have many); never a hard item's, whose window is what tells.
_SHORT_WINDOW = 0.12
_T_START = 1709251200.0  # 2024-03-01T00:00:00Z
_T_SPAN = 184 * 86400.0


@dataclass(frozen=True)
class Scenario:
    build: Callable[[Timeline, float], e.Episode]
    weight: float
    roles: tuple[str, ...]


_IOT = ("iot_camera", "iot_thermostat", "smart_plug", "smart_tv", "iot_hub", "printer", "voip_phone")
_ENDPOINTS = ("workstation",)
_SERVERS = ("web_server", "db_server", "file_server")
_AUTOMATION = ("monitoring_server", "ci_runner", "backup_server")

IN_DIST: tuple[Scenario, ...] = (
    # easy attacks: the flow gives the attack away
    Scenario(e.ep_portscan_horizontal, 0.03, _IOT + _ENDPOINTS + ("web_server",)),
    Scenario(e.ep_portscan_vertical, 0.025, _IOT + _ENDPOINTS + _SERVERS),
    Scenario(e.ep_telnet_bruteforce, 0.03, _IOT),
    Scenario(e.ep_ssh_bruteforce, 0.025, _ENDPOINTS + _SERVERS + ("iot_camera", "iot_hub")),
    Scenario(e.ep_cc_heartbeat, 0.03, _IOT + _ENDPOINTS + _SERVERS),
    Scenario(e.ep_ddos_flood, 0.03, _IOT + ("web_server",)),
    Scenario(e.ep_malware_download, 0.025, _IOT + ("web_server",)),
    Scenario(e.ep_exfiltration, 0.025, _ENDPOINTS + _SERVERS),
    # hard pairs: an attack and its twin share the flow and the role; only the window tells
    Scenario(p.hard_failed_connection, 0.07, _IOT + _ENDPOINTS + _SERVERS + ("ci_runner",)),
    Scenario(p.hard_telnet_session, 0.05, _ENDPOINTS + _AUTOMATION),
    Scenario(p.hard_ssh_session, 0.055, _ENDPOINTS + _AUTOMATION + ("web_server",)),
    Scenario(p.hard_check_in, 0.06, _IOT + _ENDPOINTS + _SERVERS),
    Scenario(p.hard_web_request, 0.055, ("workstation", "smart_tv", "iot_hub", "iot_camera", "web_server")),
    Scenario(p.hard_download, 0.05, _IOT + _ENDPOINTS + ("web_server", "ci_runner")),
    Scenario(p.hard_upload, 0.055, _ENDPOINTS + _SERVERS + ("backup_server",)),
    # ambiguous: the label is sampled from a latent probability
    Scenario(e.ep_amb_beacon, 0.025, _IOT + _ENDPOINTS),
    Scenario(e.ep_amb_ssh_failures, 0.02, _ENDPOINTS + ("ci_runner", "web_server")),
    Scenario(e.ep_amb_upload, 0.02, _ENDPOINTS + _SERVERS),
    Scenario(e.ep_amb_probe, 0.02, _ENDPOINTS + _IOT),
    Scenario(e.ep_amb_download, 0.015, _IOT + _ENDPOINTS),
    # easy benign: the role explains the flow, or it is the host's ordinary traffic
    Scenario(e.ep_monitoring_sweep, 0.025, ("monitoring_server",)),
    Scenario(e.ep_db_pool, 0.02, ("web_server",)),
    Scenario(e.ep_syslog_burst, 0.02, _SERVERS + ("printer", "iot_hub", "backup_server")),
    Scenario(e.ep_camera_upload, 0.015, ("iot_camera",)),
    Scenario(e.ep_telemetry, 0.025, _IOT),
    Scenario(e.ep_ansible, 0.015, ("ci_runner",)),
    # easy benign measured on real captures: IoT housekeeping, Windows domain chatter, bulk CDN downloads,
    # sessions a flow meter cuts at its 120 s timeout
    Scenario(e.ep_iot_chatter, 0.11, _IOT),
    Scenario(e.ep_windows_domain, 0.06, ("workstation", "workstation", "file_server", "db_server")),
    Scenario(e.ep_bulk_download, 0.025, ("workstation", "smart_tv", "ci_runner", "iot_hub", "web_server")),
    Scenario(e.ep_long_session, 0.02, ("workstation", "smart_tv", "voip_phone", "iot_camera", "iot_hub",
                                        "ci_runner")),
    # an application retrying a server that is down: its SYNs resent on the OS's schedule, which no scanner uses
    Scenario(e.ep_failed_retry, 0.03, _ENDPOINTS + _SERVERS + _IOT),
    Scenario(e.ep_background, 0.1, tuple(PROFILES)),
)

_OT_CONTROL = ("hmi", "engineering_workstation", "workstation", "jump_host")
OOD: tuple[Scenario, ...] = (
    Scenario(e.ep_dns_tunneling, 0.06, _OT_CONTROL + ("historian",)),
    Scenario(e.ep_http_slowloris, 0.05, ("workstation", "jump_host", "engineering_workstation")),
    Scenario(e.ep_lateral_smb, 0.06, _OT_CONTROL),
    Scenario(p.hard_dns_query, 0.12, _OT_CONTROL + ("historian",)),
    Scenario(p.hard_long_web, 0.11, ("workstation", "jump_host", "engineering_workstation", "hmi")),
    Scenario(p.hard_smb_session, 0.12, _OT_CONTROL),
    Scenario(e.ep_amb_dns_volume, 0.05, _OT_CONTROL),
    Scenario(e.ep_modbus_poll, 0.08, ("hmi", "scada_server")),
    Scenario(e.ep_plc_discovery, 0.06, ("engineering_workstation",)),
    Scenario(e.ep_syslog_burst, 0.04, ("plc", "rtu", "historian", "scada_server")),
    Scenario(e.ep_failed_retry, 0.05, tuple(OT_PROFILES)),
    Scenario(e.ep_dashboard_poll, 0.05, ("hmi", "workstation", "jump_host", "engineering_workstation")),
    Scenario(e.ep_background, 0.15, tuple(OT_PROFILES)),
)


def _seeded(split: str, seed: int) -> random.Random:
    """The split's own stream: a SHA-256 of split and seed, so splits never share items by accident."""
    digest = hashlib.sha256(f"network-logs:{GENERATOR_VERSION}:{split}:{seed}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _make_item(rng: random.Random, split: str, net: Network, scenarios: tuple[Scenario, ...]) -> Item:
    scenario = rng.choices(scenarios, [s.weight for s in scenarios])[0]
    role = rng.choice(scenario.roles)
    tl = Timeline(rng, net, net.host_ip(rng, role), role)
    t = _T_START + rng.uniform(0.0, _T_SPAN)
    episode = scenario.build(tl, t)
    background(tl, t)
    tl.flows.sort(key=lambda f: f["ts"])
    idx = next(i for i, f in enumerate(tl.flows) if f is episode.target)
    window = [f for f in tl.flows[:idx] if f["ts"] < episode.target["ts"]][-WINDOW:]
    if episode.difficulty == "easy" and rng.random() < _SHORT_WINDOW:
        window = window[len(window) - rng.randint(0, len(window)):] if window else window
    inp = {"host": {"ip": tl.ip, "role": role}, "flow": episode.target, "window": window,
           "capture": {**ZEEK, "unrecorded": []}}
    target = {"label": episode.label, "family": episode.family, "p_malicious": episode.p}
    return Item(id=item_id("nl", {"input": inp, "target": target}), split=split, input=inp, target=target,
                meta={"generator_version": GENERATOR_VERSION, "difficulty": episode.difficulty,
                      "network": net.name})


def generate(split: str, n: int, seed: int) -> list[Item]:
    """``n`` items of ``split``, a pure function of its arguments (and of :data:`GENERATOR_VERSION`)."""
    if split not in SPLITS:
        raise DatasetError(f"unknown split {split!r} for network-logs; choose from {', '.join(SPLITS)}")
    if n < 0:
        raise DatasetError(f"n must be non-negative, got {n}")
    net, scenarios = (OT_INDUSTRIAL, OOD) if split == "ood" else (ENTERPRISE_IOT, IN_DIST)
    rng = _seeded(split, seed)
    items: list[Item] = []
    seen: set[str] = set()
    while len(items) < n:
        item = _make_item(random.Random(rng.getrandbits(64)), split, net, scenarios)
        if item.id not in seen:
            seen.add(item.id)
            items.append(item)
    return items
