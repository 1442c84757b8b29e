"""The Rego engine as a component: parsing errors, empty and multi-document files, secure configs without findings,
robustness to whatever types a model writes, output hygiene, thread-safety."""

from __future__ import annotations

import re
import threading
from functools import cache
from pathlib import Path

import pytest
import regopy

from security_verifiers.engines.configs import ConfigParseError, parse_kubernetes
from security_verifiers.engines.findings import Finding
from security_verifiers.engines.rego import RegoEngine, kubernetes_input, terraform_input

FIXTURES = Path(__file__).parent / "fixtures"
SECURE = sorted((FIXTURES / "secure").glob("*"))


@cache
def engine() -> RegoEngine:
    return RegoEngine()


def platform_of(path: Path) -> str:
    return "terraform" if path.suffix == ".tf" else "kubernetes"


def keys(findings: list[Finding]) -> set[tuple[str, str]]:
    return {f.key for f in findings}


POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  containers:
    - name: app
      image: nginx:latest
"""


# ----------------------------------------------------------------------------------------- parsing and shape


@pytest.mark.parametrize(("platform", "text"), [
    ("kubernetes", "kind: Pod\nmetadata: {name: [unclosed\n"),
    ("kubernetes", "apiVersion: v1\nkind: Pod\nspec: {}\n"),  # no metadata.name: no resource identity
    ("kubernetes", "- just\n- a list\n"),
    ("terraform", 'resource "aws_s3_bucket" "b" {\n  bucket = \n'),
    ("terraform", "this is not hcl {{{"),
])
def test_malformed_input_raises_config_parse_error(platform: str, text: str) -> None:
    with pytest.raises(ConfigParseError):
        engine().scan(platform, text)


@pytest.mark.parametrize(("platform", "text"), [
    ("kubernetes", ""), ("kubernetes", "---\n"), ("kubernetes", "# only a comment\n---\n---\n"),
    ("terraform", ""), ("terraform", "# nothing here\n"), ("terraform", 'variable "x" {\n  type = string\n}\n'),
])
def test_empty_file_has_no_findings(platform: str, text: str) -> None:
    assert engine().scan(platform, text) == []


def test_unknown_platform_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown platform"):
        engine().scan("ansible", "")


def test_multi_document_manifest_reports_every_document() -> None:
    text = POD.format(name="a") + "---\n" + POD.format(name="b") + "---\n" + """\
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  type: NodePort
  selector: {app: web}
  ports: [{port: 80}]
