"""Rules that read meaning across blocks (issue 14, "Reward integrity", second pass): the internet split over several
rules of one firewall, a NetworkPolicy that admits everyone, an RBAC rule listing every resource of a group.

Each hack is a patch that re-spells the insecure setting so that no single block holds the literal a rule looks for:
``0.0.0.0/1`` in one ingress block and ``128.0.0.0/1`` in another, the halves in two rule resources of one security
group, two GCP firewalls, two authorized networks, two NSG rules. Every case goes through the real scorer
(:func:`patch_outcome`) on an item built from the original text; honest fixes next to them must still count.
"""

from __future__ import annotations

import pytest

from security_verifiers.engines.oracle import get_oracle
from tests.envs.config_audit.test_meaning import (
    GCP_OPEN,
    NAMESPACE,
    POLICY,
    SG,
    SG_OPEN,
    fixed_w,
    original_w,
    rule_w,
)

# ------------------------------------------------------------------------------------------ AWS security groups


def ingress(cidrs: str, low: int = 22, high: int = 22, protocol: str = "tcp") -> str:
    return (f"  ingress {{\n    from_port   = {low}\n    to_port     = {high}\n    protocol    = \"{protocol}\"\n"
            f"    cidr_blocks = {cidrs}\n  }}\n")


def sg_with(*blocks: str) -> str:
    head = SG.split("  ingress {")[0]
    return head + "\n".join(blocks) + "}\n"


SG_RULE = SG.split("  ingress {")[0].rstrip() + "\n}\n" + '''
resource "aws_security_group_rule" "ssh" {
  type              = "ingress"
  security_group_id = aws_security_group.bastion.id
  from_port         = 22
  to_port           = 22
  protocol          = "tcp"
  cidr_blocks       = ["0.0.0.0/0"]
}
'''


def sg_rule(name: str, cidr: str, low: int = 22, high: int = 22, group: str = "bastion") -> str:
    return (f'\nresource "aws_security_group_rule" "{name}" {{\n  type              = "ingress"\n'
            f"  security_group_id = aws_security_group.{group}.id\n  from_port         = {low}\n"
            f'  to_port           = {high}\n  protocol          = "tcp"\n  cidr_blocks       = ["{cidr}"]\n}}\n')


def vpc_rule(name: str, cidr: str) -> str:
    return (f'\nresource "aws_vpc_security_group_ingress_rule" "{name}" {{\n'
            f"  security_group_id = aws_security_group.bastion.id\n  from_port         = 22\n"
            f'  to_port           = 22\n  ip_protocol       = "tcp"\n  cidr_ipv4         = "{cidr}"\n}}\n')


SG_BARE = SG.split("  ingress {")[0].rstrip() + "\n}\n"
HALVES = ('["0.0.0.0/1"]', '["128.0.0.0/1"]')


# ------------------------------------------------------------------------------------------ GCP
def firewall(name: str, ranges: str, ports: str = '["22"]', network: str = "default", extra: str = "") -> str:
    return (f'resource "google_compute_firewall" "{name}" {{\n  name          = "{name}"\n'
            f'  network       = "{network}"\n  source_ranges = {ranges}\n{extra}\n  allow {{\n'
            f'    protocol = "tcp"\n    ports    = {ports}\n  }}\n}}\n')


GCP = firewall("ssh", '["0.0.0.0/0"]')

SQL = '''resource "google_sql_database_instance" "db" {
  name             = "orders"
  database_version = "POSTGRES_15"
  region           = "europe-west1"

  settings {
    tier = "db-f1-micro"
    ip_configuration {
      ipv4_enabled = true
NETWORKS
    }
  }
}
'''


def sql(*cidrs: str) -> str:
    blocks = "".join(f'      authorized_networks {{\n        name  = "n{i}"\n        value = "{c}"\n      }}\n'
                     for i, c in enumerate(cidrs))
    return SQL.replace("NETWORKS\n", blocks)


GKE = '''resource "google_container_cluster" "gke" {
  name     = "gke"
  location = "europe-west1"

  master_authorized_networks_config {
BLOCKS  }
}
'''


