"""E1 episodes whose flow to classify tells its label, and the ambiguous ones.

An episode adds the flows of one attack or notable benign activity, ending with the flow to classify (its
``target``). Here live the *easy* episodes (the flow, read with the host's role, is typical of its label: a
Mirai probe to port 37215, a UDP flood, a monitoring server's sweep) and the *ambiguous* ones (flows drawn
from one distribution shared by an attack and its twin; the label is sampled from a latent probability that
is a function of the draw, so a calibrated analyst reports a middle probability). The *hard* episodes, whose
flow carries no information at all, are in :mod:`pairs`.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any

from security_verifiers.envs.network_logs.activities import (
    FAMILY_OF,
    act_ad_lookup,
    act_bulk_download,
    act_cldap,
    act_cloud_session,
    act_db_query,
    act_dhcp,
    act_domain_refresh,
    act_kerberos,
    act_long_session,
    act_mdns,
    act_netbios,
    act_ntp_poll,
    act_plc_discovery,
    act_port_check,
    act_ssdp_search,
    act_syslog,
    act_sysvol,
    act_telemetry,
    background_activity,
)
from security_verifiers.envs.network_logs.sites import public_ip
from security_verifiers.envs.network_logs.traffic import Timeline, established_state, lognormal_int


@dataclass(frozen=True)
class Episode:
    target: dict[str, Any]
    label: str
    family: str
    p: float
    difficulty: str


def malicious(target: dict[str, Any], family: str, difficulty: str = "easy") -> Episode:
    return Episode(target, "Malicious", family, 1.0, difficulty)


def benign(target: dict[str, Any], family: str, difficulty: str = "easy") -> Episode:
    return Episode(target, "Benign", family, 0.0, difficulty)


def ambiguous(tl: Timeline, target: dict[str, Any], p: float, attack: str, twin: str) -> Episode:
    """The flows were drawn without knowing the label; the label is sampled from the latent ``p``."""
    p = round(p, 4)
    if tl.rng.random() < p:
        return Episode(target, "Malicious", attack, p, "ambiguous")
    return Episode(target, "Benign", twin, p, "ambiguous")


# ---- shared pieces of attacks -------------------------------------------------------------------------
SCAN_PORTS = (23, 23, 2323, 22, 80, 8080, 443, 445, 5555, 7547, 37215, 52869, 81, 8443, 3389, 53)
COMMON_PORTS = (21, 22, 23, 25, 53, 80, 110, 135, 139, 143, 443, 445, 993, 1433, 3306, 3389, 5432, 5900,
                8080, 8443)


def probe_outcome(rng: random.Random, lan: bool) -> str:
    """What a scan probe finds: mostly nothing, sometimes a closed port, rarely an open one."""
    if lan:
        return rng.choices(("rej", "s0_1", "s0_n", "synrst"), (0.55, 0.25, 0.1, 0.1))[0]
    return rng.choices(("s0_1", "s0_n", "rej", "synrst"), (0.6, 0.15, 0.17, 0.08))[0]


def telnet_login(tl: Timeline, t: float, dst: str, port: int) -> dict[str, Any]:
    """One telnet login attempt: a banner, a guessed user and password, a refusal."""
    r = tl.rng
    return tl.tcp(t, dst, port, "telnet", r.randint(8, 140), r.randint(25, 420), r.uniform(0.3, 7.0),
                  r.choices(("SF", "RSTO", "RSTR"), (0.7, 0.15, 0.15))[0], server_first=True)


def ssh_auth_attempt(tl: Timeline, t: float, dst: str) -> dict[str, Any]:
    """One SSH connection that fails authentication: key exchange, a few password tries, disconnect."""
    r = tl.rng
    return tl.tcp(t, dst, 22, "ssh", r.randint(1200, 2700), r.randint(1700, 3900), r.uniform(0.6, 4.5),
                  r.choices(("SF", "RSTO", "RSTR"), (0.75, 0.1, 0.15))[0], server_first=True)


def beacons(tl: Timeline, t: float, dst: str, port: int, service: str | None, period: float, cv: float,
            size: tuple[int, int], count: int) -> dict[str, Any]:
    """A series of fixed-size check-ins to one server ending at ``t``; returns the last one."""
    r = tl.rng
    times = [t]
    for _ in range(count):
        times.append(times[-1] - max(0.5, r.gauss(period, period * cv)))
    flow: dict[str, Any] = {}
    for ts in reversed(times):
        flow = tl.tcp(ts, dst, port, service, size[0] + r.randint(0, 3) * 8, size[1] + r.randint(0, 2) * 8,
                      r.uniform(0.05, 0.9), "SF" if r.random() < 0.9 else "RSTR")
    return flow


def collection(tl: Timeline, t: float, reads: int) -> None:
    """Staging before exfiltration: bulk reads from file shares and databases within minutes."""
    r = tl.rng
    for _ in range(reads):
        ts = t - r.uniform(5.0, 240.0)
        if r.random() < 0.6:
            tl.tcp(ts, tl.net.server(r, "file"), 445, "smb", r.randint(2_000, 40_000),
                   lognormal_int(r, 40_000_000, 1.0, 3_000_000, 3_000_000_000), r.uniform(5.0, 200.0))
        else:
            port, service = r.choice(((5432, "postgresql"), (3306, "mysql")))
            tl.tcp(ts, tl.net.server(r, "db"), port, service, r.randint(400, 9_000),
                   lognormal_int(r, 20_000_000, 1.0, 2_000_000, 2_000_000_000), r.uniform(3.0, 120.0))


# ---- easy attacks (in-distribution) -----------------------------------------------------------------
def ep_portscan_horizontal(tl: Timeline, t: float) -> Episode:
    """One port across many addresses at speed (Mirai-style on the Internet, or a sweep of the local subnet)."""
    r = tl.rng
    port, lan = r.choice(SCAN_PORTS), r.random() < 0.35
    gap = r.uniform(0.01, 0.8)
    for i in range(r.randint(22, 45), 0, -1):
        dst = tl.net.internal_peer(r) if lan else public_ip(r)
        tl.attempt(t - i * gap * r.uniform(0.5, 1.5), dst, port, probe_outcome(r, lan), lan)
    dst = tl.net.internal_peer(r) if lan else public_ip(r)
    return malicious(tl.attempt(t, dst, port, probe_outcome(r, lan), lan), "portscan_horizontal")


def ep_portscan_vertical(tl: Timeline, t: float) -> Episode:
    """Many ports of one host in quick succession, in order or at random (nmap-style)."""
    r = tl.rng
    lan = r.random() < 0.75
    victim = r.choice(tl.net.servers["web"] + tl.net.servers["db"] + tl.net.servers["file"]) if lan \
        else public_ip(r)
    gap = r.uniform(0.002, 0.3)
    n = r.randint(22, 50)
    ports = list(COMMON_PORTS) + [r.randint(1, 65535) for _ in range(n)]
    r.shuffle(ports)
    for i in range(n, 0, -1):
        tl.attempt(t - i * gap * r.uniform(0.6, 1.4), victim, ports[i], probe_outcome(r, lan), lan)
    port = r.choice(COMMON_PORTS)
    return malicious(tl.attempt(t, victim, port, probe_outcome(r, lan), lan), "portscan_vertical")


def ep_telnet_bruteforce(tl: Timeline, t: float) -> Episode:
    """Mirai: probe port 23/2323 at random addresses, then try default credentials where it answers."""
    r = tl.rng
    port = 23 if r.random() < 0.75 else 2323
    victims = [public_ip(r) if r.random() < 0.7 else tl.net.internal_peer(r) for _ in range(r.randint(1, 3))]
    gap = r.uniform(0.3, 4.0)
    mix_scan = r.uniform(0.0, 0.5)
    for i in range(r.randint(22, 40), 0, -1):
        ts = t - i * gap * r.uniform(0.5, 1.5)
        if r.random() < mix_scan:
            tl.attempt(ts, public_ip(r), port, probe_outcome(r, lan=False), lan=False)
        else:
            telnet_login(tl, ts, r.choice(victims), port)
    return malicious(telnet_login(tl, t, r.choice(victims), port), "telnet_bruteforce")


def ep_ssh_bruteforce(tl: Timeline, t: float) -> Episode:
    """Password guessing (SSH-Patator): the same server, connection after connection, failing auth."""
    r = tl.rng
    victim = r.choice(tl.net.servers["web"] + tl.net.servers["db"] + tl.net.servers["git"]) \
        if r.random() < 0.5 else public_ip(r)
    gap = r.uniform(0.4, 5.0)
    for i in range(r.randint(20, 35), 0, -1):
        ssh_auth_attempt(tl, t - i * gap * r.uniform(0.7, 1.3), victim)
    return malicious(ssh_auth_attempt(tl, t, victim), "ssh_bruteforce")


_ODD_CC_PORTS = ((6667, None), (1312, None), (5555, None), (4444, None), (23, None), (9000, None), (53, None))


def ep_cc_heartbeat(tl: Timeline, t: float) -> Episode:
    """A bot checking in with its C&C server on an odd port, at a clockwork interval, with fixed-size messages (or,
    when the server is gone, SYNs that go unanswered at the same clockwork interval, as in many IoT-23 captures)."""
    r = tl.rng
    port, service = r.choice(_ODD_CC_PORTS)
    if r.random() < 0.3:  # the C&C server is gone (taken down, not yet up): the bot keeps knocking, unanswered
        server, period = public_ip(r), r.uniform(5.0, 120.0)
        times = [t - i * max(0.5, r.gauss(period, period * 0.04)) for i in range(r.randint(6, 16), 0, -1)]
        for ts in times:
            tl.attempt(ts, server, port, r.choice(("s0_1", "s0_os")), lan=False)
        return malicious(tl.attempt(t, server, port, r.choice(("s0_1", "s0_os")), lan=False), "cc_heartbeat")
    target = beacons(tl, t, public_ip(r), port, service, r.uniform(5.0, 60.0), r.uniform(0.0, 0.04),
                     (r.randint(20, 300), r.randint(0, 200)), r.randint(8, 20))
    return malicious(target, "cc_heartbeat")


def ep_ddos_flood(tl: Timeline, t: float) -> Episode:
    """A bot flooding a victim with UDP, SYNs or ICMP: one destination, many flows per second."""
    r = tl.rng
    victim = public_ip(r)
    kind = r.choice(("udp", "udp_plain", "syn", "icmp"))
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
            target = tl.attempt(ts, victim, port if port in (80, 443) else 80, r.choice(("s0_1", "s0_1", "s0_n")),
                                lan=False)
        else:
            n = r.randint(5, 800)
            target = tl.icmp(ts, victim, n, r.choice((56, 512, 1472)), r.random() < 0.5,
                             n * r.uniform(0.001, 0.02))
    return malicious(target, "ddos_flood")


def dropper_context(tl: Timeline, t: float, loader: str, port: int, service: str | None) -> None:
    """What a dropper does before fetching its payload: a failed try, the script, other builds, its C&C."""
    r = tl.rng
    ts = t - r.uniform(5.0, 40.0)
    if r.random() < 0.5:
        tl.attempt(ts - r.uniform(1.0, 5.0), loader, r.choice((80, 8080, 8081)), r.choice(("rej", "s0_n")),
                   lan=False)
    tl.tcp(ts, loader, port, service, r.randint(90, 300), r.randint(400, 4000), r.uniform(0.1, 1.5))
    for i in range(r.randint(0, 7), 0, -1):
        tl.tcp(t - i * r.uniform(0.5, 4.0), loader, port, service, r.randint(90, 300),
               r.randint(30_000, 250_000), r.uniform(0.3, 6.0))
    if r.random() < 0.5:
        beacons(tl, ts - r.uniform(2.0, 20.0), public_ip(r), r.choice((6667, 443, 23, 1312)), None,
                r.uniform(5, 30), 0.02, (r.randint(20, 200), r.randint(0, 100)), r.randint(3, 8))


def ep_malware_download(tl: Timeline, t: float) -> Episode:
    """A bot fetching an executable build from a loader by bare IP, on a port web clients rarely use."""
    r = tl.rng
    loader = public_ip(r)
    port = r.choice((81, 5555, 8081, 8088, 1337))
    dropper_context(tl, t, loader, port, "http")
    rb = r.randint(30_000, 250_000)
    target = tl.tcp(t, loader, port, "http", r.randint(90, 300), rb, rb / r.uniform(2e4, 1e6))
    return malicious(target, "malware_download")


def ep_exfiltration(tl: Timeline, t: float) -> Episode:
    """Bulk reads from internal servers, then an upload to a new address over a protocol uploads rarely use."""
    r = tl.rng
    collection(tl, t, r.randint(2, 6))
    port, service = r.choice(((21, "ftp"), (4444, None), (53, None), (22, "ssh")))
    ob = lognormal_int(r, 60_000_000, 1.4, 3_000_000, 8_000_000_000)
    target = tl.tcp(t, public_ip(r), port, service, ob, r.randint(2_000, 400_000), ob / r.uniform(3e5, 6e6),
                    "SF" if r.random() < 0.85 else "RSTR", server_first=port in (21, 22))
    return malicious(target, "exfiltration")


# ---- easy benign episodes: the host's role explains the flow -----------------------------------------------
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
            target = tl.attempt(ts, dst, port, probe_outcome(r, lan=True), lan=True)
    return benign(target, "benign_monitoring_scan")


def ep_ansible(tl: Timeline, t: float) -> Episode:
    """Configuration management: SSH to many servers in parallel, each session doing real work."""
    r = tl.rng
    hosts = [tl.net.internal_peer(r) for _ in range(r.randint(8, 30))]
    rounds = r.randint(1, 3)
    target: dict[str, Any] = {}
    for k in range(rounds):
        for i, dst in enumerate(hosts):
            target = tl.tcp(t - (rounds - 1 - k) * 60 - (len(hosts) - 1 - i) * r.uniform(0.05, 1.5), dst, 22,
                            "ssh", r.randint(12_000, 90_000), r.randint(8_000, 60_000), r.uniform(0.6, 25.0),
                            server_first=True)
    return benign(target, "benign_ssh")


def ep_db_pool(tl: Timeline, t: float) -> Episode:
    """An application server opening many short database connections per second (pool churn)."""
    r = tl.rng
    gap = r.uniform(0.02, 1.0)
    target: dict[str, Any] = {}
    for i in range(r.randint(20, 45), -1, -1):
        target = act_db_query(tl, t - i * gap * r.uniform(0.5, 1.5))
    return benign(target, "benign_db")


def ep_syslog_burst(tl: Timeline, t: float) -> Episode:
    """A burst of one-way UDP log datagrams (looks like a UDP flood in a single record)."""
    r = tl.rng
    gap = r.uniform(0.05, 3.0)
    target: dict[str, Any] = {}
    for i in range(r.randint(5, 25), -1, -1):
        target = act_syslog(tl, t - i * gap * r.uniform(0.5, 1.5))
    return benign(target, "benign_syslog")


def ep_camera_upload(tl: Timeline, t: float) -> Episode:
    """A cloud camera uploading a motion clip: a big upload from an IoT device to its vendor cloud."""
    r = tl.rng
    ob = lognormal_int(r, 6_000_000, 1.0, 400_000, 300_000_000)
    target = tl.tcp(t, tl.cloud, 443, "ssl", ob, r.randint(3_000, 30_000), ob / r.uniform(3e5, 3e6))
    return benign(target, "benign_camera_upload")


def ep_telemetry(tl: Timeline, t: float) -> Episode:
    """Device telemetry to its vendor's cloud, with its natural variation in payload size and timing."""
    r = tl.rng
    period = r.uniform(10.0, 90.0)
    target: dict[str, Any] = {}
    for ts in reversed([t - i * period * r.uniform(0.85, 1.15) for i in range(r.randint(6, 14))]):
        target = act_telemetry(tl, ts)
    return benign(target, "benign_telemetry")


