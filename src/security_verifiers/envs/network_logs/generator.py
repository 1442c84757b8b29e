"""Deterministic generator of E1 items: one Zeek conn record to classify, plus its host's recent flows.

Each item is a host timeline: a host with a device role, the benign background traffic of that role,
and possibly an attack episode or an unusual-but-benign activity. The flow to classify is one flow of
the timeline and the window is the flows the same host opened just before it.

The design goal is that *no single field gives the label away*: every attack family is paired with a
benign "twin" whose individual flows look the same (a monitoring server sweeping a subnet vs. a port
scan, a nightly backup vs. exfiltration, syslog vs. a UDP flood, device telemetry vs. a C&C beacon),
and the attack families produce flows whose single-field values also occur in benign traffic. What
tells them apart is the window: how many hosts and ports were contacted, how many attempts failed,
how regular the intervals are, whether a DNS lookup came first, what was read before an upload.

About a tenth of the items are *ambiguous*: the flows are drawn from one distribution shared by an
attack and its twin, the latent probability of an attack is a function of that draw, and the label is
sampled from it, so the right answer for a calibrated analyst is to abstain or report a middle
probability. The ``ood`` split uses an industrial (OT) network with other device roles and services,
and attack families never used in the other splits.

Only ``random.Random`` instances seeded from a SHA-256 of the split and seed are used, and every float
is rounded, so the output is byte-identical on every machine.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from security_verifiers.core.datasets import item_id
from security_verifiers.core.errors import DatasetError
from security_verifiers.core.types import Item

GENERATOR_VERSION = "1.0.0"
SPLITS = ("train", "dev", "test", "ood")
#: Preceding flows of the host shown with each item.
WINDOW = 20
#: Attack families of the in-distribution splits and of the ``ood`` split (disjoint by construction).
IN_DIST_ATTACKS = ("portscan_horizontal", "portscan_vertical", "telnet_bruteforce", "ssh_bruteforce",
                   "cc_heartbeat", "ddos_flood", "malware_download", "exfiltration")
OOD_ATTACKS = ("dns_tunneling", "http_slowloris", "lateral_smb")

_T_START = 1709251200.0  # 2024-03-01T00:00:00Z
_T_SPAN = 184 * 86400.0
_MSS = 1448


# --------------------------------------------------------------------------------------------------
# Addresses
# --------------------------------------------------------------------------------------------------
_PUBLIC_FIRST_OCTETS = (3, 13, 18, 20, 23, 31, 34, 35, 37, 45, 46, 52, 54, 62, 77, 78, 80, 81, 85, 89, 91,
                        93, 94, 95, 103, 104, 107, 109, 116, 128, 141, 142, 146, 151, 157, 159, 162, 164,
                        167, 176, 178, 185, 188, 193, 194, 195, 198, 199, 203, 207, 209, 212, 213, 216, 217)


def public_ip(rng: random.Random) -> str:
    """A random routable address; attackers' servers and benign clouds are drawn from the same pool."""
    first = rng.choice(_PUBLIC_FIRST_OCTETS)
    return f"{first}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"


def is_internal(ip: str) -> bool:
    """RFC 1918, multicast or broadcast: traffic that stays inside the site."""
    parts = ip.split(".")
    if len(parts) != 4 or not all(p.isdigit() for p in parts):
        return False
    a, b = int(parts[0]), int(parts[1])
    return a == 10 or (a == 172 and 16 <= b <= 31) or (a == 192 and b == 168) or a >= 224


@dataclass(frozen=True)
class Network:
    """A site: where its hosts live, its shared servers, and the clouds its devices talk to."""

    name: str
    subnets: dict[str, str]  # role -> "a.b.c" prefix pattern; "{}" is a random octet
    servers: dict[str, tuple[str, ...]]
    clouds: tuple[str, ...]
    ntp_pool: tuple[str, ...]

    def server(self, rng: random.Random, kind: str) -> str:
        return rng.choice(self.servers[kind])

    def host_ip(self, rng: random.Random, role: str) -> str:
        prefix = self.subnets[role]
        while "{}" in prefix:
            prefix = prefix.replace("{}", str(rng.randint(0, 15)), 1)
        return f"{prefix}.{rng.randint(2, 254)}"

    def internal_peer(self, rng: random.Random) -> str:
        """Some other internal host (a sweep target, a lateral-movement victim)."""
        return self.host_ip(rng, rng.choice(tuple(self.subnets)))


def _fixed_ips(prefix: str, first: int, count: int) -> tuple[str, ...]:
    return tuple(f"{prefix}.{first + i}" for i in range(count))


ENTERPRISE_IOT = Network(
    name="enterprise_iot",
    subnets={
        "iot_camera": "10.20.{}", "iot_thermostat": "10.21.{}", "smart_plug": "10.22.{}",
        "smart_tv": "10.23.{}", "iot_hub": "10.24.{}", "printer": "10.30.{}", "voip_phone": "10.31.{}",
        "workstation": "10.10.{}", "web_server": "10.1.1", "db_server": "10.1.2", "file_server": "10.1.3",
        "ci_runner": "10.1.5", "monitoring_server": "10.1.4", "backup_server": "10.1.6",
    },
    servers={
        "dns": ("10.0.0.53", "10.0.0.54"), "dc": ("10.1.0.10", "10.1.0.11"), "file": ("10.1.0.20",),
        "db": ("10.1.0.30", "10.1.0.31"), "backup": ("10.1.0.40",), "git": ("10.1.0.50",),
        "broker": ("10.1.0.60",), "syslog": ("10.1.0.70",), "web": _fixed_ips("10.1.0", 80, 6),
        "registry": ("10.1.0.90",), "mail": ("10.1.0.25",), "switch": _fixed_ips("10.0.1", 1, 24),
        "printer": _fixed_ips("10.30.0", 10, 8), "device": _fixed_ips("10.20.0", 10, 40),
        "multicast": ("239.255.255.250", "224.0.0.251"),
    },
    clouds=("52.28.14.101", "34.199.73.12", "54.239.31.90", "35.186.224.25", "104.18.22.140",
            "13.107.42.14", "20.190.160.3", "142.250.74.46", "151.101.65.69", "3.121.6.180",
            "18.184.99.36", "23.215.0.136"),
    ntp_pool=("162.159.200.1", "129.6.15.28", "216.239.35.0", "132.163.97.1", "10.0.0.123"),
)

OT_INDUSTRIAL = Network(
    name="ot_industrial",
    subnets={
        "plc": "172.16.10", "rtu": "172.16.11", "hmi": "172.16.20", "engineering_workstation": "172.16.21",
        "historian": "172.16.30", "scada_server": "172.16.31", "workstation": "172.17.{}",
        "jump_host": "172.16.50", "ip_camera": "172.16.60",
    },
    servers={
        "dns": ("172.16.0.53",), "dc": ("172.16.40.5",), "file": ("172.16.40.10",),
        "wsus": ("172.16.40.20",), "syslog": ("172.16.40.30",), "historian": ("172.16.30.10",),
        "historian_web": ("172.16.30.11", "172.16.30.12"), "scada": ("172.16.31.20",),
        "plc": _fixed_ips("172.16.10", 10, 30), "rtu": _fixed_ips("172.16.11", 10, 12),
        "jump": ("172.16.50.5",), "nvr": ("172.16.60.2",), "mail": ("172.16.40.25",),
        "switch": _fixed_ips("172.16.1", 1, 12), "printer": ("172.17.0.10", "172.17.0.11"),
    },
    clouds=("52.28.14.101", "20.190.160.3", "13.107.42.14", "40.126.32.74"),
    ntp_pool=("172.16.0.123",),
)


