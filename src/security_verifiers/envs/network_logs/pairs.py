"""E1's *hard* episodes: an attack and its benign twin that share the flow to classify.

Each pair draws the flow to classify (and the host, whose role comes from the pair's role list) *before* the
label is drawn, from one distribution shared by the attack and its twin; only then is the label drawn (with
the same probability :data:`P_MALICIOUS` in every pair) and the earlier flows of the attack or of the twin
added. So the flow's own fields, and the host's role, carry no information about the label of a hard item:
a model that reads only them can do no better than the hard items' base rate, whatever it learned on the
other items. What tells the two apart is the window: a scan touches many hosts while a retry hammers one,
a bot's host also scans or was just infected while a device's check-ins come alone, a flood fills the
window with one victim while a page load spreads over a few CDN front-ends after its lookups, a dropper
fetches by bare IP while an updater looks the name up first, exfiltration follows bulk internal reads while
a backup repeats its chunks. Attacks run fast enough for their earlier steps to be among the host's last
20 flows: otherwise the item would be unknowable, not hard.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from security_verifiers.envs.network_logs.episodes import (
    Episode,
    beacons,
    benign,
    collection,
    dropper_context,
    malicious,
    probe_outcome,
    ssh_auth_attempt,
    telnet_login,
)
from security_verifiers.envs.network_logs.sites import is_internal, public_ip
from security_verifiers.envs.network_logs.traffic import Timeline, established_state, lognormal_int

#: The probability that a hard item is the attack, the same in every pair (so the pair is no clue either).
P_MALICIOUS = 0.5

Context = Callable[[Timeline, float, dict[str, Any]], str]


def _hard(tl: Timeline, target: dict[str, Any], attack: Context, twin: Context) -> Episode:
    """Draw the label only now, then add the flows that came before the target; they name the family."""
    if tl.rng.random() < P_MALICIOUS:
        return malicious(target, attack(tl, target["ts"], target), "hard")
    return benign(target, twin(tl, target["ts"], target), "hard")


# ---- a refused or unanswered connection: a scan's probe, or a retry ------------------------------------------
_FAILED_PORTS = (22, 23, 80, 443, 445, 3389, 8080, 1883, 8883, 5432)


def hard_failed_connection(tl: Timeline, t: float) -> Episode:
    """A refused or unanswered TCP connection: one probe of a scan, or an application retrying its server."""
    r = tl.rng
    lan = r.random() < 0.5
    dst = tl.net.internal_peer(r) if lan else public_ip(r)
    outcome = r.choice(("rej", "s0_1", "s0_n")) if lan else r.choice(("s0_1", "s0_n", "s0_n"))
    return _hard(tl, tl.attempt(t, dst, r.choice(_FAILED_PORTS), outcome, lan), _scan, _retries)


def _scan(tl: Timeline, t: float, target: dict[str, Any]) -> str:
    """A sweep of the target's port over many hosts, or of many ports of the target's host; fast or slow."""
    r = tl.rng
    lan = is_internal(target["id.resp_h"])
    gap = r.uniform(2.0, 10.0) if r.random() < 0.4 else r.uniform(0.01, 0.8)
    horizontal = r.random() < 0.6
    for i in range(r.randint(10, 40), 0, -1):
        ts = t - i * gap * r.uniform(0.5, 1.5)
        if horizontal:
            dst = tl.net.internal_peer(r) if lan else public_ip(r)
            tl.attempt(ts, dst, target["id.resp_p"], probe_outcome(r, lan), lan)
        else:
            tl.attempt(ts, target["id.resp_h"], r.randint(1, 10_000), probe_outcome(r, lan), lan)
    return "portscan_horizontal" if horizontal else "portscan_vertical"


def _retries(tl: Timeline, t: float, target: dict[str, Any]) -> str:
    """The same connection tried again with back-off (or a single failure among ordinary traffic)."""
    r = tl.rng
    backoff = r.uniform(2.0, 30.0)
    outcome = "rej" if target["conn_state"] == "REJ" else "s0_n" if target["duration"] else "s0_1"
    for i in range(r.choice((0, r.randint(2, 9))), 0, -1):
        tl.attempt(t - backoff * (2 ** min(i, 4) - 1) * r.uniform(0.9, 1.1), target["id.resp_h"],
                   target["id.resp_p"], outcome, is_internal(target["id.resp_h"]))
    return "benign_failed_conn"


# ---- a short telnet session to an internal device: a guess of a brute force, or a config pull -------------
def hard_telnet_session(tl: Timeline, t: float) -> Episode:
    """A short telnet session to a switch, printer or device: one guess of a brute force, or an administrator's
    or a backup script's session."""
    r = tl.rng
    dst = r.choice(tl.net.servers["switch"] + tl.net.servers["printer"] + tl.net.servers["device"])
    target = tl.tcp(t, dst, 23 if r.random() < 0.8 else 2323, "telnet", lognormal_int(r, 120, 0.9, 8, 4_000),
                    lognormal_int(r, 900, 1.6, 25, 80_000), r.uniform(0.3, 12.0),
                    r.choices(("SF", "RSTO", "RSTR"), (0.75, 0.1, 0.15))[0], server_first=True)
    return _hard(tl, target, _telnet_guesses, _telnet_admin)


