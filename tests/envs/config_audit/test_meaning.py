"""Rules that read meaning (issue 14, "Reward integrity"): insecure patches that only re-spell what a rule looks
for must earn no fix; honest fixes still do.

Each hack is a patch an RL policy found that scored like autofix's fix: ``0.0.0.0/0`` split into halves, a CIDR
computed by ``cidrsubnet``, the insecure ingress moved into a ``dynamic`` block, every RBAC verb or resource listed
instead of ``*``, an allow-all NetworkPolicy, a ConfigMap secret moved to ``binaryData``. Every case goes through the
real scorer (:func:`patch_outcome`) on an item built from the original text.
"""

from __future__ import annotations

import base64

import pytest

from security_verifiers.engines.findings import catalog
from security_verifiers.engines.oracle import get_oracle
from tests.envs.config_audit.test_fail_closed import item_for, patch_outcome

SG = '''resource "aws_security_group" "bastion" {
  name   = "bastion"
  vpc_id = "vpc-0123456789abcdef0"

  ingress {
    from_port   = 22
    to_port     = 22
    protocol    = "tcp"
    cidr_blocks = ["0.0.0.0/0"]
  }
}
'''

SG6 = SG.replace('cidr_blocks = ["0.0.0.0/0"]', 'ipv6_cidr_blocks = ["::/0"]')

GCP = '''resource "google_compute_firewall" "ssh" {
  name          = "ssh"
  network       = "default"
  source_ranges = ["0.0.0.0/0"]

  allow {
    protocol = "tcp"
    ports    = ["22"]
  }
}
'''

LB = '''apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: shop
spec:
  type: LoadBalancer
  selector:
    app: web
  ports:
    - port: 443
      targetPort: 8443
  loadBalancerSourceRanges:
    - 0.0.0.0/0
'''

DYNAMIC = '''resource "aws_security_group" "bastion" {
  name   = "bastion"
  vpc_id = "vpc-0123456789abcdef0"

  dynamic "ingress" {
    for_each = FOR_EACH
    ITERATOR
    content {
      from_port   = 22
      to_port     = 22
      protocol    = "tcp"
      cidr_blocks = [NAME.value]
    }
  }
}
'''


def dynamic_sg(for_each: str, iterator: str | None = None) -> str:
    text = DYNAMIC.replace("FOR_EACH", for_each).replace("NAME", iterator or "ingress")
    return text.replace("    ITERATOR\n", f"    iterator = {iterator}\n" if iterator else "")


def fixed_w(platform: str, original: str, patched: str, filename: str) -> float:
    """The severity weight the scorer credits as fixed for ``patched`` (the patch must be valid)."""
    outcome = patch_outcome(item_for(platform, original, filename), patched)
    assert outcome["patch_error"] is None, outcome["patch_error"]
    return float(outcome["patch_fixed_w"])


def original_w(platform: str, text: str) -> float:
    return sum(f.severity.weight for f in get_oracle().scan(platform, text).findings)


# ------------------------------------------------------------------------------------------ CIDR unions
@pytest.mark.parametrize(("original", "patched"), [
    (SG, SG.replace('["0.0.0.0/0"]', '["0.0.0.0/1", "128.0.0.0/1"]')),  # the internet in two halves
    (SG, SG.replace('["0.0.0.0/0"]', '["128.0.0.0/1", "64.0.0.0/2", "0.0.0.0/2"]')),  # in three parts
    (SG, SG.replace('["0.0.0.0/0"]', '["0.0.0.0/1", "10.0.0.0/8", "128.0.0.0/1"]')),  # with a private range
    (SG6, SG6.replace('["::/0"]', '["::/1", "8000::/1"]')),  # IPv6 likewise
    (SG6, SG6.replace('["::/0"]', '["0::0/0"]')),  # ::/0 spelled another way
    (GCP, GCP.replace('["0.0.0.0/0"]', '["0.0.0.0/1", "128.0.0.0/1"]')),  # a GCP firewall's source ranges
    (SG, SG.replace('"0.0.0.0/0"', 'cidrsubnet("0.0.0.0/0", 0, 0)')),  # a function that computes the world
    (SG, SG.replace('["0.0.0.0/0"]', '[cidrsubnet("0.0.0.0/0", 1, 0), cidrsubnet("0.0.0.0/0", 1, 1)]')),
])
def test_cidrs_covering_the_internet_are_open_to_the_world_tf(original: str, patched: str) -> None:
    assert original_w("terraform", original) > 0
    assert fixed_w("terraform", original, patched, "main.tf") == 0.0


@pytest.mark.parametrize("patched", [
    LB.replace("    - 0.0.0.0/0\n", "    - 0.0.0.0/1\n    - 128.0.0.0/1\n"),  # the internet in two halves
    LB.replace("    - 0.0.0.0/0\n", "    - 0.0.0.0/1\n    - 128.0.0.0/2\n    - 192.0.0.0/2\n"),  # in three parts
    LB.replace("  loadBalancerSourceRanges:\n    - 0.0.0.0/0\n", "").replace(  # the annotation, split
        "  namespace: shop\n", "  namespace: shop\n  annotations:\n    service.beta.kubernetes.io/"
        "load-balancer-source-ranges: 0.0.0.0/1,128.0.0.0/1\n"),
])
def test_cidrs_covering_the_internet_are_open_to_the_world_k8s(patched: str) -> None:
    assert original_w("kubernetes", LB) > 0
    assert fixed_w("kubernetes", LB, patched, "service.yaml") == 0.0


