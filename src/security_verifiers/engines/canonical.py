"""Canonical spellings of settings whose meaning a rule reads, applied to what every engine scans.

Why: rules (ours and Checkov's) compare values with the literal that means "everything": ``"0.0.0.0/0"`` for an
address range open to the internet, ``"*"`` for every RBAC verb or resource. A patch can say the same thing
another way (``["0.0.0.0/1", "128.0.0.0/1"]``, every verb listed) and look fixed to every rule. Rather than
teach each of ~1,000 rules the meaning, the document an engine reads is given the canonical literal beside what
the file says: a list whose addresses cover the internet also holds ``0.0.0.0/0`` (or ``::/0``), a list of every
verb also holds ``*``. Nothing is removed, so a rule that fired still fires; a rule that did not fire now sees
what the setting means. The text of the file (what a patch edits, what validation reads) is never changed.

Definitions (and where they stop):

* **Open to the world** (:func:`world_cidrs_covered`): the ranges of one list, as a union, cover at least
  :data:`WORLD_SHARE` of the globally routable addresses of a family (IPv4: everything outside the IANA
  special-purpose ranges of :data:`_NON_GLOBAL_V4`; IPv6: ``2000::/3``). So ``0.0.0.0/1`` + ``128.0.0.0/1`` is
  the world, and so is "everything but one /32" or "everything but the private ranges": a policy may not carve a
  hole no client will ever use. Half the internet (``0.0.0.0/1`` alone) is not "the world" to these rules (it
  stays what the rule's own threshold says). Ranges are unioned within one list (an attribute, a Service's
  ``loadBalancerSourceRanges`` plus its annotation), not across separate rules or blocks.
* **Every verb** (:data:`ALL_VERBS`): a rule listing all eight standard resource verbs is ``*``; leaving out one
  (say ``delete``) is a real restriction.
* **Every resource**: a rule whose ``apiGroups`` name a group of :data:`GROUP_RESOURCES` (or ``"*"``) and whose
  resources list every top-level resource of that group grants ``*`` (subresources may be listed too; they are not
  needed). Only groups of two or more resources, RBAC's own excepted (see there).
* **Open to every source across rules**: the same union is taken over the rules or blocks that admit traffic to the
  same place (:mod:`canonical_unions`: a security group's ingress blocks and rule resources, one network's GCP
  firewalls, an NSG's rules, a NetworkPolicy's ingress rules, a database's authorized networks).
* **A NetworkPolicy that admits everyone** (:func:`networkpolicy_body`): an ingress rule one of whose peers is
  every address (an ``ipBlock`` whose CIDR covers the world, with no ``except``) or every namespace
  (``namespaceSelector: {}`` without ``podSelector``) admits every source: it is given the canonical allow-all
  rule, ``{}`` (with its ports, if it names any).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import Any

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

#: The canonical "everything" of each family, as rules compare it.
WORLD = {4: "0.0.0.0/0", 6: "::/0"}
#: Share of a family's globally routable addresses a list must cover to be "open to the world".
WORLD_SHARE = 0.99
#: IPv4 ranges that are not globally routable (IANA special-purpose registry, RFC 6890 and successors).
_NON_GLOBAL_V4 = ("0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
                  "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15",
                  "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/3")
#: IPv6 global unicast.
_GLOBAL_V6 = (ipaddress.ip_network("2000::/3"),)
#: Lists longer than this are not unioned (no real configuration spells out so many ranges; bounded cost).
MAX_RANGES = 4096


def _global_v4() -> tuple[IPNetwork, ...]:
    space: list[IPNetwork] = [ipaddress.ip_network("0.0.0.0/0")]
    for hole in map(ipaddress.ip_network, _NON_GLOBAL_V4):
        nxt: list[IPNetwork] = []
        for net in space:
            if net.overlaps(hole):
                if hole.subnet_of(net):  # type: ignore[arg-type]
                    nxt.extend(net.address_exclude(hole))  # type: ignore[arg-type]
            else:
                nxt.append(net)
        space = nxt
    return tuple(ipaddress.collapse_addresses(space))  # type: ignore[arg-type]


_GLOBAL = {4: _global_v4(), 6: _GLOBAL_V6}
_GLOBAL_SIZE = {v: sum(n.num_addresses for n in nets) for v, nets in _GLOBAL.items()}


def _network(value: Any) -> IPNetwork | None:
    """A CIDR (or a bare address) as a network; None for anything else. Host bits are ignored, as the clouds
    that accept such a value do (``0.0.0.1/0`` is the world)."""
    if not isinstance(value, str) or len(value) > 64:
        return None
    text = value.strip()
    if not text or not (text[0].isdigit() or text[0] in ":abcdefABCDEF"):
        return None
    try:
        return ipaddress.ip_network(text, strict=False)
    except ValueError:
        return None


def world_cidrs_covered(values: Iterable[Any]) -> list[str]:
    """The canonical world CIDRs (``0.0.0.0/0``, ``::/0``) that the union of ``values`` covers.

    >>> world_cidrs_covered(["0.0.0.0/1", "128.0.0.0/1"]), world_cidrs_covered(["10.0.0.0/8", "0.0.0.0/1"])
    (['0.0.0.0/0'], [])
    >>> world_cidrs_covered(["::/1", "8000::/1", "sg-123"]), world_cidrs_covered(["0::0/0"])
    (['::/0'], ['::/0'])
    """
    nets: dict[int, list[IPNetwork]] = {4: [], 6: []}
    for count, value in enumerate(values):
        if count >= MAX_RANGES:
            return []
        net = _network(value)
        if net is not None:
            nets[net.version].append(net)
    out = []
    for version, found in nets.items():
        if not found:
            continue
        union = list(ipaddress.collapse_addresses(found))  # type: ignore[arg-type]
        covered = 0
        for net in union:
            for space in _GLOBAL[version]:
                if net.overlaps(space):
                    covered += min(net.num_addresses, space.num_addresses)
        if covered >= WORLD_SHARE * _GLOBAL_SIZE[version]:
            out.append(WORLD[version])
    return out


def with_world(values: list[Any]) -> list[Any] | None:
    """``values`` plus the world CIDRs its union covers and it does not already spell canonically; None when
    nothing is to be added."""
    missing = [w for w in world_cidrs_covered(values) if w not in values]
    return [*values, *missing] if missing else None


# ------------------------------------------------------------------------------------------ RBAC
#: The standard verbs of Kubernetes resources (``bind``, ``escalate``, ``impersonate``, ``approve``, ``use`` are
#: special verbs of a few resources; a rule listing the eight below, with or without them, grants what ``*`` does
#: on ordinary resources).
ALL_VERBS = frozenset({"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"})
#: The top-level resources of API groups of Kubernetes 1.30 (the version :mod:`validate` pins;
#: ``kubectl api-resources --api-group=G``, GA and beta-on-by-default only), for the groups where listing every
#: resource is no natural way to grant less than ``*``: the core group (secrets, pods, serviceaccounts, nodes),
#: ``apps`` and ``batch`` (every workload controller), ``networking.k8s.io`` and ``storage.k8s.io``. Not here:
#: groups of one resource (``policy``'s poddisruptionbudgets, ``autoscaling``'s horizontalpodautoscalers): naming
#: it is the only way to grant it. Nor ``rbac.authorization.k8s.io``: listing its four resources is how a role
#: grants RBAC management (two public items do), an ordinary grant that the catalog's wildcard rule does not mean.
GROUP_RESOURCES: dict[str, frozenset[str]] = {
    "": frozenset({"bindings", "componentstatuses", "configmaps", "endpoints", "events", "limitranges", "namespaces",
                   "nodes", "persistentvolumeclaims", "persistentvolumes", "pods", "podtemplates",
                   "replicationcontrollers", "resourcequotas", "secrets", "serviceaccounts", "services"}),
    "apps": frozenset({"controllerrevisions", "daemonsets", "deployments", "replicasets", "statefulsets"}),
    "batch": frozenset({"cronjobs", "jobs"}),
    "networking.k8s.io": frozenset({"ingressclasses", "ingresses", "networkpolicies"}),
    "storage.k8s.io": frozenset({"csidrivers", "csinodes", "csistoragecapacities", "storageclasses",
                                 "volumeattachments"}),
}


def _strings(value: Any) -> set[str]:
    return {v.strip() for v in value if isinstance(v, str)} if isinstance(value, list) else set()


def rbac_rule(rule: Any) -> dict[str, Any] | None:
    """An RBAC policy rule with ``*`` added to ``verbs`` / ``resources`` where they enumerate everything; None when
    nothing changes.

    >>> rbac_rule({"apiGroups": ["batch"], "resources": ["jobs", "cronjobs"], "verbs": ["get"]})["resources"]
    ['jobs', 'cronjobs', '*']
    >>> rbac_rule({"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["get"]}) is None
    True
    >>> rbac_rule({"resources": ["pods"], "verbs": ["get", "list", "watch"]}) is None
    True
    """
    if not isinstance(rule, dict):
        return None
    out = dict(rule)
    verbs = _strings(rule.get("verbs"))
    if "*" not in verbs and ALL_VERBS <= verbs:
        out["verbs"] = [*rule["verbs"], "*"]
    resources = _strings(rule.get("resources"))
    groups = _strings(rule.get("apiGroups"))
    # apiGroups "*" with the core group's resources listed is judged as before (the core group is what matters);
    # with another group's resources it grants those names in every group, not every resource: not equated.
    named = {g: GROUP_RESOURCES[g] for g in ({""} if "*" in groups else groups) if g in GROUP_RESOURCES}
    if "*" not in resources and any(every <= resources for every in named.values()):
        out["resources"] = [*rule["resources"], "*"]
    return out if out != rule else None


# ------------------------------------------------------------------------------------------ documents
LB_RANGES_ANNOTATION = "service.beta.kubernetes.io/load-balancer-source-ranges"


def kubernetes_body(kind: str, body: dict[str, Any]) -> dict[str, Any]:
    """A Kubernetes object as the engines read it: ``body`` itself when nothing changes, else a copy (the parts
    that change are copied; the rest is shared, so treat the result as read-only)."""
    if kind in ("Role", "ClusterRole"):
        rules = body.get("rules")
        if isinstance(rules, list):
            canonical = [rbac_rule(rule) for rule in rules]
            if any(c is not None for c in canonical):
                new = [c if c is not None else r for c, r in zip(canonical, rules, strict=True)]
                return {**body, "rules": new}
        return body
    if kind == "NetworkPolicy":
        return networkpolicy_body(body)
    if kind == "Service":
        spec = body.get("spec")
        if not isinstance(spec, dict):
            return body
        ranges = spec.get("loadBalancerSourceRanges")
        listed = ranges if isinstance(ranges, list) else []
        meta = body.get("metadata")
        annotations = meta.get("annotations") if isinstance(meta, dict) else None
        annotation = annotations.get(LB_RANGES_ANNOTATION) if isinstance(annotations, dict) else None
        extra = annotation.split(",") if isinstance(annotation, str) else []
        missing = [w for w in world_cidrs_covered([*listed, *extra]) if w not in [str(r).strip() for r in listed]]
        if missing:
            return {**body, "spec": {**spec, "loadBalancerSourceRanges": [*listed, *missing]}}
    return body


def _plain(value: Any) -> Any:
    """A YAML mapping without Checkov's line markers (``__startline__``...): ``{}`` is empty to both readers."""
    return {k: v for k, v in value.items() if not (isinstance(k, str) and k.startswith("__"))} \
        if isinstance(value, dict) else value


def _empty_selector(selector: Any) -> bool:
    """A label selector that selects everything (``{}``, or empty ``matchLabels`` / ``matchExpressions``)."""
    plain = _plain(selector)
    return isinstance(plain, dict) and not plain.get("matchLabels") and not plain.get("matchExpressions")


def _open_peer_cidrs(peer: Any) -> list[str] | None:
    """The ranges through which an ingress peer admits every address: ``[world]`` for every namespace
    (``namespaceSelector: {}`` without ``podSelector``), the CIDR of an ``ipBlock`` without ``except``; None for a
    peer that admits only some pods."""
    plain = _plain(peer)
    if not isinstance(plain, dict):
        return None
    if "podSelector" not in plain and "namespaceSelector" in plain and _empty_selector(plain["namespaceSelector"]):
        return [WORLD[4], WORLD[6]]
    block = _plain(plain.get("ipBlock"))
    if isinstance(block, dict) and not block.get("except") and isinstance(block.get("cidr"), str):
        return [block["cidr"]]
    return None


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def networkpolicy_body(body: dict[str, Any]) -> dict[str, Any]:
    """A NetworkPolicy with the canonical allow-all ingress rule (``{}``, or ``{ports}``) added for every set of ports
    whose rules' peers together admit every source; ``body`` itself when none does.

    Why: "admits everyone" has many spellings (``ipBlock: {cidr: 0.0.0.0/0}``, the internet in halves over peers
    or rules, ``namespaceSelector: {}``), and a policy admitting everyone isolates nothing; the rules read the one
    canonical spelling, a rule without peers."""
    spec = body.get("spec")
    rules = _items(spec.get("ingress")) if isinstance(spec, dict) else []
    by_ports: dict[str, tuple[Any, list[str]]] = {}
    for rule in rules:
        plain = _plain(rule)
        if not isinstance(plain, dict) or not _items(plain.get("from")):
            continue  # not a list of peers: no peer to judge (a rule without any already admits everyone)
        ports = _items(plain.get("ports"))
        _, cidrs = by_ports.setdefault(repr([_plain(p) for p in ports]), (ports, []))
        for peer in _items(plain["from"]):
            cidrs.extend(_open_peer_cidrs(peer) or [])
    added = [{"ports": ports} if ports else {} for ports, cidrs in by_ports.values() if world_cidrs_covered(cidrs)]
    if not added:
        return body
    assert isinstance(spec, dict)
    return {**body, "spec": {**spec, "ingress": [*rules, *added]}}


def networkpolicy_restricts_ingress(body: Any) -> bool:
    """Whether a NetworkPolicy (read canonically, :func:`networkpolicy_body`) restricts ingress to the pods it
    selects: Ingress is among its types (implied when ``policyTypes`` is absent) and no rule admits every source on
    every port. The same definition as ``restricts_ingress`` of ``kubernetes/cluster.rego``, for Checkov's graph."""
    spec = _plain(body.get("spec")) if isinstance(body, dict) else None
    spec = spec if isinstance(spec, dict) else {}
    types = spec.get("policyTypes")
    if types is not None and "Ingress" not in (types if isinstance(types, list) else [types]):
        return False
    return not any(isinstance(_plain(rule), dict) and not _items(_plain(rule).get("from"))
                   and not _items(_plain(rule).get("ports")) for rule in _items(spec.get("ingress")))


def kubernetes_in_place(document: Any) -> None:
    """:func:`kubernetes_body` applied, in place, to a document another engine (Checkov) loaded for itself."""
    if not isinstance(document, dict) or not isinstance(document.get("kind"), str):
        return
    canonical = kubernetes_body(document["kind"], document)
    if canonical is not document:
        document.update(canonical)


def terraform_document(document: dict[str, Any]) -> None:
    """Add the canonical literals to hcl2's (evaluated) document of a Terraform file: every list of strings whose
    ranges cover the world, every ``verbs`` / ``resources`` of an RBAC ``rule`` block (the kubernetes provider's
    roles). A changed list is replaced by a new one in its parent: the old one may be shared with the evaluator's
    values (:class:`terraform_eval.Attribute`), which stay what the file says."""
    stack: list[Any] = [document]
    while stack:
        current = stack.pop()
        slots = current.items() if isinstance(current, dict) else enumerate(current)
        for key, value in list(slots):
            if isinstance(value, dict):
                rule = _hcl_rbac_rule(value)
                if rule is not None:
                    value = {**value, **{k: [rule[k]] for k in ("verbs", "resources") if k in rule}}
                    current[key] = value
                stack.append(value)
            elif isinstance(value, list):
                if value and all(isinstance(v, str) for v in value):
                    extended = with_world(value)
                    if extended is not None:
                        current[key] = extended
                else:
                    stack.append(value)


def _hcl_rbac_rule(block: dict[str, Any]) -> dict[str, Any] | None:
    """An hcl2 ``rule`` block (``{"verbs": [[...]], "resources": [[...]], "api_groups": [[...]]}``) made canonical,
    unwrapped; None when it is not one or nothing changes."""
    if "verbs" not in block:
        return None
    plain = {}
    for hcl_key, key in (("verbs", "verbs"), ("resources", "resources"), ("api_groups", "apiGroups")):
        value = block.get(hcl_key)
        if isinstance(value, list) and len(value) == 1 and isinstance(value[0], list):
            plain[key] = value[0]
    return rbac_rule(plain)