def _telnet_guesses(tl: Timeline, t: float, target: dict[str, Any]) -> str:
    r = tl.rng
    gap = r.uniform(3.0, 12.0) if r.random() < 0.4 else r.uniform(0.3, 3.0)
    for i in range(r.randint(10, 35), 0, -1):
        ts = t - i * gap * r.uniform(0.5, 1.5)
        if r.random() < 0.15:
            tl.attempt(ts, tl.net.internal_peer(r), target["id.resp_p"], probe_outcome(r, lan=True), lan=True)
        else:
            telnet_login(tl, ts, target["id.resp_h"], target["id.resp_p"])
    return "telnet_bruteforce"


def _telnet_admin(tl: Timeline, t: float, target: dict[str, Any]) -> str:
    """A backup script pulling configurations switch after switch, or an administrator's own sessions."""
    r = tl.rng
    if r.random() < 0.6:
        others = [s for s in tl.net.servers["switch"] if s != target["id.resp_h"]]
        r.shuffle(others)
        gap = r.uniform(1.0, 20.0)
        for i, switch in enumerate(others[: r.randint(5, 18)], 1):
            tl.tcp(t - i * gap * r.uniform(0.7, 1.3), switch, 23, "telnet", r.randint(30, 260),
                   r.randint(1_500, 60_000), r.uniform(1.0, 12.0), server_first=True)
        return "benign_config_backup"
    for _ in range(r.randint(0, 2)):
        dur = r.lognormvariate(5.0, 1.0)
        tl.tcp(t - r.uniform(60.0, 1800.0), target["id.resp_h"], target["id.resp_p"], "telnet",
               int(40 + dur * r.uniform(0.5, 5)), int(300 + dur * r.uniform(5, 150)), dur, established_state(r),
               server_first=True)
    return "benign_telnet_admin"


# ---- an SSH session to a server: a password guess, or a scheduled job's login ----------------------------------
def hard_ssh_session(tl: Timeline, t: float) -> Episode:
    """A short SSH session: one guess of a password brute force, or a cron job's or a user's login."""
    r = tl.rng
    dst = r.choice(tl.net.servers["web"] + tl.net.servers["db"] + tl.net.servers["git"]) if r.random() < 0.7 \
        else public_ip(r)
    target = tl.tcp(t, dst, 22, "ssh", r.randint(1_200, 6_000), r.randint(1_700, 9_000), r.uniform(0.3, 5.0),
                    r.choices(("SF", "RSTO", "RSTR"), (0.8, 0.08, 0.12))[0], server_first=True)
    return _hard(tl, target, _ssh_guesses, _ssh_jobs)


def _ssh_guesses(tl: Timeline, t: float, target: dict[str, Any]) -> str:
    r = tl.rng
    gap = r.uniform(3.0, 12.0) if r.random() < 0.4 else r.uniform(0.4, 3.0)
    for i in range(r.randint(10, 35), 0, -1):
        ssh_auth_attempt(tl, t - i * gap * r.uniform(0.7, 1.3), target["id.resp_h"])
    return "ssh_bruteforce"