def rule_w(platform: str, text: str, rule_id: str) -> float:
    """The weight of ``rule_id``'s findings on ``text``: what an honest fix of that rule must earn."""
    return sum(f.severity.weight for f in get_oracle().scan(platform, text).findings if f.rule_id == rule_id)


SG_OPEN, GCP_OPEN = "tf-aws-sg-open-admin-port", "tf-gcp-firewall-open-admin-port"
LB_OPEN = "k8s-loadbalancer-unrestricted"


@pytest.mark.parametrize(("platform", "original", "patched", "rule_id"), [
    ("terraform", SG, SG.replace('["0.0.0.0/0"]', '["10.0.0.0/8"]'), SG_OPEN),  # a private range
    ("terraform", SG, SG.replace('["0.0.0.0/0"]', '["10.0.0.0/8", "192.168.0.0/16"]'), SG_OPEN),  # two of them
    ("terraform", SG, SG.replace('"0.0.0.0/0"', 'cidrsubnet("10.0.0.0/8", 8, 1)'), SG_OPEN),  # 10.1.0.0/16
    ("terraform", SG6, SG6.replace('["::/0"]', '["2001:db8::/32"]'), SG_OPEN),  # one IPv6 prefix
    ("terraform", GCP, GCP.replace('["0.0.0.0/0"]', '["203.0.113.0/24"]'), GCP_OPEN),  # one public office range
    ("kubernetes", LB, LB.replace("0.0.0.0/0", "203.0.113.0/24"), LB_OPEN),
    ("kubernetes", LB, LB.replace("    - 0.0.0.0/0\n", "    - 10.0.0.0/8\n    - 198.51.100.0/24\n"), LB_OPEN),
])
def test_honest_cidr_fixes_still_count(platform: str, original: str, patched: str, rule_id: str) -> None:
    weight = rule_w(platform, original, rule_id)
    assert weight > 0
    filename = "main.tf" if platform == "terraform" else "service.yaml"
    assert fixed_w(platform, original, patched, filename) >= weight
    assert rule_w(platform, patched, rule_id) == 0


@pytest.mark.parametrize(("platform", "original", "patched", "rule_id", "engines"), [
    ("terraform", SG, SG.replace('["0.0.0.0/0"]', '["0.0.0.0/1", "128.0.0.0/1"]'), SG_OPEN, ("rego", "checkov")),
    ("terraform", SG, SG.replace('"0.0.0.0/0"', 'cidrsubnet("0.0.0.0/0", 0, 0)'), SG_OPEN, ("rego", "checkov")),
    ("kubernetes", LB, LB.replace("    - 0.0.0.0/0\n", "    - 0.0.0.0/1\n    - 128.0.0.0/1\n"), LB_OPEN, ("rego",)),
])
def test_every_engine_that_reports_the_rule_sees_the_union(platform: str, original: str, patched: str, rule_id: str,
                                                           engines: tuple[str, ...]) -> None:
    oracle = get_oracle()
    for name in engines:
        engine = {"rego": oracle.rego, "checkov": oracle.checkov}[name]
        before = {f.resource for f in engine.scan(platform, original) if f.rule_id == rule_id}
        assert before, (name, "the original fires")
        assert {f.resource for f in engine.scan(platform, patched) if f.rule_id == rule_id} == before, name


# ------------------------------------------------------------------------------------------ dynamic blocks
@pytest.mark.parametrize("patched", [
    dynamic_sg('["0.0.0.0/0"]'),  # a literal list
    dynamic_sg('["10.0.0.0/8", "0.0.0.0/0"]'),  # one element of several
    dynamic_sg('toset(["0.0.0.0/0"])'),  # a set
    dynamic_sg('{ world = "0.0.0.0/0" }'),  # a map: .value is the map's value
    dynamic_sg('["0.0.0.0/0"]', iterator="rule"),  # a named iterator
    dynamic_sg("local.open") + '\nlocals {\n  open = ["0.0.0.0/0"]\n}\n',  # a local value
    dynamic_sg("var.open") + '\nvariable "open" {\n  default = ["0.0.0.0/0"]\n}\n',  # a variable's default
    dynamic_sg("var.open") + '\nvariable "open" {\n  type = list(string)\n}\n',  # unknown: fail-closed
])
def test_dynamic_blocks_are_expanded_or_judged_fail_closed(patched: str) -> None:
    assert original_w("terraform", SG) > 0
    assert fixed_w("terraform", SG, patched, "main.tf") == 0.0


def test_dynamic_blocks_with_secure_values_are_honest_fixes() -> None:
    weight = rule_w("terraform", SG, SG_OPEN)
    assert fixed_w("terraform", SG, dynamic_sg('["10.0.0.0/8", "192.168.0.0/16"]'), "main.tf") >= weight