# --------------------------------------------------------------------------------------------------
# Flows
# --------------------------------------------------------------------------------------------------
@dataclass
class Timeline:
    """The flows one host opened; helpers build Zeek-consistent records (states, history, packets)."""

    rng: random.Random
    net: Network
    ip: str
    role: str
    flows: list[dict[str, Any]] = field(default_factory=list)
    resolver: str = ""
    cloud: str = ""

    def __post_init__(self) -> None:
        self.resolver = self.net.server(self.rng, "dns")
        self.cloud = self.rng.choice(self.net.clouds)

    def ephemeral(self) -> int:
        lo, hi = (49152, 65535) if self.role in _WINDOWS_ROLES else (32768, 60999)
        return self.rng.randint(lo, hi)

    def _add(self, ts: float, dst: str, dport: int, proto: str, service: str | None, state: str,
             duration: float | None, ob: int | None, rb: int | None, pkts: tuple[int, int], history: str,
             sport: int | None = None) -> dict[str, Any]:
        flow = {
            "ts": round(ts, 6), "id.orig_h": self.ip,
            "id.orig_p": self.ephemeral() if sport is None else sport,
            "id.resp_h": dst, "id.resp_p": dport, "proto": proto, "service": service,
            "duration": None if duration is None else round(duration, 6), "orig_bytes": ob, "resp_bytes": rb,
            "conn_state": state, "history": history, "orig_pkts": pkts[0], "resp_pkts": pkts[1],
        }
        self.flows.append(flow)
        return flow

    def tcp(self, ts: float, dst: str, dport: int, service: str | None, ob: int, rb: int, duration: float,
            state: str = "SF", server_first: bool = False) -> dict[str, Any]:
        """An established TCP connection; packets follow from the bytes, history from the state."""
        out_seg, in_seg = math.ceil(ob / _MSS), math.ceil(rb / _MSS)
        closed = 1 if state == "SF" else 0
        pkts = (2 + out_seg + math.ceil(in_seg / 2) + closed + self.rng.randint(0, 1),
                1 + in_seg + math.ceil(out_seg / 2) + closed)
        return self._add(ts, dst, dport, "tcp", service, state, duration, ob, rb, pkts,
                         _tcp_history(self.rng, state, ob, rb, server_first))

    def attempt(self, ts: float, dst: str, dport: int, outcome: str, lan: bool) -> dict[str, Any]:
        """A TCP connection that carried no data.

        ``s0_1``/``s0_n``: no answer (one SYN, or retransmitted); ``rej``: refused; ``synrst``: a SYN scan
        that found an open port; ``connrst``: a full handshake, then a reset.
        """
        rtt = self.rng.uniform(0.0002, 0.004) if lan else self.rng.uniform(0.012, 0.25)
        if outcome == "s0_1":
            return self._add(ts, dst, dport, "tcp", None, "S0", None, None, None, (1, 0), "S")
        if outcome == "s0_n":
            tries = self.rng.choice((2, 3))
            duration = (1.0 if tries == 2 else 3.0) + self.rng.uniform(0.0, 0.06)
            return self._add(ts, dst, dport, "tcp", None, "S0", duration, 0, 0, (tries, 0), "S")
        if outcome == "rej":
            return self._add(ts, dst, dport, "tcp", None, "REJ", rtt, 0, 0, (1, 1), "Sr")
        if outcome == "synrst":
            return self._add(ts, dst, dport, "tcp", None, "RSTO", rtt, 0, 0, (2, 1), "ShR")
        return self._add(ts, dst, dport, "tcp", None, "RSTO", rtt * 1.5, 0, 0, (3, 1), "ShAR")

    def udp(self, ts: float, dst: str, dport: int, service: str | None, ob: int, rb: int,
            duration: float | None, pkts: tuple[int, int] = (1, 1),
            sport: int | None = None) -> dict[str, Any]:
        """A UDP exchange; without a reply it is Zeek state S0 with history ``D``."""
        if rb == 0:
            return self._add(ts, dst, dport, "udp", service, "S0", duration if pkts[0] > 1 else None, ob, 0,
                             (pkts[0], 0), "D", sport)
        return self._add(ts, dst, dport, "udp", service, "SF", duration, ob, rb, pkts, "Dd", sport)

    def icmp(self, ts: float, dst: str, count: int, size: int, answered: bool,
             duration: float) -> dict[str, Any]:
        """ICMP echo; Zeek keys it by type/code, which it prints as the ports."""
        rb = count * size if answered else 0
        return self._add(ts, dst, 0, "icmp", None, "OTH", duration if count > 1 else None, count * size, rb,
                         (count, count if answered else 0), "", sport=8)

    def dns(self, ts: float, answered: bool = True, qsize: int | None = None) -> dict[str, Any]:
        """A DNS lookup to this host's resolver."""
        r = self.rng
        ob = qsize if qsize is not None else r.randint(28, 64)
        rb = r.randint(ob + 16, ob + 260) if answered else 0
        return self.udp(ts, self.resolver, 53, "dns", ob, rb, r.uniform(0.0008, 0.09))


_WINDOWS_ROLES = frozenset({"workstation", "engineering_workstation", "hmi", "jump_host", "historian"})


def _tcp_history(rng: random.Random, state: str, ob: int, rb: int, server_first: bool) -> str:
    """Zeek's history letters for an established connection (upper case: originator)."""
    if ob and rb:
        body = "ShAdDa" if server_first else "ShADad"
    elif ob:
        body = "ShADa"
    elif rb:
        body = "ShAd"
    else:
        body = "ShA"
    if state == "SF":
        return body + rng.choice(("Ff", "fF"))
    if state == "RSTO":
        return body + "R"
    if state == "RSTR":
        return body + "r"
    return body  # S1: established, still open


def _lognormal_int(rng: random.Random, median: float, sigma: float, lo: int, hi: int) -> int:
    return int(min(hi, max(lo, rng.lognormvariate(math.log(median), sigma))))


def _jittered(rng: random.Random, start: float, period: float, cv: float, end: float) -> list[float]:
    """Times of a periodic activity from ``start`` up to ``end`` (exclusive), with relative jitter ``cv``."""
    times, t = [], start
    while t < end:
        times.append(t)
        t += max(0.05, rng.gauss(period, period * cv))
    return times


def _established_state(rng: random.Random) -> str:
    """Most sessions close cleanly; some are reset or still open when the log rotates."""
    return rng.choices(("SF", "RSTO", "RSTR", "S1"), (0.86, 0.05, 0.06, 0.03))[0]


# --------------------------------------------------------------------------------------------------
# Benign activities: each adds its flows ending at ``t`` and returns the main flow.
# --------------------------------------------------------------------------------------------------
Activity = Callable[[Timeline, float], dict[str, Any]]


def act_dns(tl: Timeline, t: float) -> dict[str, Any]:
    return tl.dns(t, answered=tl.rng.random() > 0.03)


def act_ntp(tl: Timeline, t: float) -> dict[str, Any]:
    r = tl.rng
    server = r.choice(tl.net.ntp_pool)
    sport = 123 if r.random() < 0.5 else None
    return tl.udp(t, server, 123, "ntp", 48, 48 if r.random() > 0.04 else 0, r.uniform(0.002, 0.2),
                  sport=sport)


def act_web(tl: Timeline, t: float) -> dict[str, Any]:
    """A page or API call: a DNS lookup, then HTTPS (or plain HTTP) to a CDN."""
    r = tl.rng
    tl.dns(t - r.uniform(0.002, 0.4))
    port, service = (443, "ssl") if r.random() < 0.85 else (80, "http")
    ob = _lognormal_int(r, 900, 0.9, 120, 400_000)
    rb = _lognormal_int(r, 18_000, 1.6, 0, 30_000_000)
    return tl.tcp(t, public_ip(r), port, service, ob, rb, r.lognormvariate(math.log(1.5), 1.3),
                  _established_state(r))


def act_upload(tl: Timeline, t: float) -> dict[str, Any]:
    """A user uploading a file to a cloud service (large originator bytes, benign)."""
    r = tl.rng
    tl.dns(t - r.uniform(0.002, 0.3))
    ob = _lognormal_int(r, 4_000_000, 1.2, 200_000, 400_000_000)
    return tl.tcp(t, public_ip(r), 443, "ssl", ob, r.randint(3_000, 40_000), ob / r.uniform(2e5, 4e6))


def act_telemetry(tl: Timeline, t: float) -> dict[str, Any]:
    """A device reporting to its vendor cloud; payload size varies with what it reports."""
    r = tl.rng
    port, service = r.choices(((443, "ssl"), (8883, "ssl"), (1883, "mqtt"), (80, "http")), (5, 2, 2, 1))[0]
    ob = _lognormal_int(r, 600 if service != "mqtt" else 180, 0.5, 40, 20_000)
    rb = _lognormal_int(r, 450 if service != "mqtt" else 60, 0.6, 4, 20_000)
    return tl.tcp(t, tl.cloud, port, service, ob, rb, r.uniform(0.08, 1.8), _established_state(r))


def act_mqtt_local(tl: Timeline, t: float) -> dict[str, Any]:
    r = tl.rng
    return tl.tcp(t, tl.net.server(r, "broker"), 1883, "mqtt", r.randint(20, 900), r.randint(4, 400),
                  r.uniform(0.02, 0.6), _established_state(r))


def act_ssdp(tl: Timeline, t: float) -> dict[str, Any]:
    """SSDP/mDNS announcements: one-way UDP to multicast (Zeek state S0)."""
    r = tl.rng
    dst = r.choice(tl.net.servers["multicast"])
    port = 1900 if dst.startswith("239") else 5353
    n = r.randint(1, 4)
    return tl.udp(t, dst, port, "dns" if port == 5353 else None, n * r.randint(90, 420), 0,
                  r.uniform(0.001, 0.5), pkts=(n, 0), sport=port)


def act_syslog(tl: Timeline, t: float) -> dict[str, Any]:
    """Log shipping over UDP: one-way, no reply, sometimes bursts of many packets."""
    r = tl.rng
    n = r.choice((1, 1, 2, 5, 20, 80))
    return tl.udp(t, tl.net.server(r, "syslog"), 514, "syslog", n * r.randint(80, 900), 0,
                  r.uniform(0.01, 30.0), pkts=(n, 0), sport=514 if r.random() < 0.3 else None)


