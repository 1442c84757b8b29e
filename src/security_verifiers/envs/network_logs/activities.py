"""Benign activities of E1's simulated hosts and the background traffic of each device role.

An activity adds the flows of one thing a host does (a DNS lookup, a page load with its burst of short TLS
connections to CDNs, an update check, a long-lived push connection, an SMB read) ending at time ``t`` and
returns its main flow. A :class:`Profile` says how often a role does each of them; :func:`background` fills
the time before an episode with them, so every window looks like that role's ordinary traffic.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from security_verifiers.envs.network_logs.sites import NAME_SERVERS, OT_INDUSTRIAL, PUBLIC_RESOLVERS, public_ip
from security_verifiers.envs.network_logs.traffic import (
    FLOW_TIMEOUT,
    Timeline,
    established_state,
    jittered,
    lognormal_int,
)

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
    ob = lognormal_int(r, 900, 0.9, 120, 400_000)
    rb = lognormal_int(r, 18_000, 1.6, 0, 30_000_000)
    return tl.tcp(t, public_ip(r), port, service, ob, rb, r.lognormvariate(math.log(1.5), 1.3),
                  established_state(r))


def act_upload(tl: Timeline, t: float) -> dict[str, Any]:
    """A user uploading a file to a cloud service (large originator bytes, benign)."""
    r = tl.rng
    tl.dns(t - r.uniform(0.002, 0.3))
    ob = lognormal_int(r, 4_000_000, 1.2, 200_000, 400_000_000)
    return tl.tcp(t, public_ip(r), 443, "ssl", ob, r.randint(3_000, 40_000), ob / r.uniform(2e5, 4e6))


def act_telemetry(tl: Timeline, t: float) -> dict[str, Any]:
    """A device reporting to its vendor cloud; payload size varies with what it reports."""
    r = tl.rng
    port, service = r.choices(((443, "ssl"), (8883, "ssl"), (1883, "mqtt"), (80, "http")), (5, 2, 2, 1))[0]
    ob = lognormal_int(r, 600 if service != "mqtt" else 180, 0.5, 40, 20_000)
    rb = lognormal_int(r, 450 if service != "mqtt" else 60, 0.6, 4, 20_000)
    return tl.tcp(t, tl.cloud, port, service, ob, rb, r.uniform(0.08, 1.8), established_state(r))


def act_mqtt_local(tl: Timeline, t: float) -> dict[str, Any]:
    r = tl.rng
    return tl.tcp(t, tl.net.server(r, "broker"), 1883, "mqtt", r.randint(20, 900), r.randint(4, 400),
                  r.uniform(0.02, 0.6), established_state(r))


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
    rb = lognormal_int(r, 60_000, 1.8, 400, 200_000_000)
    return tl.tcp(t, tl.net.server(r, "file"), 445, "smb", lognormal_int(r, 3_000, 1.2, 200, 5_000_000), rb,
                  r.lognormvariate(math.log(2.0), 1.5), established_state(r))


def act_ldap(tl: Timeline, t: float) -> dict[str, Any]:
    r = tl.rng
    port, service = r.choice(((389, "ldap"), (88, "krb_tcp"), (135, "dce_rpc")))
    return tl.tcp(t, tl.net.server(r, "dc"), port, service, r.randint(200, 4000), r.randint(200, 9000),
                  r.uniform(0.003, 1.0), established_state(r))


def act_mail(tl: Timeline, t: float) -> dict[str, Any]:
    r = tl.rng
    port = r.choice((993, 587))
    return tl.tcp(t, tl.net.server(r, "mail"), port, "ssl", r.randint(400, 900_000),
                  r.randint(900, 2_000_000), r.uniform(0.1, 40.0), established_state(r))


def act_ssh_admin(tl: Timeline, t: float) -> dict[str, Any]:
    """An interactive SSH session: long, with a few kilobytes each way."""
    r = tl.rng
    dst = tl.net.internal_peer(r) if r.random() < 0.7 else public_ip(r)
    dur = r.lognormvariate(math.log(240), 1.2)
    return tl.tcp(t, dst, 22, "ssh", int(2500 + dur * r.uniform(5, 60)), int(3500 + dur * r.uniform(20, 400)),
                  dur, established_state(r), server_first=True)


def act_git(tl: Timeline, t: float) -> dict[str, Any]:
    r = tl.rng
    port, service = (22, "ssh") if r.random() < 0.6 else (443, "ssl")
    return tl.tcp(t, tl.net.server(r, "git"), port, service, r.randint(1500, 60_000),
                  lognormal_int(r, 200_000, 1.8, 3_000, 500_000_000), r.uniform(0.5, 40.0),
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
                  lognormal_int(r, 400_000, 1.2, 5_000, 60_000_000),
                  r.randint(0, 200), r.uniform(1.0, 60.0))


def act_update(tl: Timeline, t: float) -> dict[str, Any]:
    """A software or firmware update: DNS, a version check with the vendor, then a large download."""
    r = tl.rng
    tl.dns(t - r.uniform(0.4, 3.0))
    tl.tcp(t - r.uniform(3.5, 30.0), tl.cloud, 443, "ssl", r.randint(400, 2500), r.randint(700, 9000),
           r.uniform(0.1, 1.5))
    tl.dns(t - r.uniform(0.001, 0.35))
    port, service = (443, "ssl") if r.random() < 0.7 else (80, "http")
    rb = lognormal_int(r, 6_000_000, 1.5, 150_000, 900_000_000)
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
    rb = lognormal_int(r, 80_000_000, 1.5, 1_000_000, 20_000_000_000)
    return tl.tcp(t, tl.net.internal_peer(r), 22, "ssh", r.randint(20_000, 900_000), rb,
                  rb / r.uniform(2e7, 9e7), server_first=True)


def act_registry(tl: Timeline, t: float) -> dict[str, Any]:
    r = tl.rng
    rb = lognormal_int(r, 20_000_000, 1.4, 50_000, 3_000_000_000)
    return tl.tcp(t, tl.net.server(r, "registry"), 5000, "http", r.randint(500, 40_000), rb,
                  rb / r.uniform(5e7, 3e8))


def act_voip(tl: Timeline, t: float) -> dict[str, Any]:
    r = tl.rng
    return tl.udp(t, tl.net.server(r, "web"), 5060, "sip", r.randint(400, 1100), r.randint(300, 900),
                  r.uniform(0.005, 0.2), sport=5060)


def act_streaming(tl: Timeline, t: float) -> dict[str, Any]:
    r = tl.rng
    tl.dns(t - r.uniform(0.002, 0.3))
    rb = lognormal_int(r, 30_000_000, 1.0, 1_000_000, 4_000_000_000)
    return tl.tcp(t, public_ip(r), 443, "ssl", r.randint(10_000, 800_000), rb, rb / r.uniform(6e5, 3e6))


# ---- what real enterprise and IoT hosts also do (CDN bursts, keep-alive churn, checks, name broadcasts) ----
def act_page_load(tl: Timeline, t: float) -> dict[str, Any]:
    """A page or app screen loading: a few lookups, then a burst of short connections to CDN front-ends.

    Most go to the host's usual front-ends, some to new ones; HTTP/2 keeps few connections per address, so
    at most six go to any one of them. Some are HTTP/3 (QUIC over UDP 443), a few plain-HTTP OCSP checks.
    """
    r = tl.rng
    span = r.uniform(0.3, 4.0)
    for _ in range(r.randint(1, 4)):
        tl.dns(t - span - r.uniform(0.001, 0.3))
    fronts = [r.choice(tl.cdns) if r.random() < 0.6 else public_ip(r) for _ in range(r.randint(2, 5))]
    per_front = {dst: 0 for dst in fronts}
    times = sorted(t - r.uniform(0.0, span) for _ in range(r.randint(2, 12))) + [t]
    flow: dict[str, Any] = {}
    for ts in times:
        dst = r.choice([d for d, n in per_front.items() if n < 6] or fronts)
        per_front[dst] += 1
        kind = r.random()
        if kind < 0.12:
            flow = tl.quic(ts, dst, lognormal_int(r, 3_000, 0.8, 1_200, 200_000),
                           lognormal_int(r, 40_000, 1.4, 1_500, 20_000_000), r.lognormvariate(math.log(2.0), 1.0))
        elif kind < 0.17:
            flow = tl.tcp(ts, public_ip(r), 80, "http", r.randint(380, 520), r.randint(1_300, 2_400),
                          r.uniform(0.02, 0.3))
        else:
            flow = tl.tcp(ts, dst, 443, "ssl", lognormal_int(r, 1_100, 0.6, 300, 60_000),
                          lognormal_int(r, 12_000, 1.5, 200, 8_000_000), r.lognormvariate(math.log(0.8), 1.2),
                          established_state(r))
    return flow


def act_keepalive(tl: Timeline, t: float) -> dict[str, Any]:
    """A long-lived connection an app keeps open to its cloud (push notifications, messaging, device shadows):
    minutes long, a few heartbeats each way, logged when it finally closes, idles out or is reset."""
    r = tl.rng
    port, service = r.choices(((443, "ssl"), (5223, "ssl"), (8883, "ssl"), (443, None)), (6, 2, 2, 1))[0]
    dur = min(7200.0, max(30.0, r.lognormvariate(math.log(600), 1.0)))
    beats = max(1, int(dur / r.uniform(25.0, 120.0)))
    state = r.choices(("SF", "RSTO", "RSTR", "S1"), (0.4, 0.2, 0.25, 0.15))[0]
    dst = tl.cloud if r.random() < 0.4 else r.choice(tl.cdns)
    return tl.tcp(t, dst, port, service, 600 + beats * r.randint(30, 90), 900 + beats * r.randint(30, 120), dur,
                  state)


def act_update_check(tl: Timeline, t: float) -> dict[str, Any]:
    """An OS, browser, antivirus or firmware updater asking whether there is a new version (usually not): a
    lookup, then one small HTTPS request, or a plain-HTTP connectivity probe answered with 204 No Content."""
    r = tl.rng
    tl.dns(t - r.uniform(0.002, 0.4))
    dst = r.choice((tl.cloud, *tl.cdns[:2]))
    if r.random() < 0.25:
        return tl.tcp(t, dst, 80, "http", r.randint(100, 320), r.randint(150, 600), r.uniform(0.02, 0.4))
    return tl.tcp(t, dst, 443, "ssl", r.randint(500, 2_500), r.randint(800, 9_000), r.uniform(0.08, 1.5),
                  established_state(r))


def act_dns_burst(tl: Timeline, t: float) -> dict[str, Any]:
    """Lookups in a burst: a browser prefetching the names on a page, a smart speaker waking up."""
    r = tl.rng
    span = r.uniform(0.05, 2.0)
    flow: dict[str, Any] = {}
    for ts in sorted(t - r.uniform(0.0, span) for _ in range(r.randint(3, 14))) + [t]:
        flow = tl.dns(ts, answered=r.random() > 0.04)
    return flow


def act_name_broadcast(tl: Timeline, t: float) -> dict[str, Any]:
    """Local name resolution and announcements: LLMNR to its multicast group, NetBIOS to the broadcast address
    (one-way: Zeek state S0); Windows and macOS hosts send these all day."""
    r = tl.rng
    if r.random() < 0.5:
        n = r.randint(1, 2)
        return tl.udp(t, "224.0.0.252", 5355, "dns", n * r.randint(30, 70), 0, r.uniform(0.05, 0.5), pkts=(n, 0))
    n = r.randint(1, 3)
    broadcast = tl.ip.rsplit(".", 1)[0] + ".255"
    return tl.udp(t, broadcast, 137, "dns", n * 50, 0, r.uniform(0.7, 1.6), pkts=(n, 0), sport=137)


def act_recursive_lookup(tl: Timeline, t: float) -> dict[str, Any]:
    """A site resolver answering a client: a cache miss sends it to a forwarder, or down from a root server."""
    r = tl.rng
    if r.random() < 0.6:
        return tl.udp(t, r.choice(PUBLIC_RESOLVERS), 53, "dns", r.randint(28, 64), r.randint(45, 320),
                      r.uniform(0.008, 0.06))
    flow: dict[str, Any] = {}
    for k in range(r.randint(1, 3)):
        flow = tl.udp(t + k * 0.05, r.choice(NAME_SERVERS), 53, "dns", r.randint(36, 64), r.randint(400, 900),
                      r.uniform(0.01, 0.08))
    return flow


# ---- measured on real captures (IoT-23, CIC-IDS-2017): IoT housekeeping, Windows domains, bulk downloads ----
def act_ntp_poll(tl: Timeline, t: float) -> dict[str, Any]:
    """An IoT device's SNTP client: 48 bytes from port 123 to a pool server, every few seconds to minutes.
    Many go unanswered (a pool server that left, a blocked port): a lone datagram, which Zeek logs with no
    duration and no byte counts. Zeek builds without an NTP analyzer (IoT-23's) name no service."""
    r = tl.rng
    server = r.choice(tl.net.ntp_pool) if r.random() < 0.4 else public_ip(r)
    service = "ntp" if tl.ntp_named else None
    sport = 123 if r.random() < 0.9 else None
    if r.random() < 0.38:
        return tl.udp(t, server, 123, service, 48, 0, None, sport=sport)
    if r.random() < 0.03:  # a burst of polls answered in one conn record (ntpd's iburst)
        n = r.randint(4, 8)
        return tl.udp(t, server, 123, service, 48 * n, 48 * n, r.uniform(6.0, 20.0), pkts=(n, n), sport=sport)
    return tl.udp(t, server, 123, service, 48, 48, r.lognormvariate(math.log(0.012), 1.4), sport=sport)


def act_mdns(tl: Timeline, t: float) -> dict[str, Any]:
    """Bonjour/mDNS: queries and announcements to 224.0.0.251:5353, never answered by unicast (S0); a lone
    query is a single datagram."""
    r = tl.rng
    n = r.choices((1, 2, 3, 4), (5, 2, 1, 2))[0]
    sport = 5353 if r.random() < 0.7 else None
    return tl.udp(t, "224.0.0.251", 5353, "dns", n * lognormal_int(r, 120, 0.7, 40, 1400), 0,
                  r.uniform(0.9, 3.5), pkts=(n, 0), sport=sport)


def act_ssdp_search(tl: Timeline, t: float) -> dict[str, Any]:
    """UPnP discovery: an M-SEARCH (often sent two or three times) or a NOTIFY to 239.255.255.250:1900; Zeek has
    no SSDP analyzer, so no service, and nobody answers the multicast itself (S0)."""
    r = tl.rng
    if r.random() < 0.5:
        n = r.choice((1, 2, 3, 3))
        return tl.udp(t, "239.255.255.250", 1900, None, n * r.randint(125, 180), 0, r.uniform(0.1, 3.0),
                      pkts=(n, 0))
    n = r.choice((1, 1, 3, 6))
    return tl.udp(t, "239.255.255.250", 1900, None, n * r.randint(280, 420), 0, r.uniform(0.01, 0.4),
                  pkts=(n, 0), sport=1900)


def act_dhcp(tl: Timeline, t: float) -> dict[str, Any]:
    """A DHCP lease renewal from port 68 to the site's DHCP server: a ~300-byte request and its ack, or, when the
    server is slow, requests repeated without an answer."""
    r = tl.rng
    server = tl.net.server(r, "dns")  # the site's DNS servers also hand out leases
    if r.random() < 0.35:
        n = r.randint(2, 10)
        return tl.udp(t, server, 67, "dhcp", n * r.randint(300, 348), 0, n * r.uniform(2.0, 8.0), pkts=(n, 0),
                      sport=68)
    return tl.udp(t, server, 67, "dhcp", r.randint(300, 348), r.randint(300, 348), r.uniform(0.0005, 0.02),
                  sport=68)


def act_cloud_session(tl: Timeline, t: float) -> dict[str, Any]:
    """A device's short session with its vendor cloud on the vendor's own port: a few small messages, then the
    server closes and the device never acknowledges (S3), or is reset; some never carry data, and a late FIN of
    a connection the sensor never saw open is logged alone (SH)."""
    r = tl.rng
    kind = r.random()
    if kind < 0.12:
        return tl.stray_fin(t, tl.cloud, r.choice((80, 443)))
    if kind < 0.25:
        return tl.tcp(t, tl.cloud, r.choice((80, 443)), None, 0, 0, r.uniform(0.02, 0.6))
    port = r.choice((443, 8883, 6668, 8886, 5222))
    state = r.choices(("S3", "SF", "RSTR", "RSTO"), (0.5, 0.3, 0.12, 0.08))[0]
    return tl.tcp(t, tl.cloud, port, None if port not in (443, 8883) else "ssl", r.randint(40, 400),
                  lognormal_int(r, 320, 0.8, 40, 20_000), r.lognormvariate(math.log(0.4), 1.2), state,
                  server_first=True)


def ad_name_size(tl: Timeline) -> int:
    """A DNS query's size for an Active Directory name (``_ldap._tcp.dc._msdcs.corp.example.com``, a host's FQDN,
    ``wpad``): the names are long, the query averages about 78 bytes."""
    return lognormal_int(tl.rng, 74, 0.22, 34, 130)


def act_ad_lookup(tl: Timeline, t: float) -> dict[str, Any]:
    """A Windows host resolving a domain name: SRV records of the domain controllers, hosts' FQDNs, WPAD."""
    r = tl.rng
    ob = ad_name_size(tl)
    if r.random() < 0.06:  # a name that does not exist, retried without an answer
        return tl.udp(t, tl.resolver, 53, "dns", 2 * ob, 0, r.uniform(1.0, 4.0), pkts=(2, 0))
    return tl.udp(t, tl.resolver, 53, "dns", ob, ob + lognormal_int(r, 110, 0.6, 16, 900), r.uniform(0.0004, 0.02))


def act_kerberos(tl: Timeline, t: float) -> dict[str, Any]:
    """Kerberos to a domain controller: a service-ticket request over UDP, or over TCP when the ticket (with its
    group memberships) is too big for a datagram."""
    r = tl.rng
    dc = tl.net.server(r, "dc")
    if r.random() < 0.4:
        return tl.udp(t, dc, 88, "krb", r.randint(180, 1500), r.randint(120, 1450), r.uniform(0.0005, 0.02))
    return tl.tcp(t, dc, 88, "krb_tcp", r.randint(1300, 2600), r.randint(1400, 6000), r.uniform(0.002, 0.08),
                  "SF" if r.random() < 0.9 else "RSTO")


def act_cldap(tl: Timeline, t: float) -> dict[str, Any]:
    """The DC locator's connectionless LDAP ping to udp/389, or an LDAP query over TCP (389, global catalog 3268)."""
    r = tl.rng
    dc = tl.net.server(r, "dc")
    if r.random() < 0.5:
        return tl.udp(t, dc, 389, "ldap", r.randint(180, 260), r.randint(150, 420), r.uniform(0.0003, 0.01))
    port = 389 if r.random() < 0.75 else 3268
    return tl.tcp(t, dc, port, "ldap", lognormal_int(r, 1500, 0.7, 300, 40_000),
                  lognormal_int(r, 3000, 1.0, 200, 400_000), r.lognormvariate(math.log(0.05), 1.5),
                  r.choices(("SF", "RSTO", "S1"), (0.8, 0.15, 0.05))[0])


def act_netbios(tl: Timeline, t: float) -> dict[str, Any]:
    """NetBIOS: a name query to the WINS server (answered), or a browser announcement to the subnet's broadcast
    address on udp/138 (one-way, no analyzer)."""
    r = tl.rng
    if r.random() < 0.4:
        return tl.udp(t, tl.net.server(r, "dc"), 137, "dns", 50, r.choice((62, 68, 110)), r.uniform(0.0003, 0.01),
                      sport=137)
    broadcast = tl.ip.rsplit(".", 1)[0] + ".255"
    return tl.udp(t, broadcast, 138, None, r.randint(201, 243), 0, None, sport=138)


def act_sysvol(tl: Timeline, t: float) -> dict[str, Any]:
    """Group policy: SMB reads of SYSVOL on a domain controller, or an RPC call to its endpoint mapper."""
    r = tl.rng
    dc = tl.net.server(r, "dc")
    if r.random() < 0.25:
        return tl.tcp(t, dc, 135, "dce_rpc", r.randint(150, 1200), r.randint(120, 900), r.uniform(0.001, 0.05))
    return tl.tcp(t, dc, 445, "smb", lognormal_int(r, 2500, 0.7, 600, 60_000),
                  lognormal_int(r, 12_000, 1.3, 400, 3_000_000), r.lognormvariate(math.log(0.3), 1.6),
                  established_state(r))


def act_domain_refresh(tl: Timeline, t: float) -> dict[str, Any]:
    """A logon or a group-policy refresh (every 90 minutes): SRV lookups, an LDAP ping, Kerberos tickets, LDAP
    queries and SYSVOL reads over a few seconds, all to the domain controllers."""
    r = tl.rng
    span = r.uniform(1.0, 20.0)
    steps = [act_ad_lookup] * r.randint(2, 6) + [act_cldap] * r.randint(1, 2) + [act_kerberos] * r.randint(1, 3) + \
        [act_sysvol] * r.randint(0, 4) + [act_netbios] * r.randint(0, 1)
    r.shuffle(steps)
    times = sorted(t - r.uniform(0.0, span) for _ in steps[1:]) + [t]
    flow: dict[str, Any] = {}
    for act, ts in zip(steps, times, strict=True):
        flow = act(tl, ts)
    return flow


def act_bulk_download(tl: Timeline, t: float) -> dict[str, Any]:
    """A large download split into many HTTPS range requests to one CDN server: a lookup, then 15-60 connections
    within seconds to a minute, a few in parallel, each ~1 kB up and 50-200 kB down; a client that hangs up once
    the range is in leaves some reset or still open."""
    r = tl.rng
    dst = r.choice(tl.cdns) if r.random() < 0.5 else public_ip(r)
    n = r.randint(15, 60)
    span = r.uniform(3.0, 60.0)
    tl.dns(t - span - r.uniform(0.001, 0.3))
    chunk = r.choice((65_536, 98_304, 131_072, 163_840))
    state = r.choices(("SF", "S1", "RSTO", "RSTR"), (0.55, 0.3, 0.1, 0.05))[0]
    times = sorted(t - r.uniform(0.0, span) for _ in range(n - 1)) + [t]
    flow: dict[str, Any] = {}
    for ts in times:
        rb = int(chunk * r.uniform(0.9, 1.06)) if r.random() < 0.8 else lognormal_int(r, 90_000, 0.6, 20_000, 400_000)
        flow = tl.tcp(ts, dst, 443, "ssl", r.randint(700, 1900), rb, r.lognormvariate(math.log(0.2), 0.6),
                      state if r.random() < 0.85 else established_state(r))
    return flow


def act_long_session(tl: Timeline, t: float) -> dict[str, Any]:
    """A session longer than the flow meter's 120 s timeout (a video stream, a call, a remote desktop, a device's
    live feed): written as consecutive 120 s records on one 5-tuple, the last one ending at ``t``."""
    r = tl.rng
    full = min(30, max(1, int(r.lognormvariate(math.log(4), 0.9))))
    last = r.uniform(0.5, FLOW_TIMEOUT - 0.5) if r.random() < 0.5 else FLOW_TIMEOUT - r.uniform(0.0005, 0.6)
    kind = r.choices(("quic", "rtp", "tls_stream", "tls_idle"), (3, 2, 3, 2))[0]
    if kind == "quic":  # HTTP/3 video: a steady stream down, acknowledgements up
        rate = r.uniform(2e4, 6e5)
        flows = tl.segments(t, full, last, r.choice(tl.cdns), 443, "udp", None, rate / 30, rate)
    elif kind == "rtp":  # a VoIP or video call's media to its relay
        rate = r.uniform(3e3, 1.5e5)
        flows = tl.segments(t, full, last, public_ip(r), r.choice((3478, 3479, 3480, 8801, 19302)), "udp", None,
                            rate * r.uniform(0.3, 1.2), rate)
    elif kind == "tls_stream":
        rate = r.uniform(1e4, 8e5)
        flows = tl.segments(t, full, last, r.choice(tl.cdns), 443, "tcp", "ssl", rate / 40, rate,
                            r.choice(("SF", "SF", "RSTO", "S1")))
    else:  # an app's idle connection to its cloud: a heartbeat now and then
        rate = r.uniform(2.0, 60.0)
        flows = tl.segments(t, full, last, tl.cloud, r.choice((443, 5223, 8883)), "tcp", "ssl", rate, rate * 1.5,
                            r.choice(("SF", "RSTR", "S1")))
    return flows[-1]


@dataclass(frozen=True)
class Profile:
    """A role's background traffic: Poisson activities (per minute) and periodic ones (period range, s)."""

    poisson: tuple[tuple[Activity, float], ...]
    periodic: tuple[tuple[Activity, float, float], ...] = ()


_IOT_COMMON: tuple[tuple[Activity, float], ...] = (
    (act_dns, 0.6), (act_ntp_poll, 0.7), (act_web, 0.15), (act_dns_burst, 0.1), (act_update_check, 0.04),
    (act_keepalive, 0.04), (act_mdns, 0.15), (act_dhcp, 0.02), (act_cloud_session, 0.12),
    (act_long_session, 0.01),
)
_DESKTOP: tuple[tuple[Activity, float], ...] = (
    (act_dns, 1.2), (act_web, 1.2), (act_page_load, 1.2), (act_dns_burst, 0.3), (act_keepalive, 0.15),
    (act_update_check, 0.2), (act_name_broadcast, 0.3), (act_ntp, 0.02), (act_mdns, 0.1), (act_ssdp_search, 0.1),
    (act_bulk_download, 0.02), (act_long_session, 0.04),
)
#: A domain member's Active Directory chatter (per minute).
_DOMAIN: tuple[tuple[Activity, float], ...] = (
    (act_ad_lookup, 1.0), (act_kerberos, 0.25), (act_cldap, 0.15), (act_netbios, 0.3), (act_sysvol, 0.1),
    (act_domain_refresh, 0.02),
)
PROFILES: dict[str, Profile] = {
    "iot_camera": Profile(_IOT_COMMON + ((act_upload, 0.05), (act_ssdp, 0.2), (act_ssdp_search, 0.1)),
                          ((act_telemetry, 45, 120),)),
    "iot_thermostat": Profile(_IOT_COMMON, ((act_telemetry, 30, 300),)),
    "smart_plug": Profile(_IOT_COMMON + ((act_ssdp, 0.3),), ((act_telemetry, 20, 90),)),
    "smart_tv": Profile(_IOT_COMMON + ((act_streaming, 0.4), (act_page_load, 0.4), (act_ssdp, 0.3),
                                       (act_ssdp_search, 0.2), (act_bulk_download, 0.03), (act_long_session, 0.06)),
                        ((act_telemetry, 120, 600),)),
    "iot_hub": Profile(_IOT_COMMON + ((act_ssdp, 0.3), (act_ssdp_search, 0.2)),
                       ((act_mqtt_local, 15, 60), (act_telemetry, 60, 300))),
    "printer": Profile(((act_dns, 0.3), (act_ntp_poll, 0.2), (act_ssdp, 0.6), (act_snmp, 0.1), (act_mdns, 0.3),
                        (act_netbios, 0.2), (act_dhcp, 0.02)),
                       ((act_telemetry, 180, 600),)),
    "voip_phone": Profile(((act_dns, 0.4), (act_ntp_poll, 0.3), (act_keepalive, 0.05), (act_dhcp, 0.02),
                           (act_long_session, 0.03)), ((act_voip, 30, 120),)),
    "workstation": Profile(_DESKTOP + _DOMAIN + ((act_smb, 0.5), (act_ldap, 0.2), (act_mail, 0.2),
                                                  (act_ssh_admin, 0.05), (act_print, 0.03), (act_update, 0.03),
                                                  (act_upload, 0.05))),
    "web_server": Profile(((act_dns, 0.8), (act_db_query, 3.0), (act_web, 0.5), (act_syslog, 0.8),
                           (act_ntp, 0.05), (act_update, 0.01), (act_update_check, 0.05))),
    "db_server": Profile(((act_dns, 0.2), (act_ntp, 0.05), (act_syslog, 0.6), (act_db_query, 0.2),
                          (act_ldap, 0.1), (act_ad_lookup, 0.3), (act_kerberos, 0.15), (act_netbios, 0.1))),
    "file_server": Profile(((act_dns, 0.3), (act_ldap, 0.4), (act_syslog, 0.5), (act_ntp, 0.05),
                            (act_smb, 0.1), (act_name_broadcast, 0.1), (act_ad_lookup, 0.5), (act_kerberos, 0.4),
                            (act_netbios, 0.2), (act_cldap, 0.1))),
    "ci_runner": Profile(((act_dns, 2.0), (act_git, 1.0), (act_web, 0.8), (act_registry, 0.3),
                          (act_bulk_download, 0.05), (act_update, 0.1), (act_ntp, 0.03), (act_dns_burst, 0.2),
                          (act_update_check, 0.1))),
    "monitoring_server": Profile(((act_dns, 0.8), (act_snmp, 4.0), (act_port_check, 3.0), (act_ping, 1.5),
                                  (act_ntp, 0.05))),
    "backup_server": Profile(((act_dns, 0.3), (act_backup_pull, 0.3), (act_ntp, 0.05), (act_syslog, 0.3))),
    "dns_server": Profile(((act_recursive_lookup, 12.0), (act_ntp, 0.1), (act_syslog, 0.3),
                           (act_update_check, 0.02))),
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
                  int(dur * r.uniform(2000, 20000)), dur, established_state(r))


def act_wsus(tl: Timeline, t: float) -> dict[str, Any]:
    r = tl.rng
    rb = lognormal_int(r, 3_000_000, 1.6, 2_000, 800_000_000)
    return tl.tcp(t, tl.net.server(r, "wsus"), 8530, "http", r.randint(300, 5000), rb,
                  rb / r.uniform(2e6, 5e7))


def act_historian_web(tl: Timeline, t: float) -> dict[str, Any]:
    r = tl.rng
    port, service = (443, "ssl") if r.random() < 0.6 else (80, "http")
    return tl.tcp(t, tl.net.server(r, "historian_web"), port, service, r.randint(300, 3000),
                  lognormal_int(r, 40_000, 1.2, 300, 20_000_000), r.uniform(0.05, 8.0),
                  established_state(r))


def act_camera_stream(tl: Timeline, t: float) -> dict[str, Any]:
    r = tl.rng
    dur = r.uniform(30, 600)
    return tl.tcp(t, tl.net.server(r, "nvr"), 554, "rtsp", int(dur * r.uniform(1e5, 6e5)),
                  r.randint(500, 20_000), dur, established_state(r))


_OT_COMMON: tuple[tuple[Activity, float], ...] = ((act_dns, 0.4), (act_ntp, 0.1), (act_syslog, 0.3))
OT_PROFILES: dict[str, Profile] = {
    "plc": Profile(((act_ntp, 0.2), (act_syslog, 0.4), (act_snmp, 0.2))),
    "rtu": Profile(((act_ntp, 0.2), (act_syslog, 0.4))),
    "hmi": Profile(_OT_COMMON + ((act_historian_web, 0.3),), ((act_modbus, 1, 10), (act_opcua, 20, 120))),
    "engineering_workstation": Profile(_OT_COMMON + ((act_s7_program, 0.05), (act_plc_discovery, 0.6),
                                                     (act_smb, 0.4), (act_rdp, 0.05), (act_wsus, 0.03),
                                                     (act_ldap, 0.3), (act_historian_web, 0.3),
                                                     (act_name_broadcast, 0.2), (act_update_check, 0.05))),
    "historian": Profile(_OT_COMMON, ((act_opcua, 2, 30), (act_dnp3, 5, 60))),
    "scada_server": Profile(_OT_COMMON + ((act_ldap, 0.1),), ((act_modbus, 1, 5), (act_dnp3, 5, 30))),
    "workstation": Profile(_OT_COMMON + ((act_web, 1.0), (act_page_load, 0.5), (act_smb, 0.6), (act_ldap, 0.4),
                                         (act_rdp, 0.1), (act_historian_web, 0.6), (act_wsus, 0.02),
                                         (act_mail, 0.2), (act_keepalive, 0.1), (act_update_check, 0.1),
                                         (act_name_broadcast, 0.2))),
    "jump_host": Profile(_OT_COMMON + ((act_rdp, 0.2), (act_historian_web, 0.4), (act_ssh_admin, 0.1),
                                       (act_smb, 0.2), (act_name_broadcast, 0.1), (act_update_check, 0.05))),
    "ip_camera": Profile(((act_ntp, 0.1), (act_dns, 0.1)), ((act_camera_stream, 120, 600),)),
}


def profile(tl: Timeline) -> Profile:
    return (OT_PROFILES if tl.net is OT_INDUSTRIAL else PROFILES)[tl.role]


def background(tl: Timeline, t_end: float) -> None:
    """Fill the role's usual traffic over enough time before ``t_end`` to fill the window."""
    r, prof = tl.rng, profile(tl)
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
        for t in jittered(r, start + r.uniform(0, period), period, r.uniform(0.03, 0.25), t_end - 0.5):
            act(tl, t)


def background_activity(tl: Timeline) -> Activity:
    """One of the role's activities, chosen in proportion to how often it happens."""
    prof = profile(tl)
    acts = [a for a, _ in prof.poisson] + [a for a, _, _ in prof.periodic]
    rates = [rate for _, rate in prof.poisson] + [120.0 / (lo + hi) for _, lo, hi in prof.periodic]
    return tl.rng.choices(acts, rates)[0]


# --------------------------------------------------------------------------------------------------

#: The family an item gets when its flow to classify is one of these activities.
FAMILY_OF: dict[Activity, str] = {
    act_dns: "benign_dns", act_ntp: "benign_ntp", act_web: "benign_web", act_upload: "benign_cloud_sync",
    act_telemetry: "benign_telemetry", act_mqtt_local: "benign_mqtt", act_ssdp: "benign_discovery",
    act_syslog: "benign_syslog", act_smb: "benign_smb", act_ldap: "benign_directory", act_mail: "benign_mail",
    act_ssh_admin: "benign_ssh", act_git: "benign_git", act_db_query: "benign_db", act_print: "benign_print",
    act_update: "benign_update", act_snmp: "benign_monitoring", act_port_check: "benign_monitoring_scan",
    act_ping: "benign_monitoring", act_backup_pull: "benign_backup", act_registry: "benign_update",
    act_voip: "benign_voip", act_streaming: "benign_web", act_modbus: "benign_modbus", act_dnp3: "benign_dnp3",
    act_opcua: "benign_opcua", act_s7_program: "benign_s7_program", act_plc_discovery: "benign_discovery",
    act_rdp: "benign_rdp", act_wsus: "benign_update", act_historian_web: "benign_web",
    act_camera_stream: "benign_video", act_page_load: "benign_page_load", act_keepalive: "benign_keepalive",
    act_update_check: "benign_update_check", act_dns_burst: "benign_dns", act_name_broadcast: "benign_discovery",
    act_recursive_lookup: "benign_dns", act_ntp_poll: "benign_ntp", act_mdns: "benign_discovery",
    act_ssdp_search: "benign_discovery", act_dhcp: "benign_iot_chatter", act_cloud_session: "benign_iot_chatter",
    act_ad_lookup: "benign_windows_domain", act_kerberos: "benign_windows_domain", act_cldap: "benign_windows_domain",
    act_netbios: "benign_windows_domain", act_sysvol: "benign_windows_domain",
    act_domain_refresh: "benign_windows_domain", act_bulk_download: "benign_bulk_download",
    act_long_session: "benign_long_session",
}