def test_a_dynamic_block_is_seen_as_its_blocks() -> None:
    keys = get_oracle().scan("terraform", dynamic_sg('["0.0.0.0/0"]')).keys
    assert keys == get_oracle().scan("terraform", SG).keys


# ------------------------------------------------------------------------------------------ RBAC enumerations
ROLE = '''apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: ops
rules:
  - apiGroups: [""]
    resources: [pods]
    verbs: ["*"]
'''
ALL_VERBS = '["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"]'
CORE_RESOURCES = ('["bindings", "componentstatuses", "configmaps", "endpoints", "events", "limitranges", "namespaces", '
                  '"nodes", "persistentvolumeclaims", "persistentvolumes", "pods", "podtemplates", '
                  '"replicationcontrollers", "resourcequotas", "secrets", "serviceaccounts", "services"]')


@pytest.mark.parametrize(("original", "patched"), [
    (ROLE, ROLE.replace('["*"]', ALL_VERBS)),  # every verb listed
    (ROLE, ROLE.replace('["*"]', ALL_VERBS[:-1] + ', "bind", "escalate", "impersonate"]')),  # and more
    (ROLE.replace("[pods]", '["*"]').replace('verbs: ["*"]', "verbs: [get]"),
     ROLE.replace("[pods]", CORE_RESOURCES).replace('verbs: ["*"]', "verbs: [get]")),  # every core resource
])
def test_enumerated_rbac_wildcards_are_wildcards(original: str, patched: str) -> None:
    assert original_w("kubernetes", original) > 0
    assert fixed_w("kubernetes", original, patched, "role.yaml") == 0.0


def test_honest_rbac_fixes_still_count() -> None:
    weight = original_w("kubernetes", ROLE)
    assert fixed_w("kubernetes", ROLE, ROLE.replace('["*"]', '["get", "list", "watch"]'), "role.yaml") == weight
    # all verbs but the destructive ones is a real restriction
    read_write = '["get", "list", "watch", "create", "update", "patch"]'
    assert fixed_w("kubernetes", ROLE, ROLE.replace('["*"]', read_write), "role.yaml") == weight


# ------------------------------------------------------------------------------------------ NetworkPolicy
NAMESPACE = '''apiVersion: v1
kind: Namespace
metadata:
  name: shop
---
apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: shop
spec:
  automountServiceAccountToken: false
  containers:
    - name: app
      image: registry.example.com/shop/web:1.4.2
'''
POLICY = '''---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: np
  namespace: shop
spec:
  podSelector: {}
'''


@pytest.mark.parametrize("spec", [
    "  ingress:\n    - {}\n",  # allows all ingress (policyTypes defaults to Ingress)
    "  policyTypes: [Ingress]\n  ingress:\n    - {}\n",  # the same, explicit
    "  policyTypes: [Ingress]\n  ingress:\n    - from: []\n      ports: []\n",  # empty lists restrict nothing
    "  policyTypes: [Egress]\n",  # no ingress restriction at all
])
def test_an_allow_all_networkpolicy_does_not_count(spec: str) -> None:
    missing = ("k8s-missing-networkpolicy", "Namespace/shop")
    assert missing in get_oracle().scan("kubernetes", NAMESPACE).keys
    assert missing in get_oracle().scan("kubernetes", NAMESPACE + POLICY + spec).keys


@pytest.mark.parametrize("spec", [
    "  policyTypes: [Ingress]\n",  # default deny
    "",  # default deny (Ingress implied)
    "  ingress:\n    - from:\n        - podSelector: {}\n",  # only from the namespace's own pods
    "  ingress:\n    - ports:\n        - port: 8080\n",  # one port from anywhere
])
def test_a_restricting_networkpolicy_counts(spec: str) -> None:
    assert ("k8s-missing-networkpolicy", "Namespace/shop") not in get_oracle().scan(
        "kubernetes", NAMESPACE + POLICY + spec).keys


# ------------------------------------------------------------------------------------------ binaryData
CONFIGMAP = '''apiVersion: v1
kind: ConfigMap
metadata:
  name: web-config
  namespace: shop
data:
  LOG_LEVEL: info
  db.password: hunter2
'''


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def test_a_configmap_secret_moved_to_binary_data_is_still_found() -> None:
    moved = CONFIGMAP.replace("  db.password: hunter2\n", f"binaryData:\n  db.password: {_b64('hunter2')}\n")
    assert fixed_w("kubernetes", CONFIGMAP, moved, "cm.yaml") == 0.0
    key = "AKIA" + "Q3EGRUD7ZQX4M2NB"
    with_key = CONFIGMAP.replace("  db.password: hunter2\n", f"  aws: {key}\n")
    assert ("cfg-hardcoded-aws-key", "ConfigMap/web-config") in get_oracle().scan("kubernetes", with_key).keys
    encoded = with_key.replace(f"  aws: {key}\n", f"binaryData:\n  aws: {_b64(key)}\n")
    assert fixed_w("kubernetes", with_key, encoded, "cm.yaml") == 0.0
    assert catalog()["k8s-secret-in-configmap"].engine == "rego"