"""
    found = keys(engine().scan("kubernetes", text))
    assert {("k8s-latest-image-tag", "Pod/a"), ("k8s-latest-image-tag", "Pod/b"),
            ("k8s-nodeport-service", "Service/web")} <= found


def test_findings_are_catalog_findings() -> None:
    findings = engine().scan("kubernetes", POD.format(name="a"))
    assert findings, "an insecure pod has findings"
    privileged = [f for f in findings if f.rule_id == "k8s-run-as-root"]
    assert privileged and privileged[0].path == "app" and privileged[0].severity == "high"
    assert all(f.engines == ("rego",) and f.message for f in findings)
    assert findings == sorted(findings, key=lambda f: (f.resource, f.rule_id, f.path or "", f.message))
    assert len(findings) == len(set(findings))


def test_scan_objects_matches_scan() -> None:
    text = (FIXTURES / "rules" / "k8s-run-as-root" / "fire.yaml").read_text(encoding="utf-8")
    assert engine().scan_objects(parse_kubernetes(text)) == engine().scan("kubernetes", text)


@pytest.mark.parametrize("path", SECURE, ids=lambda p: p.name)
def test_secure_examples_have_no_findings(path: Path) -> None:
    findings = engine().scan(platform_of(path), path.read_text(encoding="utf-8"))
    assert findings == [], [(f.rule_id, f.resource, f.message) for f in findings]


def test_secure_examples_cover_every_platform() -> None:
    text = " ".join(p.read_text(encoding="utf-8") for p in SECURE)
    for marker in ("kind: Deployment", "kind: Service", "kind: NetworkPolicy", "kind: Namespace",
                   '"aws_s3_bucket"', '"google_storage_bucket"', '"azurerm_storage_account"'):
        assert marker in text, marker


def test_version_names_regopy_and_the_policy_digest() -> None:
    version = engine().version()
    assert re.fullmatch(rf"regopy-{re.escape(regopy.__version__)}\+[0-9a-f]{{12}}", version)
    assert RegoEngine().version() == version


def test_an_unknown_rule_id_from_rego_is_a_bug(monkeypatch: pytest.MonkeyPatch) -> None:
    fresh = RegoEngine()
    monkeypatch.setattr(fresh, "raw_findings", lambda platform, document: [
        {"rule_id": "k8s-made-up", "resource": "Pod/a", "path": None, "message": "x"}])
    with pytest.raises(RuntimeError, match="k8s-made-up"):
        fresh.scan("kubernetes", POD.format(name="a"))


def test_a_semgrep_rule_id_from_rego_is_a_bug(monkeypatch: pytest.MonkeyPatch) -> None:
    fresh = RegoEngine()
    monkeypatch.setattr(fresh, "raw_findings", lambda platform, document: [
        {"rule_id": "cfg-hardcoded-aws-key", "resource": "Pod/a", "path": None, "message": "x"}])
    with pytest.raises(RuntimeError, match="cfg-hardcoded-aws-key"):
        fresh.scan("kubernetes", POD.format(name="a"))


# ------------------------------------------------------------------------------------- robustness to types

# Every field a rule reads, with a value of the wrong type. Strict built-in errors are on, so an unguarded
# built-in call would raise here.
WEIRD_K8S = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: weird
  namespace: 7
  annotations:
    service.beta.kubernetes.io/load-balancer-source-ranges: 5
spec:
  template:
    spec:
      securityContext: "root"
      serviceAccountName: 12
      automountServiceAccountToken: "false"
      hostNetwork: "true"
      volumes: "none"
      containers:
        - name: 5
          image: 42
          env: "FOO=bar"
          ports: {containerPort: 80, hostPort: "x"}
          resources: [cpu]
          securityContext:
            capabilities: {add: SYS_ADMIN, drop: [1, null, {x: 1}]}
            runAsUser: "0"
            seccompProfile: RuntimeDefault
          livenessProbe: []
        - "a string container"
        - name: "quote\\"and\\nnewline"
          image: "x:latest"
          env:
            - {name: 5, value: 6}
            - {name: PASSWORD, value: 7}
            - "bare"
          ports: [{hostPort: null}, 5, {hostPort: 0}]
      initContainers: {name: init}
---
apiVersion: v1
kind: Service
metadata: {name: svc, annotations: {service.beta.kubernetes.io/load-balancer-source-ranges: ",, "}}
spec: {type: LoadBalancer, loadBalancerSourceRanges: [5, null, ""]}
---
apiVersion: v1
kind: Service
metadata: {name: nospec}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cm}
data: [{password: x}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cm2}
data: {1: 2, "api_key": 3, "TOKEN": null, "quote\\"key": "v\\"al"}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: r}
rules: ["*", {verbs: "*", resources: 5}, {verbs: ["*"], resources: null}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: b, namespace: x}
roleRef: cluster-admin
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: i}
spec: {tls: "yes"}
---
apiVersion: v1
kind: Namespace
metadata: {name: "7"}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: cj}
spec: {jobTemplate: "x"}
---
apiVersion: v1
kind: Pod
metadata: {name: nan}
spec:
  containers:
    - name: app
      image: app:1.0
      resources: {limits: {cpu: .nan, memory: .inf}}
  securityContext: {runAsUser: 2020-01-01}
"""

WEIRD_TF = """\
resource "aws_s3_bucket" "b" {
  bucket = 5
  acl    = ["public-read"]
  grant  = "all"
  versioning = "on"
  logging = {}
}
resource "aws_s3_bucket_acl" "a" {
  bucket = aws_s3_bucket.b.id
  acl    = "public-read"
  access_control_policy {
    grant {
      grantee = "x"
    }
  }
}
resource "aws_s3_bucket_versioning" "v" {
  bucket                   = 5
  versioning_configuration = "Enabled"
}
resource "aws_s3_bucket_public_access_block" "p" {
  bucket            = "${aws_s3_bucket.b[0].id}"
  block_public_acls = "yes"
}
resource "aws_security_group" "sg" {
  ingress = "open"
}
resource "aws_security_group" "sg2" {
  ingress {
    from_port   = "ssh"
    to_port     = "22-23"
    protocol    = 6
    cidr_blocks = "0.0.0.0/0"
  }
  ingress {
    from_port   = " 22 "
    to_port     = "22"
    protocol    = "TCP"
    cidr_blocks = ["0.0.0.0/0", 5, null]
  }
}
resource "aws_security_group_rule" "r" {
  type        = ["ingress"]
  from_port   = var.from
  to_port     = 22
  protocol    = "tcp"
  cidr_blocks = ["0.0.0.0/0"]
}
resource "aws_vpc_security_group_ingress_rule" "v" {
  ip_protocol = -1
  cidr_ipv6   = "::/0"
}
resource "aws_iam_policy" "bad_json" {
  policy = "{not json"
}
resource "aws_iam_policy" "number" {
  policy = 5
}
resource "aws_iam_policy" "weird_doc" {
  policy = "[1, 2, {\\"Statement\\": 5}]"
}
resource "aws_iam_role_policy" "encode" {
  policy = jsonencode({ Statement = "x", Effect = true })
}
data "aws_iam_policy_document" "d" {
  statement = "x"
}
data "aws_iam_policy_document" "d2" {
  statement {
    effect    = 5
    actions   = "*"
    resources = "*"
  }
}
resource "aws_kms_key" "k" {
  key_spec = 5
}
resource "google_compute_firewall" "f" {
  direction     = 5
  source_ranges = "0.0.0.0/0"
  allow {
    protocol = 6
    ports    = [22, "x-y", "1-2-3", "", null, "3389"]
  }
  allow = "tcp"
}
resource "google_compute_firewall" "f2" {
  source_ranges = ["0.0.0.0/0"]
  allow {
    protocol = "TCP"
    ports    = ["20-25"]
  }
}
resource "google_sql_database_instance" "s" {
  settings = "x"
}
resource "google_kms_crypto_key" "k" {
  rotation_period = "1.5.2s"
  purpose         = 5
}
resource "google_kms_crypto_key" "k2" {
  rotation_period = ".s"
}
resource "google_storage_bucket_iam_binding" "i" {
  members = "allUsers"
  role    = 5
}
resource "google_storage_bucket_acl" "acl" {
  role_entity = ["READER:allUsers", 5]
}
resource "azurerm_storage_account" "s" {
  min_tls_version                 = 1.2
  allow_nested_items_to_be_public = "true"
  enable_https_traffic_only       = "false"
}
resource "azurerm_network_security_group" "n" {
  security_rule = "x"
}
resource "azurerm_network_security_rule" "r" {
  direction               = "inbound"
  access                  = "allow"
  protocol                = "TCP"
  destination_port_ranges = [22, "*", 5]
  source_address_prefixes = ["INTERNET", null]
}
resource "azurerm_mssql_server" "m" {
  public_network_access_enabled = "false"
}
"""