def ep_iot_chatter(tl: Timeline, t: float) -> Episode:
    """An IoT device's housekeeping: SNTP polls every few seconds to a minute (many unanswered), mDNS and SSDP
    to multicast, a DHCP renewal, short vendor-cloud sessions; tiny, mostly one-way UDP."""
    r = tl.rng
    acts = (act_ntp_poll, act_mdns, act_ssdp_search, act_dhcp, act_cloud_session)
    weights = (6.0, 1.5, 1.2, 0.3, 1.5)
    period = min(120.0, max(2.0, r.lognormvariate(math.log(15.0), 0.8)))
    for i in range(r.randint(6, 18), 0, -1):
        r.choices(acts, weights)[0](tl, t - i * period * r.uniform(0.7, 1.3))
    return benign(r.choices(acts, (6.0, 1.5, 1.2, 0.3, 0.6))[0](tl, t), "benign_iot_chatter")


def ep_windows_domain(tl: Timeline, t: float) -> Episode:
    """A Windows domain member talking to its domain controllers: a logon or group-policy refresh, or one of its
    steady lookups, ticket requests, LDAP pings, NetBIOS announcements and SYSVOL reads."""
    r = tl.rng
    if r.random() < 0.3:
        return benign(act_domain_refresh(tl, t), "benign_windows_domain")
    for _ in range(r.randint(1, 5)):
        act_ad_lookup(tl, t - r.uniform(0.05, 60.0))
    acts = (act_ad_lookup, act_kerberos, act_cldap, act_netbios, act_sysvol)
    return benign(r.choices(acts, (5.0, 1.5, 1.5, 2.0, 1.2))[0](tl, t), "benign_windows_domain")