def act_smb(tl: Timeline, t: float) -> dict[str, Any]:
    r = tl.rng
    rb = _lognormal_int(r, 60_000, 1.8, 400, 200_000_000)
    return tl.tcp(t, tl.net.server(r, "file"), 445, "smb", _lognormal_int(r, 3_000, 1.2, 200, 5_000_000), rb,
                  r.lognormvariate(math.log(2.0), 1.5), _established_state(r))


def act_ldap(tl: Timeline, t: float) -> dict[str, Any]:
    r = tl.rng
    port, service = r.choice(((389, "ldap"), (88, "krb_tcp"), (135, "dce_rpc")))
    return tl.tcp(t, tl.net.server(r, "dc"), port, service, r.randint(200, 4000), r.randint(200, 9000),
                  r.uniform(0.003, 1.0), _established_state(r))


def act_mail(tl: Timeline, t: float) -> dict[str, Any]:
    r = tl.rng
    port = r.choice((993, 587))
    return tl.tcp(t, tl.net.server(r, "mail"), port, "ssl", r.randint(400, 900_000),
                  r.randint(900, 2_000_000), r.uniform(0.1, 40.0), _established_state(r))


def act_ssh_admin(tl: Timeline, t: float) -> dict[str, Any]:
    """An interactive SSH session: long, with a few kilobytes each way."""
    r = tl.rng
    dst = tl.net.internal_peer(r) if r.random() < 0.7 else public_ip(r)
    dur = r.lognormvariate(math.log(240), 1.2)
    return tl.tcp(t, dst, 22, "ssh", int(2500 + dur * r.uniform(5, 60)), int(3500 + dur * r.uniform(20, 400)),
                  dur, _established_state(r), server_first=True)


def act_git(tl: Timeline, t: float) -> dict[str, Any]:
    r = tl.rng
    port, service = (22, "ssh") if r.random() < 0.6 else (443, "ssl")
    return tl.tcp(t, tl.net.server(r, "git"), port, service, r.randint(1500, 60_000),
                  _lognormal_int(r, 200_000, 1.8, 3_000, 500_000_000), r.uniform(0.5, 40.0),
                  server_first=service == "ssh")


def act_db_query(tl: Timeline, t: float) -> dict[str, Any]:
    """An application server's short database connection (connection pools churn many of these)."""
    r = tl.rng
    port, service = r.choice(((5432, "postgresql"), (3306, "mysql")))
    return tl.tcp(t, tl.net.server(r, "db"), port, service, r.randint(150, 6000), r.randint(100, 80_000),
                  r.uniform(0.003, 0.8), "SF" if r.random() < 0.95 else "RSTO",
                  server_first=service == "mysql")


def act_print(tl: Timeline, t: float) -> dict[str, Any]:
    r = tl.rng
    return tl.tcp(t, tl.net.server(r, "printer"), 9100, None,
                  _lognormal_int(r, 400_000, 1.2, 5_000, 60_000_000),
                  r.randint(0, 200), r.uniform(1.0, 60.0))


def act_update(tl: Timeline, t: float) -> dict[str, Any]:
    """A software or firmware update: DNS, a version check with the vendor, then a large download."""
    r = tl.rng
    tl.dns(t - r.uniform(0.4, 3.0))
    tl.tcp(t - r.uniform(3.5, 30.0), tl.cloud, 443, "ssl", r.randint(400, 2500), r.randint(700, 9000),
           r.uniform(0.1, 1.5))
    tl.dns(t - r.uniform(0.001, 0.35))
    port, service = (443, "ssl") if r.random() < 0.7 else (80, "http")
    rb = _lognormal_int(r, 6_000_000, 1.5, 150_000, 900_000_000)
    return tl.tcp(t, public_ip(r), port, service, r.randint(300, 3000), rb, rb / r.uniform(3e5, 8e6))


def act_snmp(tl: Timeline, t: float) -> dict[str, Any]:
    r = tl.rng
    dst = r.choice((tl.net.server(r, "switch"), tl.net.server(r, "printer"), tl.net.internal_peer(r)))
    return tl.udp(t, dst, 161, "snmp", r.randint(40, 120), r.randint(0, 600) if r.random() < 0.9 else 0,
                  r.uniform(0.001, 0.05))


def act_port_check(tl: Timeline, t: float) -> dict[str, Any]:
    """A monitoring probe: connect to a service and hang up (some targets are down)."""
    r = tl.rng
    dst = r.choice(tl.net.servers["web"] + tl.net.servers["db"] + tl.net.servers["file"])
    port = r.choice((22, 80, 443, 3306, 5432, 25, 445, 8080))
    outcome = r.choices(("connrst", "ok", "rej", "s0_n"), (0.45, 0.4, 0.1, 0.05))[0]
    if outcome == "ok":
        return tl.tcp(t, dst, port, None, 0, r.randint(0, 120), r.uniform(0.0005, 0.02))
    return tl.attempt(t, dst, port, outcome, lan=True)


def act_ping(tl: Timeline, t: float) -> dict[str, Any]:
    r = tl.rng
    count = r.choice((1, 3, 5))
    return tl.icmp(t, tl.net.internal_peer(r), count, 56, r.random() < 0.85, r.uniform(0.5, 4.5))


def act_backup_pull(tl: Timeline, t: float) -> dict[str, Any]:
    """A backup server pulling a host's files over SSH (large responder bytes)."""
    r = tl.rng
    rb = _lognormal_int(r, 80_000_000, 1.5, 1_000_000, 20_000_000_000)
    return tl.tcp(t, tl.net.internal_peer(r), 22, "ssh", r.randint(20_000, 900_000), rb,
                  rb / r.uniform(2e7, 9e7), server_first=True)


def act_registry(tl: Timeline, t: float) -> dict[str, Any]:
    r = tl.rng
    rb = _lognormal_int(r, 20_000_000, 1.4, 50_000, 3_000_000_000)
    return tl.tcp(t, tl.net.server(r, "registry"), 5000, "http", r.randint(500, 40_000), rb,
                  rb / r.uniform(5e7, 3e8))


def act_voip(tl: Timeline, t: float) -> dict[str, Any]:
    r = tl.rng
    return tl.udp(t, tl.net.server(r, "web"), 5060, "sip", r.randint(400, 1100), r.randint(300, 900),
                  r.uniform(0.005, 0.2), sport=5060)


def act_streaming(tl: Timeline, t: float) -> dict[str, Any]:
    r = tl.rng
    tl.dns(t - r.uniform(0.002, 0.3))
    rb = _lognormal_int(r, 30_000_000, 1.0, 1_000_000, 4_000_000_000)
    return tl.tcp(t, public_ip(r), 443, "ssl", r.randint(10_000, 800_000), rb, rb / r.uniform(6e5, 3e6))


@dataclass(frozen=True)
class Profile:
    """A role's background traffic: Poisson activities (per minute) and periodic ones (period range, s)."""

    poisson: tuple[tuple[Activity, float], ...]
    periodic: tuple[tuple[Activity, float, float], ...] = ()


_IOT_COMMON: tuple[tuple[Activity, float], ...] = ((act_dns, 0.6), (act_ntp, 0.08), (act_web, 0.15))
PROFILES: dict[str, Profile] = {
    "iot_camera": Profile(_IOT_COMMON + ((act_upload, 0.05), (act_ssdp, 0.2)), ((act_telemetry, 45, 120),)),
    "iot_thermostat": Profile(_IOT_COMMON, ((act_telemetry, 30, 300),)),
    "smart_plug": Profile(_IOT_COMMON + ((act_ssdp, 0.3),), ((act_telemetry, 20, 90),)),
    "smart_tv": Profile(_IOT_COMMON + ((act_streaming, 0.4), (act_web, 0.6), (act_ssdp, 0.3)),
                        ((act_telemetry, 120, 600),)),
    "iot_hub": Profile(_IOT_COMMON + ((act_ssdp, 0.3),),
                       ((act_mqtt_local, 15, 60), (act_telemetry, 60, 300))),
    "printer": Profile(((act_dns, 0.3), (act_ntp, 0.05), (act_ssdp, 0.6), (act_snmp, 0.1)),
                       ((act_telemetry, 180, 600),)),
    "voip_phone": Profile(((act_dns, 0.4), (act_ntp, 0.05)), ((act_voip, 30, 120),)),
    "workstation": Profile(((act_dns, 3.0), (act_web, 2.6), (act_smb, 0.5), (act_ldap, 0.4), (act_mail, 0.2),
                            (act_ssh_admin, 0.05), (act_print, 0.03), (act_update, 0.03), (act_upload, 0.05),
                            (act_ntp, 0.02))),
    "web_server": Profile(((act_dns, 0.8), (act_db_query, 3.0), (act_web, 0.5), (act_syslog, 0.8),
                           (act_ntp, 0.05), (act_update, 0.01))),
    "db_server": Profile(((act_dns, 0.2), (act_ntp, 0.05), (act_syslog, 0.6), (act_db_query, 0.2),
                          (act_ldap, 0.1))),
    "file_server": Profile(((act_dns, 0.3), (act_ldap, 0.4), (act_syslog, 0.5), (act_ntp, 0.05),
                            (act_smb, 0.1))),
    "ci_runner": Profile(((act_dns, 2.0), (act_git, 1.0), (act_web, 0.8), (act_registry, 0.3),
                          (act_update, 0.1), (act_ntp, 0.03))),
    "monitoring_server": Profile(((act_dns, 0.8), (act_snmp, 4.0), (act_port_check, 3.0), (act_ping, 1.5),
                                  (act_ntp, 0.05))),
    "backup_server": Profile(((act_dns, 0.3), (act_backup_pull, 0.3), (act_ntp, 0.05), (act_syslog, 0.3))),
}