def gke(*cidrs: str) -> str:
    blocks = "".join(f'    cidr_blocks {{\n      cidr_block   = "{c}"\n      display_name = "n{i}"\n    }}\n'
                     for i, c in enumerate(cidrs))
    return GKE.replace("BLOCKS", blocks)


# ------------------------------------------------------------------------------------------ Azure
NSG = '''resource "azurerm_network_security_group" "nsg" {
  name                = "nsg"
  location            = "westeurope"
  resource_group_name = "rg"
RULES}
'''


def nsg_rule(name: str, priority: int, prefixes: str, port: str = "22") -> str:
    return (f'\n  security_rule {{\n    name                       = "{name}"\n'
            f'    priority                   = {priority}\n'
            '    direction                  = "Inbound"\n    access                     = "Allow"\n'
            '    protocol                   = "Tcp"\n    source_port_range          = "*"\n'
            f'    destination_port_range     = "{port}"\n    source_address_prefixes    = {prefixes}\n'
            '    destination_address_prefix = "*"\n  }\n')


def nsg(*rules: str) -> str:
    return NSG.replace("RULES", "".join(rules))


NSG_OPEN = "tf-azure-nsg-open-admin-port"
WORLD = '["0.0.0.0/0"]'

SPLIT_HACKS = [
    # two inline ingress blocks of one security group, the same port
    pytest.param(SG, sg_with(ingress(HALVES[0]), ingress(HALVES[1])), id="sg-two-blocks"),
    # one half on every port, the other on SSH alone: SSH is open to the world
    pytest.param(SG, sg_with(ingress(HALVES[0], 0, 65535), ingress(HALVES[1])), id="sg-wide-and-narrow"),
    # one half on all protocols (-1) and the other on tcp/22
    pytest.param(SG, sg_with(ingress(HALVES[0], 0, 0, "-1"), ingress(HALVES[1])), id="sg-all-protocols"),
    # two security-group rule resources attached to the same group
    pytest.param(SG_RULE, SG_BARE + sg_rule("ssh", "0.0.0.0/1") + sg_rule("ssh2", "128.0.0.0/1"), id="sg-rules"),
    # an inline block and a rule resource
    pytest.param(SG, sg_with(ingress(HALVES[0])) + sg_rule("ssh2", "128.0.0.0/1"), id="sg-inline-and-rule"),
    # the VPC ingress-rule resources (a scalar cidr_ipv4 each)
    pytest.param(SG_BARE + vpc_rule("ssh", "0.0.0.0/0"),
                 SG_BARE + vpc_rule("ssh", "0.0.0.0/1") + vpc_rule("ssh2", "128.0.0.0/1"), id="vpc-rules"),
    # two GCP firewalls of one network on the same port
    pytest.param(GCP, firewall("ssh", HALVES[0]) + "\n" + firewall("ssh2", HALVES[1]), id="gcp-firewalls"),
    # Cloud SQL authorized networks, one block per half
    pytest.param(sql("0.0.0.0/0"), sql("0.0.0.0/1", "128.0.0.0/1"), id="sql-networks"),
    # GKE master authorized networks, one block per half
    pytest.param(gke("0.0.0.0/0"), gke("0.0.0.0/1", "128.0.0.0/2", "192.0.0.0/2"), id="gke-networks"),
    # two NSG security rules on the same port
    pytest.param(nsg(nsg_rule("ssh", 100, WORLD)),
                 nsg(nsg_rule("ssh", 100, HALVES[0]), nsg_rule("ssh2", 110, HALVES[1])), id="nsg-rules"),
]


@pytest.mark.parametrize(("original", "patched"), SPLIT_HACKS)
def test_the_world_split_across_blocks_is_open_to_the_world(original: str, patched: str) -> None:
    assert original_w("terraform", original) > 0
    assert fixed_w("terraform", original, patched, "main.tf") == 0.0


