"""The union of the sources that reach the same place, across the blocks and resources of a Terraform file.

Why: :mod:`canonical` judges one list of CIDRs by its union; a patch can as well put ``0.0.0.0/1`` in one ingress
block and ``128.0.0.0/1`` in another (or in two rule resources of one security group, two firewalls of one network,
two NSG rules, two authorized networks) and no single list covers the internet. Traffic does not care which rule
admitted it: what an address can reach is the union of every rule that admits it there.

Semantics (sound: the world is added only where every port it is added for is reachable from the world):

* A **reach** is one rule that admits sources: its place (security group and direction; GCP network and the
  instances it targets; NSG and direction), its ``(protocol, low port, high port)`` spans, its sources.
* A reach is **open to the world** when, for each of its spans and each port of the span, the union of the sources
  of the reaches at the same place that admit that protocol (or every protocol) on that port covers the world
  (:func:`canonical.world_cidrs_covered`). It is then given the world CIDR (``0.0.0.0/0`` / ``::/0``) in its source
  list, beside what the file says, as :mod:`canonical` does for one list. So ``0.0.0.0/1`` on every port plus
  ``128.0.0.0/1`` on 22 opens 22 (the second reach gets the world), and halves on 22 and 443 open nothing.
* GCP: a firewall with ``target_tags`` / ``target_service_accounts`` applies to those instances; a firewall
  contributes to another where it applies to every instance the other does (no targets, or a superset).
* Authorized networks (Cloud SQL ``authorized_networks``, GKE ``master_authorized_networks_config.cidr_blocks``):
  the union over the blocks of one parent; a block holding the world is added.
* Not done: deny rules and priorities (a rule open to the world is flagged whatever a deny above it says, as for one
  rule); two reaches that overlap only in part of each one's range (``0/1`` on 10-30, ``128/1`` on 20-40: 20-30 is
  open, but neither reach wholly is) are not equated with the world.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from security_verifiers.engines.canonical import world_cidrs_covered

ALL = "all"
#: Protocol spellings of the providers, normalised; ``ALL`` admits every protocol (and every port).
_PROTOCOLS = {"-1": ALL, "all": ALL, "${-1}": ALL, "*": ALL, "6": "tcp", "17": "udp", "1": "icmp", "58": "icmpv6"}
#: Reaches per place past which no union is taken (bounded cost; no real group has so many rules).
MAX_REACHES = 256
MAX_PORT = 65535

Span = tuple[str, int, int]


@dataclass
class Reach:
    """One rule admitting ``sources`` at ``place`` on ``spans``; ``grant`` adds world CIDRs to its sources."""

    place: tuple[Any, ...]
    spans: list[Span]
    sources: list[str]
    grant: Callable[[list[str]], None]
    scope: frozenset[str] | None = None  # the instances it applies to (GCP targets); None: all of the place's


def _one(value: Any) -> Any:
    """An hcl2 attribute's value (hcl2 wraps each attribute in a one-element list)."""
    return value[0] if isinstance(value, list) and len(value) == 1 else value


def _strings(value: Any) -> list[str]:
    value = _one(value)
    if isinstance(value, str):
        return [value]
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _int(value: Any) -> int | None:
    value = _one(value)
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None


def _protocol(value: Any) -> str | None:
    value = _one(value)
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        return None
    return _PROTOCOLS.get(value.strip().lower(), value.strip().lower())


def _port_spec(spec: Any) -> tuple[int, int] | None:
    """``"22"``, ``22``, ``"20-30"``, ``"*"`` as a port range; None when it cannot be read."""
    if isinstance(spec, int) and not isinstance(spec, bool):
        return spec, spec
    if not isinstance(spec, str):
        return None
    text = spec.strip()
    if text == "*":
        return 0, MAX_PORT
    low, _, high = text.partition("-")
    if low.isdigit() and (not high or high.isdigit()):
        return int(low), int(high or low)
    return None


def _reference(value: Any) -> str | None:
    """``"${aws_security_group.web.id}"`` as ``aws_security_group.web``; a literal id as itself."""
    value = _one(value)
    if not isinstance(value, str):
        return None
    if value.startswith("${") and value.endswith("}"):
        parts = value[2:-1].strip().split(".")
        return ".".join(parts[:2]) if len(parts) >= 2 else None
    return value


def _add_to_list(body: dict[str, Any], key: str) -> Callable[[list[str]], None]:
    """A grant adding world CIDRs to the list attribute ``key`` of ``body`` (a new list: the old one may be shared
    with the evaluator's values)."""
    def grant(worlds: list[str]) -> None:
        current = _strings(body.get(key))
        body[key] = [[*current, *[w for w in worlds if w not in current]]]
    return grant