def ep_bulk_download(tl: Timeline, t: float) -> Episode:
    """A big download fetched as many parallel and back-to-back HTTPS range requests to one CDN server (looks
    like a flood by connection count, but each brings back ~100 kB)."""
    return benign(act_bulk_download(tl, t), "benign_bulk_download")


def ep_long_session(tl: Timeline, t: float) -> Episode:
    """A stream, call or idle app connection longer than the flow meter's timeout: consecutive 120 s records."""
    return benign(act_long_session(tl, t), "benign_long_session")


def ep_background(tl: Timeline, t: float) -> Episode:
    """An ordinary flow of the host's usual traffic."""
    act = background_activity(tl)
    return benign(act(tl, t), FAMILY_OF[act])


# ---- ambiguous: features drawn without the label; the latent p is a function of the draw ----------
def ep_amb_beacon(tl: Timeline, t: float) -> Episode:
    """Fixed-size HTTPS check-ins at a steady interval, and nothing else unusual: a device's heartbeat (many
    devices send exactly that) or a beacon hiding in TLS; shorter intervals are a little more suspicious."""
    r = tl.rng
    period = r.uniform(20.0, 120.0)
    target = beacons(tl, t, public_ip(r), 443, "ssl", period, r.uniform(0.0, 0.2),
                     (r.randint(200, 900), r.randint(100, 1500)), r.randint(4, 9))
    return ambiguous(tl, target, 0.45 - 0.002 * period, "cc_heartbeat", "benign_telemetry")