def _ssh_jobs(tl: Timeline, t: float, target: dict[str, Any]) -> str:
    """A cron job running a command on the server at a fixed interval, or a user's occasional logins."""
    r = tl.rng
    if r.random() < 0.6:
        period = r.uniform(20.0, 300.0)
        for i in range(r.randint(4, 15), 0, -1):
            tl.tcp(t - i * period * r.uniform(0.98, 1.02), target["id.resp_h"], 22, "ssh", r.randint(2_600, 4_800),
                   r.randint(3_000, 9_000), r.uniform(0.3, 2.5), server_first=True)
    else:
        for _ in range(r.randint(0, 2)):
            dur = r.lognormvariate(5.5, 1.0)
            tl.tcp(t - r.uniform(120.0, 3600.0), target["id.resp_h"], 22, "ssh", int(2500 + dur * r.uniform(5, 60)),
                   int(3500 + dur * r.uniform(20, 400)), dur, established_state(r), server_first=True)
    return "benign_ssh"


# ---- a small request to an Internet server: a bot's heartbeat, or a device's or updater's check-in -------------
_CHECK_IN_PORTS = ((443, "ssl"), (443, "ssl"), (8883, "ssl"), (80, "http"), (8080, "http"), (443, None))


def hard_check_in(tl: Timeline, t: float) -> Episode:
    """A small request to an Internet server: a bot's heartbeat to its C&C, or a device's or updater's check-in."""
    r = tl.rng
    port, service = r.choice(_CHECK_IN_PORTS)
    target = tl.tcp(t, public_ip(r), port, service, lognormal_int(r, 350, 0.7, 40, 5_000),
                    lognormal_int(r, 300, 0.9, 0, 9_000), r.uniform(0.05, 1.5), "SF" if r.random() < 0.9 else "RSTR")
    return _hard(tl, target, _heartbeats, _check_ins)


def _heartbeats(tl: Timeline, t: float, target: dict[str, Any]) -> str:
    """Earlier heartbeats at a steady interval, and what compromised the host beside them: a bot scanning for
    its next victims, guessing telnet passwords next door, or the dropper that installed it."""
    r = tl.rng
    period = r.uniform(5.0, 120.0)
    ob, rb = target["orig_bytes"], target["resp_bytes"]
    first = beacons(tl, t - max(0.5, r.gauss(period, period * 0.1)), target["id.resp_h"], target["id.resp_p"],
                    target["service"], period, r.uniform(0.0, 0.25), (max(1, ob - 12), max(0, rb - 8)),
                    r.randint(4, 12))
    span = t - first["ts"] + period
    evidence = r.choice(("scan", "bruteforce", "dropper"))
    if evidence == "dropper":
        dropper_context(tl, t - r.uniform(0.5, 1.0) * span, public_ip(r), r.choice((80, 8080, 81)), "http")
        tl.tcp(t - r.uniform(0.4, 0.6) * span, public_ip(r), 80, "http", r.randint(90, 300),
               r.randint(30_000, 250_000), r.uniform(0.3, 6.0))
    for _ in range(r.randint(4, 12) if evidence != "dropper" else 0):
        ts = t - r.uniform(0.0, span)
        if evidence == "scan":
            tl.attempt(ts, public_ip(r), r.choice((23, 2323, 5555, 7547, 37215)), probe_outcome(r, lan=False),
                       lan=False)
        else:
            telnet_login(tl, ts, tl.net.internal_peer(r), 23)
    return "cc_heartbeat"