def _add_to_scalar(body: dict[str, Any], keys: dict[int, str]) -> Callable[[list[str]], None]:
    """A grant for a scalar CIDR attribute (``cidr_ipv4``): the world first (what a check reading one value reads),
    then what the file says."""
    def grant(worlds: list[str]) -> None:
        for world in worlds:
            key = keys[6 if ":" in world else 4]
            body[key] = [world, *[v for v in _strings(body.get(key)) if v != world]]
    return grant


# ------------------------------------------------------------------------------------------ reaches by provider
def _aws_span(block: dict[str, Any], protocol_key: str) -> list[Span]:
    protocol = _protocol(block.get(protocol_key))
    if protocol is None:
        return []
    if protocol == ALL:
        return [(ALL, 0, MAX_PORT)]
    low, high = _int(block.get("from_port")), _int(block.get("to_port"))
    if low is None or high is None:
        return []
    return [(protocol, low, high)]


def _aws(resources: dict[str, dict[str, dict[str, Any]]]) -> list[Reach]:
    reaches = []
    for name, body in resources.get("aws_security_group", {}).items():
        for direction in ("ingress", "egress"):
            blocks = body.get(direction)
            for block in blocks if isinstance(blocks, list) else []:
                if isinstance(block, dict):
                    reaches.append(Reach((f"aws_security_group.{name}", direction), _aws_span(block, "protocol"),
                                         _strings(block.get("cidr_blocks")) + _strings(block.get("ipv6_cidr_blocks")),
                                         _both_lists(block)))
    for body in resources.get("aws_security_group_rule", {}).values():
        group, direction = _reference(body.get("security_group_id")), _one(body.get("type"))
        if group is not None and direction in ("ingress", "egress"):
            reaches.append(Reach((group, direction), _aws_span(body, "protocol"),
                                 _strings(body.get("cidr_blocks")) + _strings(body.get("ipv6_cidr_blocks")),
                                 _both_lists(body)))
    for kind, direction in (("aws_vpc_security_group_ingress_rule", "ingress"),
                            ("aws_vpc_security_group_egress_rule", "egress")):
        for body in resources.get(kind, {}).values():
            group = _reference(body.get("security_group_id"))
            if group is not None:
                reaches.append(Reach((group, direction), _aws_span(body, "ip_protocol"),
                                     _strings(body.get("cidr_ipv4")) + _strings(body.get("cidr_ipv6")),
                                     _add_to_scalar(body, {4: "cidr_ipv4", 6: "cidr_ipv6"})))
    return reaches


def _both_lists(body: dict[str, Any]) -> Callable[[list[str]], None]:
    v4, v6 = _add_to_list(body, "cidr_blocks"), _add_to_list(body, "ipv6_cidr_blocks")

    def grant(worlds: list[str]) -> None:
        for world in worlds:
            (v6 if ":" in world else v4)([world])
    return grant


def _gcp(resources: dict[str, dict[str, dict[str, Any]]]) -> list[Reach]:
    reaches = []
    for body in resources.get("google_compute_firewall", {}).values():
        direction = _one(body.get("direction"))
        if (isinstance(direction, str) and direction.upper() != "INGRESS") or _one(body.get("disabled")) is True:
            continue
        allows = body.get("allow")
        spans: list[Span] = []
        for allow in allows if isinstance(allows, list) else []:
            protocol = _protocol(allow.get("protocol")) if isinstance(allow, dict) else None
            if protocol is None:
                continue
            ports = _strings(allow.get("ports"))
            ranges = [_port_spec(p) for p in ports] if ports else [(0, MAX_PORT)]
            spans.extend((protocol, r[0], r[1]) for r in ranges if r is not None)
        targets = {f"tag:{t}" for t in _strings(body.get("target_tags"))} | {
            f"sa:{s}" for s in _strings(body.get("target_service_accounts"))}
        reaches.append(Reach((_one(body.get("network")),), spans, _strings(body.get("source_ranges")),
                             _add_to_list(body, "source_ranges"), frozenset(targets) or None))
    return reaches


