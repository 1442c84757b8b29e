"""Checkov in-process: mapping onto our rule ids, resource identities, suppressions, offline operation."""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from security_verifiers.engines.checkov import (
    OFFLINE_ENV,
    CheckovEngine,
    _identity_resolver,
    neutralize_suppressions,
)
from security_verifiers.engines.configs import ConfigParseError
from security_verifiers.engines.findings import catalog, checkov_map

K8S_INSECURE = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      hostNetwork: true
      containers:
        - name: app
          image: nginx:latest
          securityContext:
            privileged: true
---
apiVersion: v1
kind: Pod
metadata:
  name: debug.tools
  labels:
    app: debug-tools
spec:
  hostPID: true
  containers:
    - name: shell
      image: busybox:1.36
"""

# Its labels differ from K8S_INSECURE's: the Checkov CLI builds one graph over a directory, and a NetworkPolicy there
# selects pods of every file whose labels match (or that have none), which the in-process engine, scanning one file,
# never sees.
K8S_SECURE = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  selector:
    matchLabels:
      app: shop-web
  template:
    metadata:
      labels:
        app: shop-web
    spec:
      serviceAccountName: web
      automountServiceAccountToken: false
      securityContext:
        runAsNonRoot: true
        runAsUser: 10001
        seccompProfile:
          type: RuntimeDefault
      containers:
        - name: app
          image: ghcr.io/acme/web:1.4.2@sha256:4dbb1efc9c4f883128bd77839566dafbc05d0e2fb4af6ce1172b68170b1d57d9
          imagePullPolicy: Always
          securityContext:
            privileged: false
            allowPrivilegeEscalation: false
            readOnlyRootFilesystem: true
            capabilities:
              drop: ["ALL"]
          resources:
            requests: {cpu: 100m, memory: 128Mi}
            limits: {cpu: 500m, memory: 256Mi}
          livenessProbe:
            httpGet: {path: /healthz, port: 8080}
          readinessProbe:
            httpGet: {path: /ready, port: 8080}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: web
  namespace: shop
spec:
  podSelector:
    matchLabels:
      app: shop-web
  policyTypes: [Ingress, Egress]
"""

TF_INSECURE = """\
resource "aws_s3_bucket" "logs" {
  bucket = "acme-logs"
  acl    = "public-read"
}

resource "aws_s3_bucket_public_access_block" "logs" {
  bucket                  = aws_s3_bucket.logs.id
  block_public_acls       = false
  block_public_policy     = false
  ignore_public_acls      = false
  restrict_public_buckets = false
}

resource "aws_security_group" "ssh" {
  name = "ssh"
  ingress {
    from_port   = 22
    to_port     = 22
    protocol    = "tcp"
    cidr_blocks = ["0.0.0.0/0"]
  }
}

data "aws_iam_policy_document" "admin" {
  statement {
    actions   = ["*"]
    resources = ["*"]
  }
}
"""


@pytest.fixture(scope="module")
def engine() -> CheckovEngine:
    return CheckovEngine()


@pytest.fixture(scope="module")
def k8s_findings(engine: CheckovEngine) -> set[tuple[str, str]]:
    return {f.key for f in engine.scan("kubernetes", K8S_INSECURE)}


@pytest.fixture(scope="module")
def tf_findings(engine: CheckovEngine) -> set[tuple[str, str]]:
    return {f.key for f in engine.scan("terraform", TF_INSECURE)}


# (checkov check, expected (rule id, resource)): the check must be mapped and the resource converted.
K8S_EXPECTED = [
    # CKV_K8S_16 on "Deployment.shop.web" -> Deployment/web (namespace dropped).
    ("CKV_K8S_16", ("k8s-privileged-container", "Deployment/web")),
    # CKV_K8S_19 hostNetwork.
    ("CKV_K8S_19", ("k8s-host-network", "Deployment/web")),
    # CKV_K8S_14 image :latest.
    ("CKV_K8S_14", ("k8s-latest-image-tag", "Deployment/web")),
    # CKV_K8S_17 on "Pod.default.debug.tools": no namespace in the manifest, and a dotted name.
    ("CKV_K8S_17", ("k8s-host-pid", "Pod/debug.tools")),
    # CKV_K8S_11 on both objects of the file.
    ("CKV_K8S_11", ("k8s-missing-cpu-limit", "Pod/debug.tools")),
]
TF_EXPECTED = [
    # CKV_AWS_20: plain address.
    ("CKV_AWS_20", ("tf-aws-s3-public-acl", "aws_s3_bucket.logs")),
    # CKV_AWS_53..56 all map onto one rule: one finding.
    ("CKV_AWS_53", ("tf-aws-s3-public-access-block-off", "aws_s3_bucket_public_access_block.logs")),
    # CKV_AWS_24: SSH open to the world.
    ("CKV_AWS_24", ("tf-aws-sg-open-admin-port", "aws_security_group.ssh")),
    # CKV_AWS_49 on a data source: checkov says "aws_iam_policy_document.admin", we say data.<type>.<name>.
    ("CKV_AWS_49", ("tf-aws-iam-wildcard-policy", "data.aws_iam_policy_document.admin")),
]