def ep_amb_ssh_failures(tl: Timeline, t: float) -> Episode:
    """A few short SSH connections to one server: a user mistyping a password, or a slow guesser."""
    r = tl.rng
    dst = r.choice(tl.net.servers["web"] + tl.net.servers["db"] + tl.net.servers["git"])
    k = r.randint(3, 8)
    for i in range(k, 0, -1):
        ssh_auth_attempt(tl, t - i * r.uniform(4.0, 30.0), dst)
    return ambiguous(tl, ssh_auth_attempt(tl, t, dst), 0.1 + 0.06 * k, "ssh_bruteforce", "benign_ssh")


def ep_amb_upload(tl: Timeline, t: float) -> Episode:
    """A large upload to a new address after a few internal reads: a sync client, or exfiltration."""
    r = tl.rng
    reads = r.randint(0, 2)
    collection(tl, t, reads)
    if r.random() < 0.5:
        tl.dns(t - r.uniform(0.01, 0.5))
    ob = lognormal_int(r, 30_000_000, 1.2, 2_000_000, 2_000_000_000)
    target = tl.tcp(t, public_ip(r), 443, "ssl", ob, r.randint(3_000, 90_000), ob / r.uniform(3e5, 6e6))
    return ambiguous(tl, target, 0.2 + 0.15 * reads, "exfiltration", "benign_cloud_sync")