# --------------------------------------------------------------------------------------------------
# OT network activities (ood)
# --------------------------------------------------------------------------------------------------
def act_modbus(tl: Timeline, t: float) -> dict[str, Any]:
    """An HMI or SCADA server polling a PLC's registers: tiny, very regular Modbus/TCP exchanges."""
    r = tl.rng
    return tl.tcp(t, r.choice(tl.net.servers["plc"][:6]), 502, "modbus", 12 * r.randint(1, 4),
                  r.randint(9, 260), r.uniform(0.004, 0.06))


def act_dnp3(tl: Timeline, t: float) -> dict[str, Any]:
    r = tl.rng
    return tl.tcp(t, r.choice(tl.net.servers["rtu"]), 20000, "dnp3_tcp", r.randint(20, 200),
                  r.randint(20, 1200), r.uniform(0.01, 0.3))


def act_opcua(tl: Timeline, t: float) -> dict[str, Any]:
    r = tl.rng
    dst = r.choice((tl.net.server(r, "scada"), r.choice(tl.net.servers["plc"])))
    return tl.tcp(t, dst, 4840, None, r.randint(300, 20_000), r.randint(500, 400_000), r.uniform(0.05, 5.0))


def act_s7_program(tl: Timeline, t: float) -> dict[str, Any]:
    """An engineer downloading a program to a PLC over S7comm (large originator bytes, internal)."""
    r = tl.rng
    return tl.tcp(t, r.choice(tl.net.servers["plc"]), 102, "s7comm", r.randint(50_000, 4_000_000),
                  r.randint(2_000, 60_000), r.uniform(2.0, 90.0))


def act_plc_discovery(tl: Timeline, t: float) -> dict[str, Any]:
    """Engineering software enumerating PLCs (EtherNet/IP list-identity); many peers do not answer."""
    r = tl.rng
    return tl.udp(t, tl.net.internal_peer(r), 44818, None, 24, r.choice((0, 0, r.randint(60, 140))),
                  r.uniform(0.001, 0.02))


def act_rdp(tl: Timeline, t: float) -> dict[str, Any]:
    r = tl.rng
    dur = r.lognormvariate(math.log(600), 1.0)
    return tl.tcp(t, tl.net.server(r, "jump"), 3389, "ssl", int(dur * r.uniform(200, 900)),
                  int(dur * r.uniform(2000, 20000)), dur, _established_state(r))


def act_wsus(tl: Timeline, t: float) -> dict[str, Any]:
    r = tl.rng
    rb = _lognormal_int(r, 3_000_000, 1.6, 2_000, 800_000_000)
    return tl.tcp(t, tl.net.server(r, "wsus"), 8530, "http", r.randint(300, 5000), rb,
                  rb / r.uniform(2e6, 5e7))


def act_historian_web(tl: Timeline, t: float) -> dict[str, Any]:
    r = tl.rng
    port, service = (443, "ssl") if r.random() < 0.6 else (80, "http")
    return tl.tcp(t, tl.net.server(r, "historian_web"), port, service, r.randint(300, 3000),
                  _lognormal_int(r, 40_000, 1.2, 300, 20_000_000), r.uniform(0.05, 8.0),
                  _established_state(r))


def act_camera_stream(tl: Timeline, t: float) -> dict[str, Any]:
    r = tl.rng
    dur = r.uniform(30, 600)
    return tl.tcp(t, tl.net.server(r, "nvr"), 554, "rtsp", int(dur * r.uniform(1e5, 6e5)),
                  r.randint(500, 20_000), dur, _established_state(r))


_OT_COMMON: tuple[tuple[Activity, float], ...] = ((act_dns, 0.4), (act_ntp, 0.1), (act_syslog, 0.3))
OT_PROFILES: dict[str, Profile] = {
    "plc": Profile(((act_ntp, 0.2), (act_syslog, 0.4), (act_snmp, 0.2))),
    "rtu": Profile(((act_ntp, 0.2), (act_syslog, 0.4))),
    "hmi": Profile(_OT_COMMON + ((act_historian_web, 0.3),), ((act_modbus, 1, 10), (act_opcua, 20, 120))),
    "engineering_workstation": Profile(_OT_COMMON + ((act_s7_program, 0.05), (act_plc_discovery, 0.6),
                                                     (act_smb, 0.4), (act_rdp, 0.05), (act_wsus, 0.03),
                                                     (act_ldap, 0.3), (act_historian_web, 0.3))),
    "historian": Profile(_OT_COMMON, ((act_opcua, 2, 30), (act_dnp3, 5, 60))),
    "scada_server": Profile(_OT_COMMON + ((act_ldap, 0.1),), ((act_modbus, 1, 5), (act_dnp3, 5, 30))),
    "workstation": Profile(_OT_COMMON + ((act_web, 1.5), (act_smb, 0.6), (act_ldap, 0.4), (act_rdp, 0.1),
                                         (act_historian_web, 0.6), (act_wsus, 0.02), (act_mail, 0.2))),
    "jump_host": Profile(_OT_COMMON + ((act_rdp, 0.2), (act_historian_web, 0.4), (act_ssh_admin, 0.1),
                                       (act_smb, 0.2))),
    "ip_camera": Profile(((act_ntp, 0.1), (act_dns, 0.1)), ((act_camera_stream, 120, 600),)),
}


def _profile(tl: Timeline) -> Profile:
    return (OT_PROFILES if tl.net is OT_INDUSTRIAL else PROFILES)[tl.role]


def _background(tl: Timeline, t_end: float) -> None:
    """Fill the role's usual traffic over enough time before ``t_end`` to fill the window."""
    r, prof = tl.rng, _profile(tl)
    per_min = sum(rate for _, rate in prof.poisson) + sum(120.0 / (lo + hi) for _, lo, hi in prof.periodic)
    horizon = min(3600.0, max(240.0, 60.0 * 28 / per_min)) * r.uniform(0.6, 1.1)
    start = t_end - horizon
    for act, rate in prof.poisson:
        t = start + r.expovariate(rate / 60.0)
        while t < t_end - 0.5:
            act(tl, t)
            t += r.expovariate(rate / 60.0)
    for act, lo, hi in prof.periodic:
        period = r.uniform(lo, hi)
        for t in _jittered(r, start + r.uniform(0, period), period, r.uniform(0.03, 0.25), t_end - 0.5):
            act(tl, t)


def _background_activity(tl: Timeline) -> Activity:
    """One of the role's activities, chosen in proportion to how often it happens."""
    prof = _profile(tl)
    acts = [a for a, _ in prof.poisson] + [a for a, _, _ in prof.periodic]
    rates = [rate for _, rate in prof.poisson] + [120.0 / (lo + hi) for _, lo, hi in prof.periodic]
    return tl.rng.choices(acts, rates)[0]


# --------------------------------------------------------------------------------------------------
# Episodes: an attack or a notable benign activity ending with the flow to classify.
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Episode:
    target: dict[str, Any]
    label: str
    family: str
    p: float
    difficulty: str


def _malicious(target: dict[str, Any], family: str, hard: bool) -> Episode:
    return Episode(target, "Malicious", family, 1.0, "hard" if hard else "easy")


def _benign(target: dict[str, Any], family: str, hard: bool) -> Episode:
    return Episode(target, "Benign", family, 0.0, "hard" if hard else "easy")


def _ambiguous(tl: Timeline, target: dict[str, Any], p: float, attack: str, twin: str) -> Episode:
    """The flows were drawn without knowing the label; the label is sampled from the latent ``p``."""
    p = round(p, 4)
    if tl.rng.random() < p:
        return Episode(target, "Malicious", attack, p, "ambiguous")
    return Episode(target, "Benign", twin, p, "ambiguous")


_SCAN_PORTS = (23, 23, 2323, 22, 80, 8080, 443, 445, 5555, 7547, 37215, 52869, 81, 8443, 3389, 53)
_COMMON_PORTS = (21, 22, 23, 25, 53, 80, 110, 135, 139, 143, 443, 445, 993, 1433, 3306, 3389, 5432, 5900,
                 8080, 8443)


def _probe_outcome(rng: random.Random, lan: bool) -> str:
    """What a scan probe finds: mostly nothing, sometimes a closed port, rarely an open one."""
    if lan:
        return rng.choices(("rej", "s0_1", "s0_n", "synrst"), (0.55, 0.25, 0.1, 0.1))[0]
    return rng.choices(("s0_1", "s0_n", "rej", "synrst"), (0.6, 0.15, 0.17, 0.08))[0]


