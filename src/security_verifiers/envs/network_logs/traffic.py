"""Zeek-consistent flow records for one simulated host: a :class:`Timeline` and its flow builders.

A builder turns what happened (a TCP conversation of so many bytes, a refused attempt, a DNS lookup) into
the conn record Zeek would write for it: state, history letters and packet counts follow from the bytes, so
no field is drawn independently of the others. Every float is rounded, so items are byte-identical on every
machine.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any

from security_verifiers.envs.network_logs.sites import PUBLIC_RESOLVERS, Network, public_ip

_MSS = 1448
#: A flow meter's active timeout: a session longer than this is written as consecutive records of this length
#: (CICFlowMeter's default; real CIC-IDS-2017 benign durations pile up just under it).
FLOW_TIMEOUT = 120.0
#: When an operating system resends an unanswered SYN (seconds after the first): Linux doubles its 1 s timeout up
#: to six retransmissions (``tcp_syn_retries``), Windows starts at 3 s and resends twice. A scanner's raw-socket
#: probe is sent once (masscan, Mirai) or twice (nmap); only an application's ``connect()`` goes through these.
SYN_RETRIES: dict[str, tuple[float, ...]] = {"linux": (1.0, 3.0, 7.0, 15.0, 31.0, 63.0), "windows": (3.0, 9.0)}
#: How long applications wait on ``connect()`` before giving up (seconds; the OS gives up after its last retry).
CONNECT_TIMEOUTS = (5.0, 10.0, 20.0, 30.0, 75.0, 130.0)


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
    cdns: tuple[str, ...] = ()
    #: whether the sensor names NTP (Zeek builds without an NTP analyzer, as in IoT-23, leave ``service`` empty)
    ntp_named: bool = True

    def __post_init__(self) -> None:
        self.resolver = self.net.server(self.rng, "dns")
        if self.role.startswith(("iot_", "smart_")) and self.rng.random() < 0.3:
            self.resolver = self.rng.choice(PUBLIC_RESOLVERS)  # a device that hard-codes a public resolver
        self.cloud = self.rng.choice(self.net.clouds)
        # the few CDN and cloud front-ends this host's browser and apps keep coming back to
        self.cdns = tuple(public_ip(self.rng) for _ in range(self.rng.randint(3, 6)))
        self.ntp_named = self.rng.random() < 0.5

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
        closed = 1 if state in ("SF", "S2", "S3") else 0
        pkts = (2 + out_seg + math.ceil(in_seg / 2) + closed + self.rng.randint(0, 1),
                1 + in_seg + math.ceil(out_seg / 2) + closed)
        if state == "OTH":  # picked up mid-stream (a flow meter's continuation record): no handshake seen
            pkts = (max(1, pkts[0] - 2), max(1 if rb else 0, pkts[1] - 1))
        return self._add(ts, dst, dport, "tcp", service, state, duration, ob, rb, pkts,
                         _tcp_history(self.rng, state, ob, rb, server_first))

    def segments(self, t: float, full: int, last: float, dst: str, dport: int, proto: str,
                 service: str | None, rate_out: float, rate_in: float,
                 close: str = "SF") -> list[dict[str, Any]]:
        """A long session written as a flow meter writes it: ``full`` records cut at :data:`FLOW_TIMEOUT`,
        then the record of its last ``last`` seconds at ``t``, all on one 5-tuple. A TCP session's first record
        saw the handshake but no close (S1), the middle ones neither (OTH: picked up mid-stream) and the last
        one ends in ``close``; a UDP session's records are SF. ``rate_out``/``rate_in``: bytes per second."""
        r = self.rng
        sport = self.ephemeral()
        out: list[dict[str, Any]] = []
        for k in range(full + 1):
            is_last = k == full
            ts = t - (full - k) * FLOW_TIMEOUT
            dur = last if is_last else FLOW_TIMEOUT - r.uniform(0.0005, 0.6)
            ob = max(1, int(dur * rate_out * r.uniform(0.7, 1.3)))
            rb = max(0, int(dur * rate_in * r.uniform(0.7, 1.3)))
            if proto == "udp":
                out.append(self.udp(ts, dst, dport, service, ob, rb, dur,
                                    pkts=(max(2, math.ceil(ob / 1100)), max(1, math.ceil(rb / 1100))), sport=sport))
                continue
            state = close if is_last else ("S1" if k == 0 else "OTH")
            out.append(self.tcp(ts, dst, dport, service, ob, rb, dur, state))
            out[-1]["id.orig_p"] = sport
        return out

    def stray_fin(self, ts: float, dst: str, dport: int) -> dict[str, Any]:
        """A lone FIN for a connection the sensor never saw open (Zeek state SH, nothing but its packet count)."""
        return self._add(ts, dst, dport, "tcp", None, "SH", None, None, None, (1, 0), "F")

    def attempt(self, ts: float, dst: str, dport: int, outcome: str, lan: bool) -> dict[str, Any]:
        """A TCP connection that carried no data.

        ``s0_1``/``s0_n``: no answer (one SYN, or retransmitted once or twice, as a scanner does); ``s0_os``: no
        answer to an application's ``connect()``, its SYN resent on the OS's schedule (:data:`SYN_RETRIES`) until
        the application or the OS gives up; ``rej``: refused; ``synrst``: a SYN scan that found an open port;
        ``connrst``: a full handshake, then a reset.
        """
        rtt = self.rng.uniform(0.0002, 0.004) if lan else self.rng.uniform(0.012, 0.25)
        if outcome == "s0_1":
            return self._add(ts, dst, dport, "tcp", None, "S0", None, None, None, (1, 0), "S")
        if outcome == "s0_n":
            tries = self.rng.choice((2, 3))
            duration = (1.0 if tries == 2 else 3.0) + self.rng.uniform(0.0, 0.06)
            return self._add(ts, dst, dport, "tcp", None, "S0", duration, 0, 0, (tries, 0), "S")
        if outcome == "s0_os":
            timeout = self.rng.choice(CONNECT_TIMEOUTS)
            resent = [d for d in SYN_RETRIES[self.rng.choice(("linux", "windows"))] if d < timeout]  # never empty
            duration = resent[-1] + self.rng.uniform(0.0, 0.06)
            return self._add(ts, dst, dport, "tcp", None, "S0", duration, 0, 0, (1 + len(resent), 0), "S")
        if outcome == "rej":
            return self._add(ts, dst, dport, "tcp", None, "REJ", rtt, 0, 0, (1, 1), "Sr")
        if outcome == "synrst":
            return self._add(ts, dst, dport, "tcp", None, "RSTO", rtt, 0, 0, (2, 1), "ShR")
        return self._add(ts, dst, dport, "tcp", None, "RSTO", rtt * 1.5, 0, 0, (3, 1), "ShAR")

    def udp(self, ts: float, dst: str, dport: int, service: str | None, ob: int, rb: int,
            duration: float | None, pkts: tuple[int, int] = (1, 1),
            sport: int | None = None) -> dict[str, Any]:
        """A UDP exchange; without a reply it is Zeek state S0 with history ``D``. A lone unanswered datagram
        lasts no time, and Zeek then logs neither a duration nor byte counts (``-``), only its packet."""
        if rb == 0:
            if pkts[0] <= 1:
                return self._add(ts, dst, dport, "udp", service, "S0", None, None, None, (1, 0), "D", sport)
            return self._add(ts, dst, dport, "udp", service, "S0", duration, ob, 0, (pkts[0], 0), "D", sport)
        return self._add(ts, dst, dport, "udp", service, "SF", duration, ob, rb, pkts, "Dd", sport)

    def icmp(self, ts: float, dst: str, count: int, size: int, answered: bool,
             duration: float) -> dict[str, Any]:
        """ICMP echo; Zeek keys it by type/code, which it prints as the ports."""
        rb = count * size if answered else 0
        return self._add(ts, dst, 0, "icmp", None, "OTH", duration if count > 1 else None, count * size, rb,
                         (count, count if answered else 0), "", sport=8)

    def quic(self, ts: float, dst: str, ob: int, rb: int, duration: float) -> dict[str, Any]:
        """HTTP/3 over UDP 443: both directions carry data; Zeek versions without a QUIC analyzer name no service."""
        out, back = max(2, math.ceil(ob / 1250)), max(1, math.ceil(rb / 1250))
        return self.udp(ts, dst, 443, None, ob, rb, duration, pkts=(out + back // 8, back))

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
    if state == "OTH":
        return body[2:]
    if state == "SF":
        return body + rng.choice(("Ff", "fF"))
    if state == "S3":
        return body + "f"
    if state == "S2":
        return body + "F"
    if state == "RSTO":
        return body + "R"
    if state == "RSTR":
        return body + "r"
    return body  # S1: established, still open


def lognormal_int(rng: random.Random, median: float, sigma: float, lo: int, hi: int) -> int:
    return int(min(hi, max(lo, rng.lognormvariate(math.log(median), sigma))))


def jittered(rng: random.Random, start: float, period: float, cv: float, end: float) -> list[float]:
    """Times of a periodic activity from ``start`` up to ``end`` (exclusive), with relative jitter ``cv``."""
    times, t = [], start
    while t < end:
        times.append(t)
        t += max(0.05, rng.gauss(period, period * cv))
    return times


def established_state(rng: random.Random) -> str:
    """Most sessions close cleanly; some are reset or still open when the log rotates."""
    return rng.choices(("SF", "RSTO", "RSTR", "S1"), (0.86, 0.05, 0.06, 0.03))[0]