def _azure(resources: dict[str, dict[str, dict[str, Any]]]) -> list[Reach]:
    def reach(group: str | None, rule: dict[str, Any]) -> Reach | None:
        direction, access = _one(rule.get("direction")), _one(rule.get("access"))
        if group is None or not isinstance(direction, str) or str(access).lower() != "allow":
            return None
        protocol = _protocol(rule.get("protocol"))
        ports = _strings(rule.get("destination_port_range")) + _strings(rule.get("destination_port_ranges"))
        ranges = [r for r in map(_port_spec, ports) if r is not None]
        spans = [(protocol, *r) for r in ranges] if protocol is not None else []
        sources = _strings(rule.get("source_address_prefix")) + _strings(rule.get("source_address_prefixes"))
        return Reach((group, direction.lower()), spans, sources, _add_to_list(rule, "source_address_prefixes"))

    reaches = []
    for name, body in resources.get("azurerm_network_security_group", {}).items():
        rules = body.get("security_rule")
        for rule in rules if isinstance(rules, list) else []:
            if isinstance(rule, dict) and (found := reach(f"azurerm_network_security_group.{name}", rule)):
                reaches.append(found)
    for body in resources.get("azurerm_network_security_rule", {}).values():
        if found := reach(_reference(body.get("network_security_group_name")), body):
            reaches.append(found)
    return reaches


# ------------------------------------------------------------------------------------------ the union
def _admits(other: Reach, reach: Reach) -> bool:
    """Whether ``other`` applies to every instance ``reach`` applies to."""
    return other.scope is None or (reach.scope is not None and reach.scope <= other.scope)


def _covered(span: Span, place: list[Reach], reach: Reach) -> list[str]:
    """The world CIDRs that reach every port of ``span`` through the reaches of ``place``."""
    protocol, low, high = span
    peers = [(s, r) for r in place if _admits(r, reach) for s in r.spans
             if (s[0] == protocol or s[0] == ALL) and s[1] <= high and s[2] >= low]
    cuts = sorted({low, high + 1} | {s[1] for s, _ in peers if low < s[1] <= high}
                  | {s[2] + 1 for s, _ in peers if low <= s[2] < high})
    worlds: set[str] | None = None
    for start, end in zip(cuts, cuts[1:], strict=False):  # elementary intervals [start, end)
        sources = [c for s, r in peers if s[1] <= start and s[2] >= end - 1 for c in r.sources]
        here = set(world_cidrs_covered(sources))
        worlds = here if worlds is None else worlds & here
        if not worlds:
            return []
    return sorted(worlds or ())


def _union(reaches: list[Reach]) -> None:
    places: dict[tuple[Any, ...], list[Reach]] = {}
    for reach in reaches:
        places.setdefault(reach.place, []).append(reach)
    for place in places.values():
        if len(place) < 2 or len(place) > MAX_REACHES:
            continue  # one reach is judged by its own list (canonical.py)
        grants = []
        for reach in place:
            if not reach.spans:
                continue
            worlds = [w for w in (set.intersection(*(set(_covered(s, place, reach)) for s in reach.spans)))
                      if w not in reach.sources]
            if worlds:
                grants.append((reach, sorted(worlds)))
        for reach, worlds in grants:  # after every union is taken: a grant must not feed another
            reach.grant(worlds)


def _networks(parent: dict[str, Any], blocks_key: str, value_key: str) -> None:
    """Authorized-network blocks of one parent: a block holding the world added where their union covers it."""
    blocks = parent.get(blocks_key)
    if not isinstance(blocks, list) or len(blocks) < 2:
        return
    values = [v for b in blocks if isinstance(b, dict) for v in _strings(b.get(value_key))]
    missing = [w for w in world_cidrs_covered(values) if w not in values]
    if missing:
        parent[blocks_key] = [*blocks, *({value_key: [w]} for w in missing)]


def _walk_blocks(body: Any, path: tuple[str, ...]) -> list[dict[str, Any]]:
    """The nested blocks of ``body`` at ``path`` (each step a list of blocks)."""
    current = [body]
    for key in path:
        current = [b for c in current if isinstance(c, dict) for b in (c.get(key) or []) if isinstance(b, dict)]
    return current


def terraform_unions(document: dict[str, Any]) -> None:
    """Apply the unions above, in place, to hcl2's evaluated document of one file."""
    resources: dict[str, dict[str, dict[str, Any]]] = {}
    for entry in document.get("resource") or []:
        for kind, named in (entry.items() if isinstance(entry, dict) else []):
            if isinstance(named, dict):
                for name, body in named.items():
                    if isinstance(body, dict):
                        resources.setdefault(kind, {})[name] = body
    _union(_aws(resources) + _gcp(resources) + _azure(resources))
    for body in resources.get("google_sql_database_instance", {}).values():
        for ip in _walk_blocks(body, ("settings", "ip_configuration")):
            _networks(ip, "authorized_networks", "value")
    for body in resources.get("google_container_cluster", {}).values():
        for config in _walk_blocks(body, ("master_authorized_networks_config",)):
            _networks(config, "cidr_blocks", "cidr_block")


__all__ = ["Reach", "terraform_unions"]