def ep_amb_probe(tl: Timeline, t: float) -> Episode:
    """A handful of failed connections to a few internal hosts: stale bookmarks, or a cautious scan."""
    r = tl.rng
    port = r.choice((445, 3389, 22, 80, 443, 5900))
    hosts = [tl.net.internal_peer(r) for _ in range(r.randint(2, 5))]
    for i in range(r.randint(3, 6), 0, -1):
        tl.attempt(t - i * r.uniform(2.0, 20.0), r.choice(hosts), port, r.choice(("rej", "s0_n")), lan=True)
    target = tl.attempt(t, r.choice(hosts), port, r.choice(("rej", "s0_n")), lan=True)
    return ambiguous(tl, target, 0.1 + 0.07 * len(set(hosts)), "portscan_horizontal", "benign_failed_conn")


def ep_amb_download(tl: Timeline, t: float) -> Episode:
    """A plain-HTTP download of an executable-sized file from a bare IP, with or without a DNS lookup."""
    r = tl.rng
    looked_up = r.random() < 0.5
    if looked_up:
        tl.dns(t - r.uniform(0.01, 0.5))
    rb = r.randint(80_000, 3_000_000)
    target = tl.tcp(t, public_ip(r), r.choice((80, 8080)), "http", r.randint(120, 400), rb,
                    rb / r.uniform(1e5, 3e6))
    return ambiguous(tl, target, 0.3 if looked_up else 0.7, "malware_download", "benign_update")


