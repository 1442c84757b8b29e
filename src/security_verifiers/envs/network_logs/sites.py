"""Where E1's simulated hosts live: address pools, the two sites (an enterprise with IoT devices, an industrial
control network) and their shared servers. Attackers' servers and benign clouds are drawn from one pool of
routable addresses, so an address alone never tells which is which.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

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


#: Public resolvers (many IoT devices hard-code one) and root/TLD name servers (a recursive resolver's peers).
PUBLIC_RESOLVERS = ("8.8.8.8", "8.8.4.4", "1.1.1.1", "9.9.9.9", "208.67.222.222")
NAME_SERVERS = ("198.41.0.4", "199.9.14.201", "192.33.4.12", "199.7.91.13", "192.5.5.241", "192.112.36.4",
                "193.0.14.129", "199.7.83.42", "192.5.6.30", "192.33.14.30", "192.26.92.30", "192.12.94.30")


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
        "ci_runner": "10.1.5", "monitoring_server": "10.1.4", "backup_server": "10.1.6", "dns_server": "10.0.0",
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