def _open_port_hit(tl: Timeline, t: float, dst: str, port: int) -> dict[str, Any]:
    """A scan that found a listening service and exchanged a banner: a normal-looking short session."""
    r = tl.rng
    service = {22: "ssh", 23: "telnet", 2323: "telnet", 80: "http", 8080: "http", 443: "ssl",
               445: "smb"}.get(port)
    return tl.tcp(t, dst, port, service, r.randint(0, 300), r.randint(20, 1200), r.uniform(0.05, 3.0),
                  r.choice(("SF", "RSTO", "RSTR")), server_first=port in (21, 22, 23, 2323, 25))


def ep_portscan_horizontal(tl: Timeline, t: float) -> Episode:
    """One port across many addresses (Mirai-style on the Internet, or a sweep of the local subnet)."""
    r = tl.rng
    port, lan = r.choice(_SCAN_PORTS), r.random() < 0.35
    hard = r.random() < 0.35
    slow = hard and r.random() < 0.5
    gap = (r.uniform(4.0, 25.0) if slow else r.uniform(0.01, 0.8))
    n = r.randint(10, 20) if slow else r.randint(22, 45)
    for i in range(n, 0, -1):
        dst = tl.net.internal_peer(r) if lan else public_ip(r)
        tl.attempt(t - i * gap * r.uniform(0.5, 1.5), dst, port, _probe_outcome(r, lan), lan)
    dst = tl.net.internal_peer(r) if lan else public_ip(r)
    if hard and not slow:
        return _malicious(_open_port_hit(tl, t, dst, port), "portscan_horizontal", hard=True)
    return _malicious(tl.attempt(t, dst, port, _probe_outcome(r, lan), lan), "portscan_horizontal", hard)


def ep_portscan_vertical(tl: Timeline, t: float) -> Episode:
    """Many ports of one host, probed in order or at random (nmap-style)."""
    r = tl.rng
    lan = r.random() < 0.75
    servers = tl.net.servers["web"] + tl.net.servers["db"] + tl.net.servers["file"]
    victim = r.choice(servers) if lan else public_ip(r)
    hard = r.random() < 0.35
    gap = r.uniform(2.0, 15.0) if hard else r.uniform(0.002, 0.3)
    n = r.randint(12, 20) if hard else r.randint(22, 50)
    ports = list(_COMMON_PORTS) + [r.randint(1, 65535) for _ in range(n)]
    r.shuffle(ports)
    for i in range(n, 0, -1):
        port = ports[i]
        tl.attempt(t - i * gap * r.uniform(0.6, 1.4), victim, port, _probe_outcome(r, lan), lan)
    port = r.choice(_COMMON_PORTS)
    if hard and r.random() < 0.6:
        return _malicious(_open_port_hit(tl, t, victim, port), "portscan_vertical", hard=True)
    return _malicious(tl.attempt(t, victim, port, _probe_outcome(r, lan), lan), "portscan_vertical", hard)


def _telnet_login(tl: Timeline, t: float, dst: str, port: int) -> dict[str, Any]:
    r = tl.rng
    return tl.tcp(t, dst, port, "telnet", r.randint(8, 140), r.randint(25, 420), r.uniform(0.3, 7.0),
                  r.choices(("SF", "RSTO", "RSTR"), (0.7, 0.15, 0.15))[0], server_first=True)


def ep_telnet_bruteforce(tl: Timeline, t: float) -> Episode:
    """Mirai: probe port 23/2323 at random addresses, then try default credentials where it answers."""
    r = tl.rng
    port = 23 if r.random() < 0.75 else 2323
    victims = [public_ip(r) if r.random() < 0.7 else tl.net.internal_peer(r) for _ in range(r.randint(1, 3))]
    hard = r.random() < 0.3
    gap = r.uniform(8.0, 40.0) if hard else r.uniform(0.3, 4.0)
    mix_scan = 0.15 if hard else r.uniform(0.0, 0.5)
    for i in range(r.randint(10, 16) if hard else r.randint(22, 40), 0, -1):
        ts = t - i * gap * r.uniform(0.5, 1.5)
        if r.random() < mix_scan:
            tl.attempt(ts, public_ip(r), port, _probe_outcome(r, lan=False), lan=False)
        else:
            _telnet_login(tl, ts, r.choice(victims), port)
    return _malicious(_telnet_login(tl, t, r.choice(victims), port), "telnet_bruteforce", hard)


def _ssh_auth_attempt(tl: Timeline, t: float, dst: str) -> dict[str, Any]:
    r = tl.rng
    return tl.tcp(t, dst, 22, "ssh", r.randint(1200, 2700), r.randint(1700, 3900), r.uniform(0.6, 4.5),
                  r.choices(("SF", "RSTO", "RSTR"), (0.75, 0.1, 0.15))[0], server_first=True)


def ep_ssh_bruteforce(tl: Timeline, t: float) -> Episode:
    """Password guessing (SSH-Patator): the same server, connection after connection, failing auth."""
    r = tl.rng
    victim = r.choice(tl.net.servers["web"] + tl.net.servers["db"] + tl.net.servers["git"]) \
        if r.random() < 0.5 else public_ip(r)
    hard = r.random() < 0.3
    gap = r.uniform(10.0, 45.0) if hard else r.uniform(0.4, 5.0)
    for i in range(r.randint(8, 14) if hard else r.randint(20, 35), 0, -1):
        _ssh_auth_attempt(tl, t - i * gap * r.uniform(0.7, 1.3), victim)
    return _malicious(_ssh_auth_attempt(tl, t, victim), "ssh_bruteforce", hard)


_CC_PORTS = ((443, None), (443, "ssl"), (80, "http"), (8080, "http"), (6667, None), (1312, None),
             (5555, None), (4444, None), (23, None), (8443, "ssl"), (9000, None), (53, None))


def _beacons(tl: Timeline, t: float, dst: str, port: int, service: str | None, period: float, cv: float,
             size: tuple[int, int], count: int) -> dict[str, Any]:
    """A series of small check-ins to one server; returns the last one (at ``t``)."""
    r = tl.rng
    times = [t]
    for _ in range(count):
        times.append(times[-1] - max(0.5, r.gauss(period, period * cv)))
    flow: dict[str, Any] = {}
    for ts in reversed(times):
        flow = tl.tcp(ts, dst, port, service, size[0] + r.randint(0, 3) * 8, size[1] + r.randint(0, 2) * 8,
                      r.uniform(0.05, 0.9), "SF" if r.random() < 0.9 else "RSTR")
    return flow


def ep_cc_heartbeat(tl: Timeline, t: float) -> Episode:
    """A bot checking in with its C&C server: fixed-size messages at a fixed interval, often to odd ports."""
    r = tl.rng
    port, service = r.choice(_CC_PORTS)
    jitter = r.uniform(0.08, 0.25) if r.random() < 0.6 else r.uniform(0.0, 0.04)  # some bots randomise sleep
    hard = service is not None or jitter > 0.05
    period = r.uniform(5.0, 60.0)
    size = (r.randint(20, 300), r.randint(0, 200))
    target = _beacons(tl, t, public_ip(r), port, service, period, jitter, size, r.randint(8, 20))
    return _malicious(target, "cc_heartbeat", hard)


def ep_ddos_flood(tl: Timeline, t: float) -> Episode:
    """A bot flooding a victim (UDP, SYN, HTTP GET or ICMP): one destination, many flows per second."""
    r = tl.rng
    victim = public_ip(r)
    kind = r.choice(("udp", "udp_plain", "syn", "http", "icmp"))
    gap = r.uniform(0.002, 0.3)
    port = r.choice((53, 80, 443, 123, 19, 1900, 27015))
    target: dict[str, Any] = {}
    for i in range(r.randint(25, 60), -1, -1):
        ts = t - i * gap * r.uniform(0.5, 1.5)
        if kind == "udp":
            target = tl.udp(ts, victim, r.randint(1, 65535), None, r.randint(512, 1460), 0, None)
        elif kind == "udp_plain":
            n = r.randint(2, 400)
            target = tl.udp(ts, victim, port, None, n * r.choice((512, 1024, 1400)), 0,
                            n * r.uniform(0.0005, 0.01), pkts=(n, 0))
        elif kind == "syn":
            target = tl.attempt(ts, victim, port if port in (80, 443) else 80,
                                r.choice(("s0_1", "s0_1", "s0_n")),
                                lan=False)
        elif kind == "http":
            target = tl.tcp(ts, victim, 80, "http", r.randint(60, 400), r.randint(0, 2500),
                            r.uniform(0.05, 2.0), r.choice(("SF", "RSTO", "S1")))
        else:
            n = r.randint(5, 800)
            target = tl.icmp(ts, victim, n, r.choice((56, 512, 1472)), r.random() < 0.5,
                             n * r.uniform(0.001, 0.02))
    return _malicious(target, "ddos_flood", hard=kind in ("http", "udp_plain"))