def _check_ins(tl: Timeline, t: float, target: dict[str, Any]) -> str:
    """A device's telemetry or an updater's checks: fixed-size heartbeats (half of them, as many devices send)
    or payloads that vary with what is reported, and the name looked up again every few check-ins."""
    r = tl.rng
    period = r.uniform(10.0, 300.0)
    fixed = r.random() < 0.5
    ob, rb = max(40, target["orig_bytes"] or 40), max(40, target["resp_bytes"] or 40)
    ts = t
    for k in range(r.randint(3, 12)):
        ts -= max(1.0, r.gauss(period, period * r.uniform(0.01, 0.3)))
        if k % r.randint(1, 5) == 0:
            tl.dns(ts - r.uniform(0.002, 0.3))
        if fixed:
            sizes = (ob + r.randint(-1, 1) * 8, rb + r.randint(-1, 1) * 8)
        else:
            sizes = (lognormal_int(r, ob, 0.5, 40, 20_000), lognormal_int(r, rb, 0.6, 0, 20_000))
        tl.tcp(ts, target["id.resp_h"], target["id.resp_p"], target["service"], *sizes, r.uniform(0.05, 1.5),
               established_state(r))
    return "benign_telemetry" if tl.role.startswith(("iot_", "smart_")) else "benign_update_check"


# ---- a short web request: one of a flood's thousands, or one of a page load's dozen --------------------------
def hard_web_request(tl: Timeline, t: float) -> Episode:
    """A short web request to an Internet server: one of an HTTP flood, or one of a page load's connections."""
    r = tl.rng
    port, service = r.choice(((443, "ssl"), (443, "ssl"), (80, "http")))
    target = tl.tcp(t, public_ip(r), port, service, lognormal_int(r, 500, 0.7, 60, 3_000),
                    lognormal_int(r, 4_000, 1.6, 0, 400_000), r.lognormvariate(-0.9, 1.0),
                    r.choices(("SF", "RSTO", "RSTR", "S1"), (0.7, 0.1, 0.1, 0.1))[0])
    return _hard(tl, target, _flood, _page_load)


def _flood(tl: Timeline, t: float, target: dict[str, Any]) -> str:
    """Requests to the same victim, many per second; the struggling server resets or ignores some."""
    r = tl.rng
    gap = r.uniform(0.002, 0.3)
    for i in range(r.randint(25, 60), 0, -1):
        ts = t - i * gap * r.uniform(0.5, 1.5)
        if r.random() < 0.2:
            tl.attempt(ts, target["id.resp_h"], target["id.resp_p"], r.choice(("s0_1", "s0_n")), lan=False)
        else:
            tl.tcp(ts, target["id.resp_h"], target["id.resp_p"], target["service"], r.randint(60, 600),
                   r.randint(0, 2_500), r.uniform(0.05, 2.0), r.choice(("SF", "RSTO", "RSTR", "S1")))
    return "ddos_flood"


def _page_load(tl: Timeline, t: float, target: dict[str, Any]) -> str:
    """The page's names looked up, then its other connections, to a few front-ends (at most six to this one)."""
    r = tl.rng
    span = r.uniform(0.3, 4.0)
    for _ in range(r.randint(1, 5)):
        tl.dns(t - span - r.uniform(0.001, 0.3))
    fronts = [target["id.resp_h"], *(r.choice(tl.cdns) for _ in range(r.randint(1, 4)))]
    used = {target["id.resp_h"]: 1}
    for _ in range(r.randint(4, 20)):
        dst = r.choice([f for f in fronts if used.get(f, 0) < 6] or fronts[1:])
        used[dst] = used.get(dst, 0) + 1
        tl.tcp(t - r.uniform(0.0, span), dst, 443, "ssl", lognormal_int(r, 1_100, 0.6, 300, 60_000),
               lognormal_int(r, 12_000, 1.5, 200, 8_000_000), r.lognormvariate(-0.2, 1.2), established_state(r))
    return "benign_page_load"


# ---- a download from an Internet server: a dropper's payload, or an update -----------------------------------
def hard_download(tl: Timeline, t: float) -> Episode:
    """An executable-sized download from an Internet server: a dropper's payload, or a software update."""
    r = tl.rng
    port, service = r.choice(((80, "http"), (80, "http"), (443, "ssl"), (8080, "http")))
    rb = lognormal_int(r, 600_000, 1.3, 30_000, 30_000_000)
    target = tl.tcp(t, public_ip(r), port, service, r.randint(90, 600), rb, rb / r.uniform(2e4, 5e6))
    return _hard(tl, target, _dropper, _updater)