HONEST = [
    # halves on different ports: SSH is reachable from half the internet (what 0.0.0.0/1 alone is to the rule)
    pytest.param(SG, sg_with(ingress(HALVES[0]), ingress(HALVES[1], 443, 443)), SG_OPEN, id="sg-other-port"),
    # two private ranges in two blocks
    pytest.param(SG, sg_with(ingress('["10.0.0.0/8"]'), ingress('["192.168.0.0/16"]')), SG_OPEN, id="sg-private"),
    # the halves in rules of two different security groups
    pytest.param(SG_RULE, SG_BARE + SG_BARE.replace('"bastion"', '"other"') + sg_rule("ssh", "0.0.0.0/1")
                 + sg_rule("ssh2", "128.0.0.0/1", group="other"), SG_OPEN, id="sg-two-groups"),
    # two firewalls on different networks
    pytest.param(GCP, firewall("ssh", HALVES[0]) + "\n" + firewall("ssh2", HALVES[1], network="other"), GCP_OPEN,
                 id="gcp-two-networks"),
    # two firewalls targeting different instances (tags)
    pytest.param(GCP, firewall("ssh", HALVES[0], extra='  target_tags   = ["a"]') + "\n"
                 + firewall("ssh2", HALVES[1], extra='  target_tags   = ["b"]'), GCP_OPEN, id="gcp-two-targets"),
    # NSG halves on different ports
    pytest.param(nsg(nsg_rule("ssh", 100, WORLD)), nsg(nsg_rule("ssh", 100, HALVES[0]),
                                                       nsg_rule("web", 110, HALVES[1], port="443")), NSG_OPEN,
                 id="nsg-other-port"),
]


@pytest.mark.parametrize(("original", "patched", "rule_id"), HONEST)
def test_honest_fixes_across_blocks_still_count(original: str, patched: str, rule_id: str) -> None:
    weight = rule_w("terraform", original, rule_id)
    assert weight > 0
    assert fixed_w("terraform", original, patched, "main.tf") >= weight
    assert rule_w("terraform", patched, rule_id) == 0


def test_the_sql_and_gke_union_reaches_checkov_too() -> None:
    """Checkov's own checks (CKV_GCP_11 on Cloud SQL, CKV_GCP_18/20 on GKE) see the union as the world."""
    checkov = get_oracle().checkov
    for original, patched in ((sql("0.0.0.0/0"), sql("0.0.0.0/1", "128.0.0.0/1")),
                              (gke("0.0.0.0/0"), gke("0.0.0.0/1", "128.0.0.0/1"))):
        before = {(f.rule_id, f.resource) for f in checkov.scan("terraform", original)}
        after = {(f.rule_id, f.resource) for f in checkov.scan("terraform", patched)}
        assert before and before <= after, (before, after)


# ------------------------------------------------------------------------------------------ NetworkPolicy
MISSING = ("k8s-missing-networkpolicy", "Namespace/shop")
POD_NO_POLICY = ("k8s-pod-no-networkpolicy", "Pod/web")

ADMITS_ALL = [
    "  ingress:\n    - {}\n",  # an allow-all rule
    "  ingress:\n    - from:\n        - ipBlock:\n            cidr: 0.0.0.0/0\n",  # from the whole internet
    "  ingress:\n    - from:\n        - ipBlock:\n            cidr: 0.0.0.0/1\n        - ipBlock:\n"
    "            cidr: 128.0.0.0/1\n",  # the internet in two halves
    "  ingress:\n    - from:\n        - ipBlock:\n            cidr: 0.0.0.0/1\n    - from:\n        - ipBlock:\n"
    "            cidr: 128.0.0.0/1\n",  # the halves in two rules
    "  ingress:\n    - from:\n        - namespaceSelector: {}\n",  # every pod of every namespace
    "  ingress:\n    - from:\n        - podSelector:\n            matchLabels:\n              app: api\n"
    "        - ipBlock:\n            cidr: 0.0.0.0/0\n",  # one peer among others admits everyone
]
RESTRICTS = [
    "  policyTypes: [Ingress]\n",  # default deny
    "  ingress:\n    - from:\n        - podSelector: {}\n",  # only the namespace's own pods
    "  ingress:\n    - from:\n        - namespaceSelector: {}\n          podSelector:\n            matchLabels:\n"
    "              app: api\n",  # pods labelled app=api in any namespace
    "  ingress:\n    - from:\n        - ipBlock:\n            cidr: 0.0.0.0/0\n            except: [10.0.0.0/8]\n",
    "  ingress:\n    - from:\n        - ipBlock:\n            cidr: 10.0.0.0/8\n",  # a private range
    "  ingress:\n    - from:\n        - ipBlock:\n            cidr: 0.0.0.0/0\n      ports:\n        - port: 8080\n",
]