# ---- ood (industrial network): easy attacks never seen in train/dev/test, and benign OT episodes ----------
def ep_dns_tunneling(tl: Timeline, t: float) -> Episode:
    """Data smuggled in DNS queries: long names at a steady high rate to one resolver."""
    r = tl.rng
    gap = r.uniform(0.05, 2.0)
    target: dict[str, Any] = {}
    for i in range(r.randint(25, 50), -1, -1):
        target = tl.dns(t - i * gap * r.uniform(0.7, 1.3), qsize=r.randint(161, 250))
    return malicious(target, "dns_tunneling")


def ep_http_slowloris(tl: Timeline, t: float) -> Episode:
    """Slowloris on a port no analyzer recognises: many connections, each kept open with a trickle of bytes."""
    r = tl.rng
    server = tl.net.server(r, "historian_web")
    target: dict[str, Any] = {}
    for i in range(r.randint(20, 40), -1, -1):
        dur = r.uniform(60.0, 900.0)
        state = r.choice(("S1", "RSTR", "SF", "RSTO"))
        target = tl.tcp(t - i * r.uniform(0.01, 0.4), server, 80, None, int(dur / r.uniform(5, 15)) * 20,
                        0 if state in ("S1", "RSTO") else r.randint(200, 600), dur, state)
    return malicious(target, "http_slowloris")