def ep_malware_download(tl: Timeline, t: float) -> Episode:
    """A dropper fetching payloads from a loader by bare IP (no DNS), often one build per CPU architecture."""
    r = tl.rng
    loader = public_ip(r)
    port, service = r.choice(((80, "http"), (8080, "http"), (81, "http"), (5555, "http"), (443, "ssl"),
                              (80, "http")))
    hard = service == "ssl" or r.random() < 0.3
    ts = t - r.uniform(5.0, 40.0)
    if r.random() < 0.5:  # a failed first try on another port
        tl.attempt(ts - r.uniform(1.0, 5.0), loader, r.choice((80, 8080, 8081)), r.choice(("rej", "s0_n")),
                   lan=False)
    tl.tcp(ts, loader, port, service, r.randint(90, 300), r.randint(400, 4000),
           r.uniform(0.1, 1.5))  # the script
    builds = r.randint(1, 8)
    for i in range(builds, 0, -1):
        tl.tcp(t - i * r.uniform(0.5, 4.0), loader, port, service, r.randint(90, 300),
               r.randint(30_000, 250_000), r.uniform(0.3, 6.0))
    if r.random() < 0.5:  # the C&C it reported to before fetching the payload
        cc = public_ip(r)
        _beacons(tl, ts - r.uniform(2.0, 20.0), cc, r.choice((6667, 443, 23, 1312)), None, r.uniform(5, 30),
                 0.02, (r.randint(20, 200), r.randint(0, 100)), r.randint(3, 8))
    rb = r.randint(30_000, 1_500_000) if hard else r.randint(30_000, 250_000)
    target = tl.tcp(t, loader, port, service, r.randint(90, 300), rb, rb / r.uniform(2e4, 1e6))
    return _malicious(target, "malware_download", hard)


def _collection(tl: Timeline, t: float, reads: int) -> None:
    """Staging before exfiltration: bulk reads from file shares and databases within minutes."""
    r = tl.rng
    for _ in range(reads):
        ts = t - r.uniform(5.0, 240.0)
        if r.random() < 0.6:
            tl.tcp(ts, tl.net.server(r, "file"), 445, "smb", r.randint(2_000, 40_000),
                   _lognormal_int(r, 40_000_000, 1.0, 3_000_000, 3_000_000_000), r.uniform(5.0, 200.0))
        else:
            port, service = r.choice(((5432, "postgresql"), (3306, "mysql")))
            tl.tcp(ts, tl.net.server(r, "db"), port, service, r.randint(400, 9_000),
                   _lognormal_int(r, 20_000_000, 1.0, 2_000_000, 2_000_000_000), r.uniform(3.0, 120.0))


def ep_exfiltration(tl: Timeline, t: float) -> Episode:
    """Bulk reads from internal servers, then an upload to an address the host never used before."""
    r = tl.rng
    _collection(tl, t, r.randint(2, 6))
    port, service = r.choice(((443, "ssl"), (443, "ssl"), (22, "ssh"), (21, "ftp"), (8443, "ssl"),
                              (4444, None), (53, None)))
    hard = service == "ssl"
    ob = _lognormal_int(r, 60_000_000, 1.4, 3_000_000, 8_000_000_000)
    dst = public_ip(r)
    target = tl.tcp(t, dst, port, service, ob, r.randint(2_000, 400_000), ob / r.uniform(3e5, 6e6),
                    "SF" if r.random() < 0.85 else "RSTR", server_first=port in (21, 22))
    return _malicious(target, "exfiltration", hard)


# ---- benign twins of the attack families ---------------------------------------------------------
def ep_monitoring_sweep(tl: Timeline, t: float) -> Episode:
    """A monitoring server's discovery sweep: like a scan, but from the host whose job is to scan."""
    r = tl.rng
    port = r.choice((22, 80, 443, 161, 3389, 445, 23, 8080))
    gap = r.uniform(0.01, 3.0)
    target: dict[str, Any] = {}
    for i in range(r.randint(20, 45), -1, -1):
        ts = t - i * gap * r.uniform(0.5, 1.5)
        dst = tl.net.internal_peer(r)
        kind = r.random()
        if kind < 0.2:
            target = tl.icmp(ts, dst, 1, 56, r.random() < 0.4, 0.0)
        elif kind < 0.3:
            target = act_port_check(tl, ts)
        else:
            target = tl.attempt(ts, dst, port, _probe_outcome(r, lan=True), lan=True)
    return _benign(target, "benign_monitoring_scan", hard=True)


def ep_failed_retry(tl: Timeline, t: float) -> Episode:
    """An application retrying a server that is down: S0/REJ again and again, but to one address."""
    r = tl.rng
    dst = tl.net.internal_peer(r) if r.random() < 0.5 else public_ip(r)
    lan = is_internal(dst)
    port = r.choice((443, 80, 8080, 8883, 1883, 5222, 22, 445, 3389, 23, 5432))
    outcome = r.choice(("s0_n", "s0_1", "rej")) if lan else r.choice(("s0_n", "s0_1", "s0_n"))
    backoff = r.uniform(2.0, 30.0)
    count = r.randint(3, 9)
    for i in range(count, 0, -1):
        tl.attempt(t - backoff * (2 ** min(i, 4) - 1) * r.uniform(0.9, 1.1), dst, port, outcome, lan)
    return _benign(tl.attempt(t, dst, port, outcome, lan), "benign_failed_conn", hard=True)


def ep_config_backup(tl: Timeline, t: float) -> Episode:
    """An automation host pulling switch configurations over telnet, one switch after another."""
    r = tl.rng
    switches = list(tl.net.servers["switch"])
    r.shuffle(switches)
    gap = r.uniform(1.0, 20.0)
    chosen = switches[: r.randint(6, 20)]
    target: dict[str, Any] = {}
    for i, sw in enumerate(chosen):
        target = tl.tcp(t - (len(chosen) - 1 - i) * gap * r.uniform(0.7, 1.3), sw, 23, "telnet",
                        r.randint(30, 260), r.randint(1_500, 60_000), r.uniform(1.0, 12.0), server_first=True)
    return _benign(target, "benign_config_backup", hard=True)


def ep_telnet_admin(tl: Timeline, t: float) -> Episode:
    """An administrator's interactive telnet session to a legacy device."""
    r = tl.rng
    dur = r.lognormvariate(math.log(150), 1.0)
    dst = r.choice(tl.net.servers["switch"] + tl.net.servers["printer"])
    target = tl.tcp(t, dst, r.choice((23, 23, 2323)), "telnet", int(40 + dur * r.uniform(0.5, 5)),
                    int(300 + dur * r.uniform(5, 150)), dur, _established_state(r), server_first=True)
    return _benign(target, "benign_telnet_admin", hard=True)


def ep_ansible(tl: Timeline, t: float) -> Episode:
    """Configuration management: SSH to many servers in parallel, each session doing real work."""
    r = tl.rng
    hosts = [tl.net.internal_peer(r) for _ in range(r.randint(8, 30))]
    rounds = r.randint(1, 3)
    target: dict[str, Any] = {}
    for k in range(rounds):
        for i, dst in enumerate(hosts):
            target = tl.tcp(t - (rounds - 1 - k) * 60 - (len(hosts) - 1 - i) * r.uniform(0.05, 1.5), dst, 22,
                            "ssh", r.randint(3_000, 90_000), r.randint(2_500, 60_000), r.uniform(0.6, 25.0),
                            server_first=True)
    return _benign(target, "benign_ssh", hard=True)


def ep_scripted_ssh(tl: Timeline, t: float) -> Episode:
    """A cron job running a command on one server over SSH at a fixed interval (key-based, succeeds)."""
    r = tl.rng
    dst = r.choice(tl.net.servers["web"] + tl.net.servers["db"] + tl.net.servers["git"])
    period = r.uniform(20.0, 120.0)
    target: dict[str, Any] = {}
    for i in range(r.randint(6, 15), -1, -1):
        target = tl.tcp(t - i * period * r.uniform(0.98, 1.02), dst, 22, "ssh", r.randint(2_600, 4_800),
                        r.randint(3_000, 9_000), r.uniform(0.3, 2.5), server_first=True)
    return _benign(target, "benign_ssh", hard=True)


def ep_db_pool(tl: Timeline, t: float) -> Episode:
    """An application server opening many short database connections per second (pool churn)."""
    r = tl.rng
    gap = r.uniform(0.02, 1.0)
    target: dict[str, Any] = {}
    for i in range(r.randint(20, 45), -1, -1):
        target = act_db_query(tl, t - i * gap * r.uniform(0.5, 1.5))
    return _benign(target, "benign_db", hard=True)


def ep_syslog_burst(tl: Timeline, t: float) -> Episode:
    """A burst of one-way UDP log datagrams (looks like a UDP flood in a single record)."""
    r = tl.rng
    gap = r.uniform(0.05, 3.0)
    target: dict[str, Any] = {}
    for i in range(r.randint(5, 25), -1, -1):
        target = act_syslog(tl, t - i * gap * r.uniform(0.5, 1.5))
    return _benign(target, "benign_syslog", hard=True)