def test_k8s_rules_survive_any_types() -> None:
    findings = engine().scan("kubernetes", WEIRD_K8S)
    assert findings
    for finding in findings:
        assert isinstance(finding.message, str) and finding.message


def test_tf_rules_survive_any_types() -> None:
    found = keys(engine().scan("terraform", WEIRD_TF))
    # Unusual but unambiguous spellings are still judged.
    assert ("tf-aws-sg-open-admin-port", "aws_security_group.sg2") in found
    assert ("tf-aws-sg-open-admin-port", "aws_vpc_security_group_ingress_rule.v") in found
    assert ("tf-gcp-firewall-open-admin-port", "google_compute_firewall.f2") in found
    assert ("tf-azure-nsg-open-admin-port", "azurerm_network_security_rule.r") in found
    assert ("tf-azure-storage-public-access", "azurerm_storage_account.s") in found
    assert ("tf-azure-storage-https-off", "azurerm_storage_account.s") in found
    assert ("tf-azure-storage-old-tls", "azurerm_storage_account.s") in found
    assert ("tf-gcp-kms-rotation-off", "google_kms_crypto_key.k") in found
    assert ("tf-gcp-bucket-public", "google_storage_bucket_acl.acl") in found
    assert ("tf-aws-s3-public-acl", "aws_s3_bucket.b") in found  # through aws_s3_bucket_acl.a
    assert ("tf-azure-sql-public", "azurerm_mssql_server.m") not in found  # "false" is false


def test_quotes_and_newlines_in_values_survive_the_round_trip() -> None:
    findings = engine().scan("kubernetes", WEIRD_K8S)
    names = {f.path for f in findings if f.resource == "Deployment/weird"}
    assert 'quote"and\nnewline' in names
    configmap = [f.message for f in findings if f.resource == "ConfigMap/cm2"]
    assert configmap and "api_key" in configmap[0]


def test_input_documents_are_plain_json_shapes() -> None:
    objects = parse_kubernetes((FIXTURES / "secure" / "kubernetes_web.yaml").read_text(encoding="utf-8"))
    doc = kubernetes_input(objects)
    assert set(doc) == {"objects", "workloads", "containers"}
    assert [c["container"]["name"] for c in doc["containers"]] == ["web"]
    assert "spec" not in doc["objects"]["Deployment"][0]["body"]
    assert "containers" not in doc["workloads"][0]["spec"]
    from security_verifiers.engines.configs import parse_terraform

    tf = parse_terraform((FIXTURES / "secure" / "aws.tf").read_text(encoding="utf-8"))
    tf_doc = terraform_input(tf)
    assert tf_doc["data"]["aws_iam_policy_document"][0]["address"] == "data.aws_iam_policy_document.read_data"
    assert len(tf_doc["resources"]["aws_s3_bucket"]) == 2


# ------------------------------------------------------------------------------------------------ threads


def test_concurrent_scans_agree_with_sequential_ones() -> None:
    paths = sorted((FIXTURES / "rules").glob("*/fire*"))[:40] + SECURE
    texts = [(platform_of(p), p.read_text(encoding="utf-8")) for p in paths]
    shared = engine()
    expected = [shared.scan(platform, text) for platform, text in texts]
    results: dict[int, list[list[Finding]]] = {}
    errors: list[BaseException] = []

    def worker(index: int) -> None:
        try:
            results[index] = [shared.scan(platform, text) for platform, text in texts]
        except BaseException as err:  # noqa: BLE001 - surfaced by the assertion below
            errors.append(err)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert all(got == expected for got in results.values())