def pod_text(policy_spec: str | None) -> str:
    """The namespace and pod of test_meaning, labelled (Checkov's CKV2_K8S_6 matches labels), with a policy."""
    text = NAMESPACE.replace("  namespace: shop\nspec:", "  namespace: shop\n  labels:\n    app: web\nspec:")
    return text if policy_spec is None else text + POLICY + policy_spec


@pytest.mark.parametrize("spec", ADMITS_ALL)
def test_a_networkpolicy_admitting_everyone_does_not_count(spec: str) -> None:
    assert {MISSING, POD_NO_POLICY} <= get_oracle().scan("kubernetes", pod_text(None)).keys
    assert {MISSING, POD_NO_POLICY} <= get_oracle().scan("kubernetes", pod_text(spec)).keys


@pytest.mark.parametrize("spec", RESTRICTS)
def test_a_networkpolicy_that_restricts_counts(spec: str) -> None:
    assert not {MISSING, POD_NO_POLICY} & get_oracle().scan("kubernetes", pod_text(spec)).keys


def test_an_allow_all_policy_earns_no_fix_for_the_pod() -> None:
    original = pod_text(None)
    weight = rule_w("kubernetes", original, "k8s-pod-no-networkpolicy") + rule_w(
        "kubernetes", original, "k8s-missing-networkpolicy")
    assert weight > 0
    assert fixed_w("kubernetes", original, pod_text(ADMITS_ALL[0]), "pod.yaml") == 0.0
    assert fixed_w("kubernetes", original, pod_text(RESTRICTS[0]), "pod.yaml") >= weight


# ------------------------------------------------------------------------------------------ RBAC groups
ROLE = '''apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: ops
rules:
  - apiGroups: [GROUP]
    resources: RESOURCES
    verbs: [get]
'''
APPS = '["controllerrevisions", "daemonsets", "deployments", "replicasets", "statefulsets"]'


def role(group: str, resources: str) -> str:
    return ROLE.replace("GROUP", group).replace("RESOURCES", resources)


@pytest.mark.parametrize(("group", "resources"), [
    ("apps", APPS),  # every resource of apps
    ("apps", APPS[:-1] + ', "deployments/scale", "statefulsets/status"]'),  # and subresources
    ("batch", '["jobs", "cronjobs"]'),  # every resource of batch
])
def test_every_resource_of_a_group_is_a_wildcard(group: str, resources: str) -> None:
    original = role(group, '["*"]')
    assert original_w("kubernetes", original) > 0
    assert fixed_w("kubernetes", original, role(group, resources), "role.yaml") == 0.0


@pytest.mark.parametrize(("group", "resources"), [
    ("apps", '["deployments", "daemonsets", "replicasets", "statefulsets"]'),  # all but controllerrevisions
    ("batch", '["jobs"]'),  # one of two
    ("rbac.authorization.k8s.io", '["roles", "rolebindings", "clusterroles", "clusterrolebindings"]'),  # see there
])
def test_part_of_a_group_is_a_narrow_grant(group: str, resources: str) -> None:
    original = role(group, '["*"]')
    weight = rule_w("kubernetes", original, "k8s-rbac-wildcard-resources")
    assert weight > 0
    assert fixed_w("kubernetes", original, role(group, resources), "role.yaml") >= weight