@pytest.mark.parametrize(("check", "key"), K8S_EXPECTED, ids=[c for c, _ in K8S_EXPECTED])
def test_kubernetes_checks_map_onto_rules(k8s_findings: set, check: str, key: tuple[str, str]) -> None:
    assert checkov_map("kubernetes")[check] == key[0]
    assert key in k8s_findings


@pytest.mark.parametrize(("check", "key"), TF_EXPECTED, ids=[c for c, _ in TF_EXPECTED])
def test_terraform_checks_map_onto_rules(tf_findings: set, check: str, key: tuple[str, str]) -> None:
    assert checkov_map("terraform")[check] == key[0]
    assert key in tf_findings


def test_only_mapped_rules_with_catalog_severity(engine: CheckovEngine) -> None:
    rules = catalog()
    findings = engine.scan("kubernetes", K8S_INSECURE) + engine.scan("terraform", TF_INSECURE)
    assert findings
    for finding in findings:
        assert finding.rule_id in rules and rules[finding.rule_id].checkov  # a rule that lists checkov checks
        assert finding.engines == ("checkov",) and finding.path is None
        assert finding.severity == rules[finding.rule_id].severity
    keys = [f.key for f in findings]
    assert len(keys) == len(set(keys))  # one finding per (rule, resource), e.g. CKV_AWS_53..56


def test_public_access_block_checks_merge_into_one_message(engine: CheckovEngine) -> None:
    (finding,) = [f for f in engine.scan("terraform", TF_INSECURE) if f.rule_id == "tf-aws-s3-public-access-block-off"
                  and f.resource.startswith("aws_s3_bucket_public_access_block.")]
    assert all(check in finding.message for check in ("CKV_AWS_53", "CKV_AWS_54", "CKV_AWS_55", "CKV_AWS_56"))


def test_secure_manifest_has_no_mapped_finding(engine: CheckovEngine) -> None:
    assert engine.scan("kubernetes", K8S_SECURE) == []


# Suppressions written by a model must not silence the oracle.
SUPPRESSED = [
    # An inline comment in Terraform.
    ("terraform", TF_INSECURE.replace('acl    = "public-read"', 'acl    = "public-read" # checkov:skip=CKV_AWS_20: ok'),
     ("tf-aws-s3-public-acl", "aws_s3_bucket.logs")),
    # A skip annotation on a Kubernetes object.
    ("kubernetes", K8S_INSECURE.replace("  namespace: shop\n", "  namespace: shop\n  annotations:\n"
                                        "    checkov.io/skip1: CKV_K8S_16=trusted\n"),
     ("k8s-privileged-container", "Deployment/web")),
]


@pytest.mark.parametrize(("platform", "text", "key"), SUPPRESSED, ids=["tf-comment", "k8s-annotation"])
def test_suppressions_are_ignored(engine: CheckovEngine, platform: str, text: str, key: tuple[str, str]) -> None:
    assert key in {f.key for f in engine.scan(platform, text)}


def test_neutralize_keeps_line_lengths() -> None:
    text = "a # checkov:skip=CKV_AWS_20\nb: bridgecrew.io/skip2\nc # CORTEX:SKIP=X\n"
    out = neutralize_suppressions(text)
    assert "skip" not in out.lower()
    assert [len(line) for line in out.splitlines()] == [len(line) for line in text.splitlines()]


def test_scan_raw_lists_every_failed_check(engine: CheckovEngine) -> None:
    rows = engine.scan_raw("kubernetes", K8S_INSECURE)
    by_check = {(r["check_id"], r["resource"]): r for r in rows}
    # A mapped check carries our rule id ...
    assert by_check[("CKV_K8S_16", "Deployment/web")]["rule_id"] == "k8s-privileged-container"
    # ... as does every other: the catalog maps every check (one rule may gather several checks)
    assert by_check[("CKV_K8S_43", "Deployment/web")]["rule_id"] == "k8s-image-not-pinned-by-digest"
    assert all(r["rule_id"] == checkov_map("kubernetes")[r["check_id"]] for r in rows)
    assert all(set(r) == {"check_id", "name", "resource", "rule_id", "line"} and r["name"] for r in rows)
    assert len(rows) >= len(engine.scan("kubernetes", K8S_INSECURE))


@pytest.mark.parametrize(("platform", "text"), [
    ("kubernetes", "kind: [unclosed"),  # YAML syntax error
    ("kubernetes", "apiVersion: v1\nkind: Pod\n"),  # no metadata.name: no identity
    ("terraform", 'resource "a" "b" {\n  x = \n}\n'),  # HCL syntax error
], ids=["yaml", "no-name", "hcl"])
def test_unparseable_text_raises(engine: CheckovEngine, platform: str, text: str) -> None:
    with pytest.raises(ConfigParseError):
        engine.scan(platform, text)