def _dropper(tl: Timeline, t: float, target: dict[str, Any]) -> str:
    dropper_context(tl, t, target["id.resp_h"], target["id.resp_p"], target["service"])
    return "malware_download"


def _updater(tl: Timeline, t: float, target: dict[str, Any]) -> str:
    """A version check with the vendor a little earlier, and the download's name looked up just before."""
    r = tl.rng
    check = t - r.uniform(3.5, 30.0)
    tl.dns(check - r.uniform(0.01, 0.4))
    tl.tcp(check, r.choice((tl.cloud, *tl.cdns[:2])), 443, "ssl", r.randint(400, 2_500), r.randint(700, 9_000),
           r.uniform(0.1, 1.5))
    tl.dns(t - r.uniform(0.001, 0.35))
    return "benign_update"


# ---- a large upload to an Internet server: exfiltration, or a backup or sync -----------------------------------
def hard_upload(tl: Timeline, t: float) -> Episode:
    """A large upload to an Internet server: exfiltration, or a backup chunk or a sync client's upload."""
    r = tl.rng
    port, service = r.choice(((443, "ssl"), (443, "ssl"), (443, "ssl"), (8443, "ssl"), (22, "ssh")))
    ob = lognormal_int(r, 40_000_000, 1.3, 3_000_000, 5_000_000_000)
    target = tl.tcp(t, public_ip(r), port, service, ob, r.randint(2_000, 400_000), ob / r.uniform(3e5, 6e6),
                    "SF" if r.random() < 0.88 else "RSTR", server_first=port == 22)
    return _hard(tl, target, _staged_exfiltration, _backup)


def _staged_exfiltration(tl: Timeline, t: float, target: dict[str, Any]) -> str:
    r = tl.rng
    collection(tl, t, r.randint(2, 6))
    if r.random() < 0.3:
        tl.dns(t - r.uniform(0.01, 0.5))
    return "exfiltration"


def _backup(tl: Timeline, t: float, target: dict[str, Any]) -> str:
    """Earlier chunks of the same backup to the same target, or a sync client that just looked its server up."""
    r = tl.rng
    if r.random() < 0.6:
        tl.dns(t - r.uniform(600.0, 1800.0))
        ts = t
        for _ in range(r.randint(1, 7)):
            ob = int(target["orig_bytes"] * r.uniform(0.6, 1.4))
            ts -= ob / r.uniform(3e5, 6e6) + r.uniform(1.0, 20.0)
            tl.tcp(ts, target["id.resp_h"], target["id.resp_p"], target["service"], ob, r.randint(2_000, 400_000),
                   ob / r.uniform(3e5, 6e6), server_first=target["id.resp_p"] == 22)
        return "benign_backup"
    tl.dns(t - r.uniform(0.002, 0.3))
    if r.random() < 0.5:
        tl.tcp(t - r.uniform(60.0, 600.0), target["id.resp_h"], target["id.resp_p"], target["service"],
               r.randint(2_000, 20_000), r.randint(3_000, 30_000), r.uniform(0.5, 5.0))
    return "benign_cloud_sync"


# ---- ood: a DNS query, a long-held web connection, an SMB session -----------------------------------------------
def hard_dns_query(tl: Timeline, t: float) -> Episode:
    """A DNS query with a longish name: a chunk of a DNS tunnel, or one lookup of a dashboard's burst."""
    r = tl.rng
    return _hard(tl, tl.dns(t, qsize=r.randint(40, 160)), _tunnel, _lookups)


def _tunnel(tl: Timeline, t: float, target: dict[str, Any]) -> str:
    r = tl.rng
    gap = r.uniform(2.0, 8.0) if r.random() < 0.3 else r.uniform(0.05, 2.0)
    for i in range(r.randint(12, 40), 0, -1):
        tl.dns(t - i * gap * r.uniform(0.7, 1.3), qsize=r.randint(90, 250))
    return "dns_tunneling"