def ep_backup(tl: Timeline, t: float) -> Episode:
    """A nightly backup: several large chunk uploads to the same backup target."""
    r = tl.rng
    internal = r.random() < 0.5
    dst = tl.net.server(r, "backup") if internal else r.choice(tl.net.clouds)
    port, service = r.choice(((22, "ssh"), (873, None))) if internal else (443, "ssl")
    chunk = _lognormal_int(r, 80_000_000, 1.0, 3_000_000, 4_000_000_000)
    if not internal:
        tl.dns(t - r.uniform(60.0, 900.0))
    ts = t
    target: dict[str, Any] = {}
    times = []
    for _ in range(r.randint(2, 8)):
        times.append(ts)
        ts -= chunk / r.uniform(2e6, 5e7) + r.uniform(1.0, 20.0)
    for ts in reversed(times):
        ob = int(chunk * r.uniform(0.6, 1.4))
        target = tl.tcp(ts, dst, port, service, ob, r.randint(5_000, 500_000), ob / r.uniform(2e6, 5e7),
                        server_first=port == 22)
    return _benign(target, "benign_backup", hard=True)


def ep_camera_upload(tl: Timeline, t: float) -> Episode:
    """A cloud camera uploading a motion clip: a big upload from an IoT device to its vendor cloud."""
    r = tl.rng
    ob = _lognormal_int(r, 6_000_000, 1.0, 400_000, 300_000_000)
    target = tl.tcp(t, tl.cloud, 443, "ssl", ob, r.randint(3_000, 30_000), ob / r.uniform(3e5, 3e6))
    return _benign(target, "benign_camera_upload", hard=True)


def ep_telemetry(tl: Timeline, t: float) -> Episode:
    """Device telemetry with its natural variation in payload size and timing."""
    r = tl.rng
    period = r.uniform(10.0, 90.0)
    target: dict[str, Any] = {}
    for ts in reversed([t - i * period * r.uniform(0.85, 1.15) for i in range(r.randint(6, 14))]):
        target = act_telemetry(tl, ts)
    return _benign(target, "benign_telemetry", hard=True)


def ep_update(tl: Timeline, t: float) -> Episode:
    return _benign(act_update(tl, t), "benign_update", hard=True)


_FAMILY_OF: dict[Activity, str] = {
    act_dns: "benign_dns", act_ntp: "benign_ntp", act_web: "benign_web", act_upload: "benign_web",
    act_telemetry: "benign_telemetry", act_mqtt_local: "benign_mqtt", act_ssdp: "benign_discovery",
    act_syslog: "benign_syslog", act_smb: "benign_smb", act_ldap: "benign_directory", act_mail: "benign_mail",
    act_ssh_admin: "benign_ssh", act_git: "benign_git", act_db_query: "benign_db", act_print: "benign_print",
    act_update: "benign_update", act_snmp: "benign_monitoring", act_port_check: "benign_monitoring_scan",
    act_ping: "benign_monitoring", act_backup_pull: "benign_backup", act_registry: "benign_update",
    act_voip: "benign_voip", act_streaming: "benign_web", act_modbus: "benign_modbus",
    act_dnp3: "benign_dnp3",
    act_opcua: "benign_opcua", act_s7_program: "benign_s7_program", act_plc_discovery: "benign_discovery",
    act_rdp: "benign_rdp", act_wsus: "benign_update", act_historian_web: "benign_web",
    act_camera_stream: "benign_video",
}


def ep_background(tl: Timeline, t: float) -> Episode:
    """An ordinary flow of the host's usual traffic."""
    act = _background_activity(tl)
    return _benign(act(tl, t), _FAMILY_OF[act], hard=False)


# ---- ambiguous: features drawn without the label; the latent p is a function of the draw ----------
def ep_amb_beacon(tl: Timeline, t: float) -> Episode:
    """Regular small HTTPS check-ins to an unfamiliar address: an updater, or a beacon hiding in TLS."""
    r = tl.rng
    cv = r.uniform(0.02, 0.2)
    period = r.uniform(20.0, 120.0)
    target = _beacons(tl, t, public_ip(r), 443, "ssl", period, cv,
                      (r.randint(200, 900), r.randint(100, 1500)),
                      r.randint(4, 9))
    return _ambiguous(tl, target, 0.75 - 2.5 * cv, "cc_heartbeat", "benign_telemetry")


def ep_amb_ssh_failures(tl: Timeline, t: float) -> Episode:
    """A few short SSH connections to one server: a user mistyping a password, or a slow guesser."""
    r = tl.rng
    dst = r.choice(tl.net.servers["web"] + tl.net.servers["db"] + tl.net.servers["git"])
    k = r.randint(3, 8)
    for i in range(k, 0, -1):
        _ssh_auth_attempt(tl, t - i * r.uniform(4.0, 30.0), dst)
    return _ambiguous(tl, _ssh_auth_attempt(tl, t, dst), 0.1 + 0.06 * k, "ssh_bruteforce", "benign_ssh")


def ep_amb_upload(tl: Timeline, t: float) -> Episode:
    """A large upload to a new address after a few internal reads: a sync client, or exfiltration."""
    r = tl.rng
    reads = r.randint(0, 2)
    _collection(tl, t, reads)
    if r.random() < 0.5:
        tl.dns(t - r.uniform(0.01, 0.5))
    ob = _lognormal_int(r, 30_000_000, 1.2, 2_000_000, 2_000_000_000)
    target = tl.tcp(t, public_ip(r), 443, "ssl", ob, r.randint(3_000, 90_000), ob / r.uniform(3e5, 6e6))
    return _ambiguous(tl, target, 0.2 + 0.15 * reads, "exfiltration", "benign_web")


def ep_amb_probe(tl: Timeline, t: float) -> Episode:
    """A handful of failed connections to a few internal hosts: stale bookmarks, or a cautious scan."""
    r = tl.rng
    port = r.choice((445, 3389, 22, 80, 443, 5900))
    hosts = [tl.net.internal_peer(r) for _ in range(r.randint(2, 5))]
    for i in range(r.randint(3, 6), 0, -1):
        tl.attempt(t - i * r.uniform(2.0, 20.0), r.choice(hosts), port, r.choice(("rej", "s0_n")), lan=True)
    target = tl.attempt(t, r.choice(hosts), port, r.choice(("rej", "s0_n")), lan=True)
    return _ambiguous(tl, target, 0.1 + 0.07 * len(set(hosts)), "portscan_horizontal", "benign_failed_conn")


def ep_amb_download(tl: Timeline, t: float) -> Episode:
    """A plain-HTTP download of an executable-sized file from a bare IP, with or without a DNS lookup."""
    r = tl.rng
    looked_up = r.random() < 0.5
    if looked_up:
        tl.dns(t - r.uniform(0.01, 0.5))
    rb = r.randint(80_000, 3_000_000)
    target = tl.tcp(t, public_ip(r), r.choice((80, 8080)), "http", r.randint(120, 400), rb,
                    rb / r.uniform(1e5, 3e6))
    return _ambiguous(tl, target, 0.3 if looked_up else 0.7, "malware_download", "benign_update")


# ---- ood attacks (never in train/dev/test) -------------------------------------------------------
def ep_dns_tunneling(tl: Timeline, t: float) -> Episode:
    """Data smuggled in DNS queries: long names, TXT answers, at a steady high rate to one resolver."""
    r = tl.rng
    hard = r.random() < 0.3
    gap = r.uniform(5.0, 25.0) if hard else r.uniform(0.05, 2.0)
    target: dict[str, Any] = {}
    for i in range(r.randint(12, 20) if hard else r.randint(25, 50), -1, -1):
        target = tl.dns(t - i * gap * r.uniform(0.7, 1.3), qsize=r.randint(90, 250))
    return _malicious(target, "dns_tunneling", hard)


def ep_http_slowloris(tl: Timeline, t: float) -> Episode:
    """Slowloris: many connections to one web server, each kept open with a trickle of header bytes."""
    r = tl.rng
    server = tl.net.server(r, "historian_web")
    port, service = r.choice(((80, "http"), (443, "ssl"), (80, None)))
    target: dict[str, Any] = {}
    for i in range(r.randint(20, 40), -1, -1):
        dur = r.uniform(60.0, 900.0)
        state = r.choice(("S1", "RSTR", "SF", "RSTO"))
        target = tl.tcp(t - i * r.uniform(0.01, 0.4), server, port, service, int(dur / r.uniform(5, 15)) * 20,
                        0 if state in ("S1", "RSTO") else r.randint(200, 600), dur, state)
    return _malicious(target, "http_slowloris", hard=service is not None)