def test_no_network_and_host_logging_untouched(engine: CheckovEngine, monkeypatch: pytest.MonkeyPatch) -> None:
    # Any connection attempt during a scan fails the test.
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"checkov tried to connect: {args}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    assert engine.scan("terraform", TF_INSECURE)
    assert engine.scan_raw("kubernetes", K8S_INSECURE)
    # checkov's import adds a plain stderr handler to the root logger; the engine removes it again.
    assert not any(type(h) is logging.StreamHandler for h in logging.getLogger().handlers)


def test_agrees_with_the_checkov_cli(engine: CheckovEngine, tmp_path: Path) -> None:
    # The in-process engine (sequential parsing and graph checks, exact check filter) reports exactly the
    # failed checks of one stock `checkov -d` process (fork, thread pools) on the same files.
    files = {"insecure.yaml": ("kubernetes", K8S_INSECURE), "secure.yaml": ("kubernetes", K8S_SECURE),
             "insecure.tf": ("terraform", TF_INSECURE)}
    for name, (_, text) in files.items():
        (tmp_path / name).write_text(text)
    env = {**os.environ, **{k: v for k, v in OFFLINE_ENV.items() if k != "CHECKOV_PARALLELIZATION_TYPE"}}
    proc = subprocess.run([str(Path(sys.executable).parent / "checkov"), "-d", str(tmp_path), "--framework",
                           "kubernetes", "terraform", "-o", "json", "--quiet", "--compact", "--skip-download"],
                          capture_output=True, text=True, env=env, timeout=300)
    reports = json.loads(proc.stdout)
    cli: dict[str, set[tuple[str, str]]] = {name: set() for name in files}
    for report in reports if isinstance(reports, list) else [reports]:
        for check in report["results"]["failed_checks"]:
            name = Path(check["file_path"]).name
            resolve = _identity_resolver(files[name][0], files[name][1])
            cli[name].add((check["check_id"], resolve(check["resource"], check["file_line_range"][0])))
    for name, (platform, text) in files.items():
        ours = {(row["check_id"], row["resource"]) for row in engine.scan_raw(platform, text)}
        assert ours == cli[name], name
    assert cli["insecure.yaml"] and cli["insecure.tf"]
    assert not cli["secure.yaml"]  # every Checkov check maps onto a catalog rule, so a secure file fails none


def test_identity_resolver_disambiguates_resource_and_data_by_line() -> None:
    text = 'resource "aws_thing" "x" {\n}\n\ndata "aws_thing" "x" {\n}\n'
    resolve = _identity_resolver("terraform", text)
    assert resolve("aws_thing.x", 1) == "aws_thing.x"
    assert resolve("aws_thing.x", 4) == "data.aws_thing.x"
    assert resolve('aws_thing.x["a"]', 1) == "aws_thing.x"  # a for_each instance
    assert resolve("aws.default", 1) == "aws.default"  # a provider: unchanged


def test_version(engine: CheckovEngine) -> None:
    assert engine.version() == "3.3.30"


def test_libyaml_line_loader_builds_the_same_documents_as_checkovs_own(engine: CheckovEngine) -> None:
    # The engine swaps checkov's pure-Python SafeLineLoader for a libyaml one; the documents, line marks
    # included, must be exactly those of checkov's loader.
    import yaml
    from checkov.kubernetes.parser import k8_yaml

    assert k8_yaml.SafeLineLoader.__name__ == "CSafeLineLoader"
    assert not issubclass(k8_yaml.SafeLineLoader.replaces, yaml.CSafeLoader)
    text = K8S_INSECURE + "---\n# empty\n---\n" + """\
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, labels: &l {app: web}}
data:
  a: "1"
  b: |
    multi
    line
  c: [x, {y: z}]
  d: *l
"""

    assert k8_yaml.loads(text) == list(yaml.load_all(text, Loader=k8_yaml.SafeLineLoader.replaces))


def test_the_engine_names_its_version_before_checkov_is_imported_and_loads_on_demand() -> None:
    """Building the engine finds checkov (a missing package is EngineUnavailable then) without its ~2 s import;
    ``load`` (a scoring worker's warm-up) or the first scan imports it, and the version is the same."""
    import subprocess
    import sys

    code = ("import sys\nfrom security_verifiers.engines.checkov import CheckovEngine\nengine = CheckovEngine()\n"
            "before = 'checkov.terraform.runner' in sys.modules\nversion = engine.version()\nengine.load()\n"
            "from checkov.version import version as real\n"
            "print(before, 'checkov.terraform.runner' in sys.modules, version == real)")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.split()
    assert out == ["False", "True", "True"]