def _lookups(tl: Timeline, t: float, target: dict[str, Any]) -> str:
    r = tl.rng
    for i in range(r.randint(6, 24), 0, -1):
        tl.dns(t - i * r.uniform(0.02, 1.5), answered=r.random() > 0.05)
    return "benign_dns"


def hard_long_web(tl: Timeline, t: float) -> Episode:
    """A web connection held open for minutes with a trickle of bytes: slowloris, or a dashboard's live feed."""
    r = tl.rng
    port, service = r.choice(((80, "http"), (443, "ssl"), (80, "http")))
    dur = r.uniform(60.0, 900.0)
    state = r.choice(("S1", "RSTR", "SF", "RSTO"))
    target = tl.tcp(t, tl.net.server(r, "historian_web"), port, service,
                    int(dur / r.uniform(5, 15)) * 20 + r.randint(200, 800),
                    0 if state in ("S1", "RSTO") else r.randint(200, 4_000), dur, state)
    return _hard(tl, target, _slowloris, _live_dashboard)


def _slowloris(tl: Timeline, t: float, target: dict[str, Any]) -> str:
    r = tl.rng
    for i in range(r.randint(20, 40), 0, -1):
        dur = r.uniform(60.0, 900.0)
        state = r.choice(("S1", "RSTR", "SF", "RSTO"))
        tl.tcp(t - i * r.uniform(0.01, 0.4), target["id.resp_h"], target["id.resp_p"], target["service"],
               int(dur / r.uniform(5, 15)) * 20, 0 if state in ("S1", "RSTO") else r.randint(200, 600), dur, state)
    return "http_slowloris"


def _live_dashboard(tl: Timeline, t: float, target: dict[str, Any]) -> str:
    """The dashboard's page requests before it opened its live connection, then its periodic refreshes."""
    r = tl.rng
    period = r.uniform(1.0, 15.0)
    for i in range(r.randint(4, 18), 0, -1):
        tl.tcp(t - i * period * r.uniform(0.8, 1.2), target["id.resp_h"], target["id.resp_p"], target["service"],
               r.randint(250, 1_500), r.randint(400, 60_000), r.uniform(0.01, 1.5), established_state(r))
    return "benign_keepalive"


def hard_smb_session(tl: Timeline, t: float) -> Episode:
    """An SMB session to an internal host: a worm pushing itself to the next victim, or a user copying files."""
    r = tl.rng
    dst = tl.net.server(r, "file") if r.random() < 0.5 else tl.net.internal_peer(r)
    target = tl.tcp(t, dst, 445, "smb", lognormal_int(r, 8_000, 1.4, 1_500, 900_000), r.randint(1_000, 60_000),
                    r.uniform(0.05, 5.0))
    return _hard(tl, target, _lateral, _file_copy)


def _lateral(tl: Timeline, t: float, target: dict[str, Any]) -> str:
    r = tl.rng
    gap = r.uniform(0.2, 8.0)
    for i in range(r.randint(15, 35), 0, -1):
        ts, dst = t - i * gap * r.uniform(0.6, 1.4), tl.net.internal_peer(r)
        kind = r.random()
        if kind < 0.35:
            tl.attempt(ts, dst, 445, r.choice(("rej", "s0_n")), lan=True)
        elif kind < 0.5:
            tl.tcp(ts, dst, 135, "dce_rpc", r.randint(300, 2_000), r.randint(200, 1_500), r.uniform(0.01, 0.5))
        else:
            tl.tcp(ts, dst, 445, "smb", r.randint(1_500, 12_000), r.randint(1_000, 8_000), r.uniform(0.05, 4.0))
    return "lateral_smb"


def _file_copy(tl: Timeline, t: float, target: dict[str, Any]) -> str:
    r = tl.rng
    for i in range(r.randint(3, 12), 0, -1):
        tl.tcp(t - i * r.uniform(0.5, 20.0), target["id.resp_h"], 445, "smb",
               lognormal_int(r, 3_000, 1.2, 200, 5_000_000), lognormal_int(r, 60_000, 1.8, 400, 200_000_000),
               r.lognormvariate(0.7, 1.5), established_state(r))
    return "benign_smb"