def ep_lateral_smb(tl: Timeline, t: float) -> Episode:
    """Worm-like lateral movement: SMB to host after host; this connection is refused or unanswered."""
    r = tl.rng
    gap = r.uniform(0.2, 8.0)
    for i in range(r.randint(15, 35), 0, -1):
        ts, dst = t - i * gap * r.uniform(0.6, 1.4), tl.net.internal_peer(r)
        kind = r.random()
        if kind < 0.35:
            tl.attempt(ts, dst, 445, r.choice(("rej", "s0_n")), lan=True)
        elif kind < 0.5:
            tl.tcp(ts, dst, 135, "dce_rpc", r.randint(300, 2000), r.randint(200, 1500), r.uniform(0.01, 0.5))
        else:
            ob = r.randint(1_500, 12_000) if r.random() < 0.7 else r.randint(100_000, 900_000)
            tl.tcp(ts, dst, 445, "smb", ob, r.randint(1_000, 8_000), r.uniform(0.05, 4.0))
    target = tl.attempt(t, tl.net.internal_peer(r), 445, r.choice(("rej", "s0_n")), lan=True)
    return malicious(target, "lateral_smb")


def ep_modbus_poll(tl: Timeline, t: float) -> Episode:
    """SCADA polling: tiny, perfectly regular exchanges (looks like a C&C beacon to an IT-trained eye)."""
    r = tl.rng
    period = r.uniform(1.0, 10.0)
    plc = r.choice(tl.net.servers["plc"])
    target: dict[str, Any] = {}
    for i in range(r.randint(8, 20), -1, -1):
        target = tl.tcp(t - i * period * r.uniform(0.99, 1.01), plc, 502, "modbus", 12,
                        r.choice((11, 19, 27)), r.uniform(0.004, 0.02))
    return benign(target, "benign_modbus")


def ep_plc_discovery(tl: Timeline, t: float) -> Episode:
    """An engineering workstation enumerating PLCs: a sweep, but the workstation's job."""
    r = tl.rng
    gap = r.uniform(0.005, 0.3)
    target: dict[str, Any] = {}
    for i in range(r.randint(20, 40), -1, -1):
        target = act_plc_discovery(tl, t - i * gap * r.uniform(0.6, 1.4))
    return benign(target, "benign_discovery")


def ep_dashboard_poll(tl: Timeline, t: float) -> Episode:
    """A historian dashboard refreshing: one short web request after another to the same server."""
    r = tl.rng
    server = tl.net.server(r, "historian_web")
    port, service = r.choice(((80, "http"), (443, "ssl")))
    period = r.uniform(1.0, 15.0)
    target: dict[str, Any] = {}
    for i in range(r.randint(10, 30), -1, -1):
        target = tl.tcp(t - i * period * r.uniform(0.8, 1.2), server, port, service, r.randint(250, 1500),
                        r.randint(400, 60_000), r.uniform(0.01, 1.5), established_state(r))
    return benign(target, "benign_web")


def ep_failed_retry(tl: Timeline, t: float) -> Episode:
    """An application retrying a server that is down: S0/REJ again and again, but to one address."""
    r = tl.rng
    dst = tl.net.internal_peer(r)
    port = r.choice((443, 80, 8080, 1883, 22, 445, 3389, 5432, 502, 4840))
    outcome = r.choice(("s0_os", "s0_os", "rej"))  # an application's connect() always gets the OS's retries
    backoff = r.uniform(2.0, 30.0)
    for i in range(r.randint(3, 9), 0, -1):
        tl.attempt(t - backoff * (2 ** min(i, 4) - 1) * r.uniform(0.9, 1.1), dst, port, outcome, lan=True)
    return benign(tl.attempt(t, dst, port, outcome, lan=True), "benign_failed_conn")


def ep_amb_dns_volume(tl: Timeline, t: float) -> Episode:
    """A burst of DNS lookups with longish names: a browser pre-fetching, or a slow tunnel."""
    r = tl.rng
    qmax = r.randint(60, 120)
    target: dict[str, Any] = {}
    for i in range(r.randint(8, 16), -1, -1):
        target = tl.dns(t - i * r.uniform(0.5, 6.0), qsize=r.randint(40, qmax))
    return ambiguous(tl, target, 0.1 + (qmax - 60) / 120, "dns_tunneling", "benign_dns")