def ep_lateral_smb(tl: Timeline, t: float) -> Episode:
    """Worm-like lateral movement: SMB to host after host, sometimes pushing a service binary (PsExec)."""
    r = tl.rng
    gap = r.uniform(0.2, 8.0)
    target: dict[str, Any] = {}
    for i in range(r.randint(15, 35), -1, -1):
        ts, dst = t - i * gap * r.uniform(0.6, 1.4), tl.net.internal_peer(r)
        kind = r.random()
        if kind < 0.35:
            target = tl.attempt(ts, dst, 445, r.choice(("rej", "s0_n")), lan=True)
        elif kind < 0.5:
            target = tl.tcp(ts, dst, 135, "dce_rpc", r.randint(300, 2000), r.randint(200, 1500),
                            r.uniform(0.01, 0.5))
        else:
            ob = r.randint(1_500, 12_000) if r.random() < 0.7 else r.randint(100_000, 900_000)
            target = tl.tcp(ts, dst, 445, "smb", ob, r.randint(1_000, 8_000), r.uniform(0.05, 4.0))
    return _malicious(target, "lateral_smb", hard=target["conn_state"] == "SF")


def ep_modbus_poll(tl: Timeline, t: float) -> Episode:
    """SCADA polling: tiny, perfectly regular exchanges (looks like a C&C beacon to an IT-trained eye)."""
    r = tl.rng
    period = r.uniform(1.0, 10.0)
    plc = r.choice(tl.net.servers["plc"])
    target: dict[str, Any] = {}
    for i in range(r.randint(8, 20), -1, -1):
        target = tl.tcp(t - i * period * r.uniform(0.99, 1.01), plc, 502, "modbus", 12,
                        r.choice((11, 19, 27)), r.uniform(0.004, 0.02))
    return _benign(target, "benign_modbus", hard=True)


def ep_plc_discovery(tl: Timeline, t: float) -> Episode:
    """An engineering workstation enumerating PLCs: a sweep, but the workstation's job."""
    r = tl.rng
    gap = r.uniform(0.005, 0.3)
    target: dict[str, Any] = {}
    for i in range(r.randint(20, 40), -1, -1):
        target = act_plc_discovery(tl, t - i * gap * r.uniform(0.6, 1.4))
    return _benign(target, "benign_discovery", hard=True)


def ep_file_share(tl: Timeline, t: float) -> Episode:
    """A user copying documents from the file server: SMB, many connections, one server."""
    r = tl.rng
    target: dict[str, Any] = {}
    for i in range(r.randint(4, 12), -1, -1):
        target = act_smb(tl, t - i * r.uniform(0.5, 20.0))
    return _benign(target, "benign_smb", hard=True)


def ep_dns_burst(tl: Timeline, t: float) -> Episode:
    """A user opening a dashboard: a burst of ordinary lookups for the page's many hosts."""
    r = tl.rng
    target: dict[str, Any] = {}
    for i in range(r.randint(8, 25), -1, -1):
        target = tl.dns(t - i * r.uniform(0.02, 1.5), answered=r.random() > 0.05)
    return _benign(target, "benign_dns", hard=True)


def ep_dashboard_poll(tl: Timeline, t: float) -> Episode:
    """A historian dashboard refreshing: one short web request after another to the same server."""
    r = tl.rng
    server = tl.net.server(r, "historian_web")
    port, service = r.choice(((80, "http"), (443, "ssl")))
    period = r.uniform(1.0, 15.0)
    target: dict[str, Any] = {}
    for i in range(r.randint(10, 30), -1, -1):
        target = tl.tcp(t - i * period * r.uniform(0.8, 1.2), server, port, service, r.randint(250, 1500),
                        r.randint(400, 60_000), r.uniform(0.01, 1.5), _established_state(r))
    return _benign(target, "benign_web", hard=True)


def ep_amb_dns_volume(tl: Timeline, t: float) -> Episode:
    """A burst of DNS lookups with longish names: a browser pre-fetching, or a slow tunnel."""
    r = tl.rng
    qmax = r.randint(60, 120)
    target: dict[str, Any] = {}
    for i in range(r.randint(8, 16), -1, -1):
        target = tl.dns(t - i * r.uniform(0.5, 6.0), qsize=r.randint(40, qmax))
    return _ambiguous(tl, target, 0.1 + (qmax - 60) / 120, "dns_tunneling", "benign_dns")


# --------------------------------------------------------------------------------------------------
# Scenario tables and item assembly
# --------------------------------------------------------------------------------------------------
_IOT = ("iot_camera", "iot_thermostat", "smart_plug", "smart_tv", "iot_hub", "printer", "voip_phone")
_ENDPOINTS = ("workstation",)
_SERVERS = ("web_server", "db_server", "file_server")
_IOT_PLUS = _IOT + ("workstation", "web_server")


@dataclass(frozen=True)
class Scenario:
    build: Callable[[Timeline, float], Episode]
    weight: float
    roles: tuple[str, ...]


IN_DIST: tuple[Scenario, ...] = (
    Scenario(ep_portscan_horizontal, 0.06, _IOT_PLUS + ("ci_runner", "backup_server")),
    Scenario(ep_portscan_vertical, 0.045, _IOT + _ENDPOINTS + _SERVERS + ("ci_runner",)),
    Scenario(ep_telnet_bruteforce, 0.05, _IOT),
    Scenario(ep_ssh_bruteforce, 0.055, _ENDPOINTS + _SERVERS + ("ci_runner", "iot_camera", "iot_hub")),
    Scenario(ep_cc_heartbeat, 0.06, _IOT + _ENDPOINTS + _SERVERS),
    Scenario(ep_ddos_flood, 0.05, _IOT + ("web_server",)),
    Scenario(ep_malware_download, 0.05, _IOT + _ENDPOINTS + ("web_server",)),
    Scenario(ep_exfiltration, 0.05, _ENDPOINTS + _SERVERS + ("iot_camera", "backup_server")),
    Scenario(ep_amb_beacon, 0.03, _IOT + _ENDPOINTS),
    Scenario(ep_amb_ssh_failures, 0.025, _ENDPOINTS + ("ci_runner", "web_server")),
    Scenario(ep_amb_upload, 0.025, _ENDPOINTS + _SERVERS),
    Scenario(ep_amb_probe, 0.025, _ENDPOINTS + _IOT),
    Scenario(ep_amb_download, 0.02, _IOT + _ENDPOINTS),
    Scenario(ep_monitoring_sweep, 0.04, ("monitoring_server",)),
    Scenario(ep_failed_retry, 0.06, _IOT + _ENDPOINTS + _SERVERS + ("ci_runner",)),
    Scenario(ep_config_backup, 0.025, ("monitoring_server", "ci_runner", "backup_server")),
    Scenario(ep_telnet_admin, 0.015, _ENDPOINTS + ("monitoring_server",)),
    Scenario(ep_ansible, 0.025, ("ci_runner",)),
    Scenario(ep_scripted_ssh, 0.02, ("ci_runner", "monitoring_server", "backup_server", "web_server")),
    Scenario(ep_db_pool, 0.025, ("web_server",)),
    Scenario(ep_syslog_burst, 0.03, _SERVERS + ("printer", "iot_hub", "backup_server")),
    Scenario(ep_backup, 0.03, ("db_server", "file_server", "backup_server", "workstation")),
    Scenario(ep_camera_upload, 0.025, ("iot_camera",)),
    Scenario(ep_telemetry, 0.05, _IOT),
    Scenario(ep_update, 0.025, _IOT + _ENDPOINTS + _SERVERS + ("ci_runner",)),
    Scenario(ep_background, 0.15, tuple(PROFILES)),
)

_OT_CONTROL = ("hmi", "engineering_workstation", "workstation", "jump_host")
OOD: tuple[Scenario, ...] = (
    Scenario(ep_dns_tunneling, 0.15, _OT_CONTROL + ("historian",)),
    Scenario(ep_http_slowloris, 0.13, ("workstation", "jump_host", "engineering_workstation")),
    Scenario(ep_lateral_smb, 0.15, _OT_CONTROL),
    Scenario(ep_amb_dns_volume, 0.06, _OT_CONTROL),
    Scenario(ep_modbus_poll, 0.08, ("hmi", "scada_server")),
    Scenario(ep_plc_discovery, 0.06, ("engineering_workstation",)),
    Scenario(ep_file_share, 0.08, ("workstation", "engineering_workstation", "jump_host")),
    Scenario(ep_dns_burst, 0.06, _OT_CONTROL),
    Scenario(ep_dashboard_poll, 0.06, ("hmi", "workstation", "jump_host", "engineering_workstation")),
    Scenario(ep_syslog_burst, 0.04, ("plc", "rtu", "historian", "scada_server")),
    Scenario(ep_failed_retry, 0.05, tuple(OT_PROFILES)),
    Scenario(ep_background, 0.12, tuple(OT_PROFILES)),
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
    _background(tl, t)
    tl.flows.sort(key=lambda f: f["ts"])
    idx = next(i for i, f in enumerate(tl.flows) if f is episode.target)
    window = [f for f in tl.flows[:idx] if f["ts"] < episode.target["ts"]][-WINDOW:]
    inp = {"host": {"ip": tl.ip, "role": role}, "flow": episode.target, "window": window}
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
