"""The rule-based autofixer of config-audit (E2): its editing helpers, its patch, and its fixes as the oracle sees them.

Three layers:

* unit tests of the Terraform text editor (:mod:`autofix_hcl`), the Kubernetes document round trip and
  ``unified_diff`` (applied back with a reference applier and, when installed, GNU ``patch``);
* one small input per catalog rule (:data:`CASES`), fixed with the findings of the real oracle (Rego, Checkov,
  semgrep), then checked: the result parses and validates, keeps the inventory, and the finding is gone with no
  new one;
* the same check on the rule fixtures of ``tests/engines/fixtures/rules/<rule_id>/fire*`` (however many exist).
"""

from __future__ import annotations

import shutil
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from security_verifiers.engines.configs import inventory, parse_kubernetes, parse_terraform
from security_verifiers.engines.findings import Finding, catalog
from security_verifiers.envs.config_audit.autofix import AutofixResult, autofix, fixable_rules
from security_verifiers.envs.config_audit.autofix.hcl_text import HclText, scan
from security_verifiers.envs.config_audit.autofix.kubernetes import PINNED_TAG
from security_verifiers.envs.config_audit.autofix.yaml_text import split_documents
from security_verifiers.envs.config_audit.scoring import inventory_preserved
from security_verifiers.envs.kits.patching import unified_diff

FIXTURES = Path(__file__).resolve().parents[2] / "engines" / "fixtures"
assert (FIXTURES / "rules").is_dir(), f"rule fixtures missing at {FIXTURES}"  # else the parametrisations are empty


def K(text: str) -> str:  # noqa: N802 - reads as a literal marker in the tables below
    return textwrap.dedent(text).lstrip("\n")


def _finding(rule_id: str, resource: str, path: str | None = None) -> Finding:
    return Finding(rule_id=rule_id, resource=resource, path=path)


# ------------------------------------------------------------------------------------------- reference applier


def apply_unified_diff(original: str, diff: str) -> str:
    """Apply a unified diff (as :func:`unified_diff` writes it) to ``original``: the reference for the round trip."""
    if not diff:
        return original
    source = original.splitlines(keepends=True)
    out: list[str] = []
    pos = 0
    lines = diff.splitlines(keepends=True)
    i = 0
    while i < len(lines) and not lines[i].startswith("@@"):
        i += 1
    while i < len(lines):
        header = lines[i]
        assert header.startswith("@@"), header
        first, _, length = header.split()[1].lstrip("-").partition(",")
        start = int(first) if length == "0" else int(first) - 1  # an empty range names the line before it
        out.extend(source[pos:start])
        pos = start
        i += 1
        while i < len(lines) and not lines[i].startswith("@@"):
            line = lines[i]
            marker, body = line[0], line[1:]
            strip = i + 1 < len(lines) and lines[i + 1].startswith("\\ No newline")
            if strip:
                body = body.removesuffix("\n")
            if marker == " ":
                assert source[pos] == body, (source[pos], body)
                out.append(body)
                pos += 1
            elif marker == "-":
                assert source[pos] == body, (source[pos], body)
                pos += 1
            elif marker == "+":
                out.append(body)
            i += 2 if strip else 1
    out.extend(source[pos:])
    return "".join(out)


# ------------------------------------------------------------------------------------------------ unified_diff

DIFF_CASES = [
    ("a\nb\n", "a\nc\n"),
    ("a\nb", "a\nc"),  # neither ends with a newline
    ("a\nb", "a\nb\n"),  # only the final newline added
    ("a\nb\n", "a\nb"),  # only the final newline removed
    ("", "x\n"),
    ("x\n", ""),
    ("".join(f"line {i}\n" for i in range(40)), "".join(f"line {i}\n" for i in range(40) if i % 7) + "tail"),
]


@pytest.mark.parametrize(("original", "fixed"), DIFF_CASES)
def test_unified_diff_round_trips(original: str, fixed: str) -> None:
    diff = unified_diff(original, fixed, "main.tf")
    assert diff.startswith("--- a/main.tf\n+++ b/main.tf\n")
    assert all(line.endswith("\n") for line in diff.splitlines(keepends=True))
    assert apply_unified_diff(original, diff) == fixed


@pytest.mark.skipif(shutil.which("patch") is None, reason="GNU patch is not installed")
@pytest.mark.parametrize(("original", "fixed"), DIFF_CASES)
def test_unified_diff_applies_with_gnu_patch(tmp_path: Path, original: str, fixed: str) -> None:
    target = tmp_path / "main.tf"
    target.write_text(original)
    diff = unified_diff(original, fixed, "main.tf")
    proc = subprocess.run(["patch", "-p1", "--batch", "--silent"], input=diff, text=True, cwd=tmp_path,
                          capture_output=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert target.read_text() == fixed


def test_unified_diff_is_empty_without_change() -> None:
    assert unified_diff("a\n", "a\n", "x.yaml") == ""


# ------------------------------------------------------------------------------------------- Terraform editor

TF = K('''
    resource "aws_security_group" "web" {
      name = "web"   # a comment with a { brace
      description = "uses ${var.x} and a \\" quote"
      ingress {
        from_port   = 22
        to_port     = 22
        protocol    = "tcp"
        cidr_blocks = ["0.0.0.0/0"]
      }
      egress {
        cidr_blocks = ["0.0.0.0/0"]
      }
      policy = <<EOF
    { "a": [ {
    EOF
      tags = {
        enabled = false
      }
    }
    resource "aws_kms_key" "k" {}
    ''')


def test_scan_tracks_depth_through_strings_comments_and_heredocs() -> None:
    infos = scan(TF.splitlines(keepends=True))
    assert [i.depth for i in infos[:4]] == [0, 1, 1, 1]
    assert infos[4].depth == 2  # inside ingress
    heredoc = [i for i in infos if i.heredoc]
    assert len(heredoc) == 2  # body and terminator
    assert infos[-1].depth == 0


def test_sub_blocks_and_find_attr_stay_at_their_depth() -> None:
    hcl = HclText(TF)
    body = hcl.body(hcl.block("aws_security_group.web"))  # type: ignore[arg-type]
    ingress = hcl.sub_blocks(body, "ingress")
    assert len(ingress) == 1 and hcl.lines[ingress[0].lo].strip() == "ingress {"
    assert hcl.find_attr(body, "enabled") is None  # nested in tags, not the block's own
    lo, hi = hcl.find_attr(body, "policy")  # type: ignore[misc]
    assert hi - lo == 3  # the heredoc value spans three lines


@pytest.mark.parametrize(("key", "value", "expect"), [
    ("name", '"api"', '  name = "api"\n'),  # replaced in place, comment dropped
    ("policy", '"{}"', '  policy = "{}"\n'),  # a heredoc value replaced whole
    ("revoke_rules_on_delete", "true", "  revoke_rules_on_delete = true\n"),  # inserted before the }
])
def test_set_attr_replaces_or_inserts(key: str, value: str, expect: str) -> None:
    hcl = HclText(TF)
    assert hcl.set_attr(hcl.body(hcl.block("aws_security_group.web")), key, value)  # type: ignore[arg-type]
    assert expect in hcl.text
    parsed = parse_terraform(hcl.text).blocks[0].attributes
    assert key in parsed and parsed["ingress"][0]["from_port"] == 22
    assert "<<EOF" not in hcl.text or key != "policy"


def test_set_attr_opens_a_one_line_block() -> None:
    hcl = HclText(TF)
    assert hcl.set_attr(hcl.body(hcl.block("aws_kms_key.k")), "enable_key_rotation", "true")  # type: ignore[arg-type]
    assert hcl.block("aws_kms_key.k").attributes == {"enable_key_rotation": True}  # type: ignore[union-attr]
    assert not hcl.set_attr(hcl.body(hcl.block("aws_kms_key.k")), "enable_key_rotation", "true")  # type: ignore[arg-type]


def test_sub_skips_the_excluded_spans() -> None:
    hcl = HclText(TF)
    body = hcl.body(hcl.block("aws_security_group.web"))  # type: ignore[arg-type]
    assert hcl.sub(body, r'"0\.0\.0\.0/0"', '"10.0.0.0/8"', skip=hcl.sub_blocks(body, "egress"))
    attrs = hcl.block("aws_security_group.web").attributes  # type: ignore[union-attr]
    assert attrs["ingress"][0]["cidr_blocks"] == ["10.0.0.0/8"] and attrs["egress"][0]["cidr_blocks"] == ["0.0.0.0/0"]


def test_sensitive_variables_get_free_names() -> None:
    hcl = HclText('variable "db_password" {}\n')
    assert hcl.add_sensitive_variable("db_password", "x") == "db_password_2"
    assert hcl.add_sensitive_variable("db_password", "x") == "db_password_3"
    assert hcl.text.count("sensitive   = true") == 2
    parse_terraform(hcl.text)


# ---------------------------------------------------------------------------------- Kubernetes round trip


@pytest.mark.parametrize(("text", "count"), [
    ("a: 1\n---\nb: 2\n", 2),
    ("# lead\n---\na: 1\n", 1),
    ("---\na: 1\n---\n", 2),
    ("a: 1\n--- # sep comment\nb: 2", 2),
])
def test_split_documents_matches_the_loader(text: str, count: int) -> None:
    docs = list(yaml.safe_load_all(text))
    parts = split_documents(text, docs)
    assert parts is not None and len(parts) == count == len(docs) and "".join(parts) == text


@pytest.mark.parametrize("text", ["%YAML 1.1\n---\na: 1\n", "--- {a: 1}\n---\nb: 2\n", "a: 1\n...\n---\nb: 2\n"])
def test_split_documents_declines_unusual_layouts(text: str) -> None:
    assert split_documents(text, list(yaml.safe_load_all(text))) is None


POD = K('''
    # keep me
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: untouched}   # and me
    data: {mode: prod}
    ---
    apiVersion: v1
    kind: Pod
    metadata:
      name: app
      namespace: shop
    spec:
      hostNetwork: true
      containers:
        - name: app
          image: registry:5000/team/app
          ports: [{containerPort: 8080, hostPort: 80}]
          env:
            - {name: DB_PASSWORD, value: hunter2}
            - {name: MODE, value: prod}
          resources:
            limits: {cpu: 50m, memory: 64Mi}
      volumes:
        - name: data
          hostPath: {path: /srv}
    ''')


def _fix_pod(rule_id: str, resource: str = "Pod/app", text: str = POD) -> tuple[AutofixResult, list[Any]]:
    result = autofix("kubernetes", text, [_finding(rule_id, resource)])
    return result, [d for d in yaml.safe_load_all(result.text) if d]


def _pod(docs: list[Any]) -> dict[str, Any]:
    return next(d for d in docs if d["kind"] == "Pod")


def test_untouched_documents_keep_their_text() -> None:
    result, _ = _fix_pod("k8s-host-network")
    head = "# keep me\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: untouched}   # and me\n"
    assert result.text.startswith(head)
    assert "hostNetwork" not in result.text


K8S_UNIT = [
    ("k8s-host-network", lambda p: "hostNetwork" not in p["spec"]),
    ("k8s-hostpath-volume", lambda p: p["spec"]["volumes"] == [{"name": "data", "emptyDir": {}}]),
    ("k8s-host-port", lambda p: p["spec"]["containers"][0]["ports"] == [{"containerPort": 8080}]),
    ("k8s-latest-image-tag", lambda p: p["spec"]["containers"][0]["image"] == f"registry:5000/team/app:{PINNED_TAG}"),
    ("k8s-missing-cpu-request", lambda p: p["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "50m"}),
    ("k8s-missing-memory-request", lambda p: p["spec"]["containers"][0]["resources"]["requests"] == {"memory": "64Mi"}),
    ("k8s-missing-liveness-probe",
     lambda p: p["spec"]["containers"][0]["livenessProbe"]["tcpSocket"] == {"port": 8080}),
    ("k8s-secret-in-env", lambda p: p["spec"]["containers"][0]["env"] == [{"name": "MODE", "value": "prod"}]
     and p["spec"]["containers"][0]["volumeMounts"] == [
         {"name": "secret-app-secrets", "mountPath": "/var/run/secrets/app-secrets", "readOnly": True}]
     and {"name": "secret-app-secrets", "secret": {"secretName": "app-secrets"}} in p["spec"]["volumes"]),
    ("k8s-run-as-root", lambda p: p["spec"]["securityContext"] == {"runAsNonRoot": True} and
     p["spec"]["containers"][0]["securityContext"] == {"runAsNonRoot": True, "runAsUser": 10001}),
    ("k8s-default-service-account", lambda p: p["spec"]["serviceAccountName"] == "app"),
    ("k8s-seccomp-not-set", lambda p: p["spec"]["securityContext"] == {"seccompProfile": {"type": "RuntimeDefault"}}),
]


@pytest.mark.parametrize(("rule_id", "check"), K8S_UNIT, ids=[c[0] for c in K8S_UNIT])
def test_kubernetes_fixers_edit_the_pod(rule_id: str, check: Any) -> None:
    result, docs = _fix_pod(rule_id)
    assert result.fixed_rules == (rule_id,) and not result.skipped
    assert check(_pod(docs))
    assert inventory("kubernetes", result.text) == inventory("kubernetes", POD)


def test_missing_networkpolicy_appends_a_default_deny_policy() -> None:
    text = "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n---\n" + POD
    result, docs = _fix_pod("k8s-missing-networkpolicy", "Namespace/shop", text)
    policy = docs[-1]
    assert policy["kind"] == "NetworkPolicy" and policy["metadata"] == {"name": "default-deny-all", "namespace": "shop"}
    assert result.text.startswith(text)  # nothing else changed: the policy is appended after a separator


def test_unknown_rules_and_resources_are_reported_not_fixed() -> None:
    result = autofix("kubernetes", POD, [_finding("no-such-rule", "Pod/app"), _finding("k8s-host-pid", "Pod/other"),
                                         _finding("k8s-host-pid", "Pod/app")])
    assert result.text == POD and not result.fixed
    assert [s.reason for s in result.skipped] == ["no Kubernetes fixer for this rule",
                                                  "resource not found in the manifest", "nothing to change"]


def test_kind_specific_fixers_leave_other_kinds_alone() -> None:
    result, _ = _fix_pod("k8s-ingress-no-tls", "ConfigMap/untouched")
    assert result.text == POD and result.skipped[0].reason == "nothing to change"


# ---------------------------------------------------------------------------------------- Terraform fixers

TF_UNIT = [
    ("tf-aws-s3-public-acl", 'resource "aws_s3_bucket" "b" {\n  acl = "public-read"\n}\n', "aws_s3_bucket.b",
     ['acl = "private"']),
    ("tf-aws-s3-versioning-off", 'resource "aws_s3_bucket" "b" {\n  bucket = "x"\n}\n', "aws_s3_bucket.b",
     ['resource "aws_s3_bucket_versioning" "b"', "bucket = aws_s3_bucket.b.id", 'status = "Enabled"']),
    ("tf-aws-sg-open-admin-port", TF, "aws_security_group.web", ['cidr_blocks = ["10.0.0.0/8"]']),
    ("tf-aws-rds-public", 'resource "aws_db_instance" "d" {\n  publicly_accessible = true\n}\n', "aws_db_instance.d",
     ["publicly_accessible = false"]),
    ("tf-hardcoded-password", 'resource "aws_db_instance" "d" {\n  password = "hunter2"\n}\n', "aws_db_instance.d",
     ["password = var.d_password", 'variable "d_password"', "sensitive   = true"]),
    ("tf-aws-iam-wildcard-policy", K('''
        resource "aws_iam_policy" "p" {
          policy = jsonencode({
            Statement = [
              { Effect = "Deny", Action = "*", Resource = "*" },
              { Effect = "Allow", Action = ["s3:GetObject", "*"], Resource = "*" },
            ]
          })
        }
        '''), "aws_iam_policy.p", ['{ Effect = "Deny", Action = "*", Resource = "*" }',
                                   'Action = ["s3:GetObject", "s3:ListBucket"]']),
]


@pytest.mark.parametrize(("rule_id", "text", "address", "expected"), TF_UNIT, ids=[c[0] for c in TF_UNIT])
def test_terraform_fixers_edit_the_text(rule_id: str, text: str, address: str, expected: list[str]) -> None:
    result = autofix("terraform", text, [_finding(rule_id, address)])
    assert result.fixed_rules == (rule_id,), result.skipped
    for snippet in expected:
        assert snippet in result.text, result.text
    before, after = inventory("terraform", text)["objects"], inventory("terraform", result.text)["objects"]
    assert set(before) <= set(after)


def test_terraform_without_findings_comes_back_byte_for_byte() -> None:
    text = 'resource "aws_kms_key" "k" {}'  # no trailing newline
    assert autofix("terraform", text, []).text == text
    assert autofix("terraform", text, [_finding("tf-aws-kms-rotation-off", "aws_kms_key.missing")]).text == text


def test_secrets_in_comments_are_removed_too() -> None:
    k8s = "# old: AKIAIOSFODNN7EXAMPLE\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}  # AKIAIOSFODNN7EXAMPLE\n"
    result = autofix("kubernetes", k8s, [_finding("cfg-hardcoded-aws-key", "ConfigMap/c")])
    assert result.text == "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n" and result.fixed
    tf = 'provider "aws" {\n  # access_key = "AKIAIOSFODNN7EXAMPLE"\n  region = "eu-west-1"\n}\n'
    result = autofix("terraform", tf, [_finding("cfg-hardcoded-aws-key", "file")])
    assert result.text == 'provider "aws" {\n  region = "eu-west-1"\n}\n' and result.fixed


@pytest.mark.parametrize(("platform", "text"), [("kubernetes", "a: [1\n"), ("terraform", 'resource "x" {\n')])
def test_unparseable_input_comes_back_unchanged(platform: str, text: str) -> None:
    result = autofix(platform, text, [_finding("k8s-host-pid", "Pod/p")])
    assert result.text == text and not result.fixed
    assert result.skipped[0].reason.startswith("the input does not parse")


# ------------------------------------------------------------------------------------------------ coverage


def test_every_core_and_injectable_rule_has_a_fixer() -> None:
    """Generated items hold core rules and the rules the mutation operators inject: autofix repairs all of them.
    (Checkov-only rules beyond those are reported by the oracle on real files; autofix skips them.)"""
    from security_verifiers.envs.config_audit.generation.mutations import injectable_rules

    for rule in catalog().values():
        for platform in rule.platforms:
            native = rule.engine != "checkov" and platform in rule.native_platforms
            if native or rule.id in injectable_rules(platform):
                assert rule.id in fixable_rules(platform), f"{rule.id} has no {platform} fixer"


# --------------------------------------------------------------------------- fixes as the oracle sees them

#: One small input per rule where that rule fires on ``resource`` (own inputs: they do not depend on fixtures).
CASES: dict[str, tuple[str, str, str]] = {}


def _case(rule_id: str, platform: str, resource: str, text: str) -> None:
    CASES[f"{rule_id}"] = (platform, resource, K(text))


DEPLOYMENT = '''
    apiVersion: apps/v1
    kind: Deployment
    metadata: {{name: web, namespace: shop}}
    spec:
      selector: {{matchLabels: {{app: web}}}}
      template:
        metadata: {{labels: {{app: web}}}}
        spec:
    {pod}
          containers:
            - name: web
              image: {image}
              ports: [{{containerPort: 8080{host_port}}}]
    {container}
    '''


def _deployment(pod: str = "", container: str = "", image: str = "nginx:1.25", host_port: str = "") -> str:
    pod = textwrap.indent(K(pod), " " * 6) if pod else ""
    container = textwrap.indent(K(container), " " * 10) if container else ""
    return K(DEPLOYMENT).format(pod=pod, container=container, image=image, host_port=host_port).replace("\n\n", "\n")


for _rule, _kw in {
    "k8s-privileged-container": {"container": "securityContext: {privileged: true}"},
    "k8s-privilege-escalation": {},
    "k8s-run-as-root": {"pod": "securityContext: {runAsUser: 0}"},
    "k8s-added-capabilities": {"container": "securityContext: {capabilities: {add: [NET_ADMIN, CHOWN]}}"},
    "k8s-capabilities-not-dropped": {"container": "securityContext: {capabilities: {drop: [NET_RAW]}}"},
    "k8s-host-network": {"pod": "hostNetwork: true"},
    "k8s-host-pid": {"pod": "hostPID: true"},
    "k8s-host-ipc": {"pod": "hostIPC: true"},
    "k8s-hostpath-volume": {"pod": "volumes: [{name: sock, hostPath: {path: /var/run/docker.sock}}]",
                            "container": "volumeMounts: [{name: sock, mountPath: /sock}]"},
    "k8s-host-port": {"host_port": ", hostPort: 80"},
    "k8s-writable-root-fs": {"container": "securityContext: {readOnlyRootFilesystem: false}"},
    "k8s-missing-cpu-limit": {"container": "resources: {limits: {memory: 1Gi}, requests: {cpu: 2}}"},
    "k8s-missing-memory-limit": {"container": "resources: {limits: {cpu: 100m}, requests: {memory: 1Gi}}"},
    "k8s-missing-cpu-request": {"container": "resources: {limits: {cpu: 50m}}"},
    "k8s-missing-memory-request": {"container": "resources: {limits: {memory: 64Mi}}"},
    "k8s-latest-image-tag": {"image": "ghcr.io/acme/web:latest"},
    "k8s-missing-liveness-probe": {},
    "k8s-missing-readiness-probe": {"container": "readinessProbe: {}"},
    "k8s-secret-in-env": {"container": "env: [{name: api-token, value: abc123}, {name: MODE, value: x}]"},
    "k8s-sa-token-automount": {"pod": "automountServiceAccountToken: true"},
    "k8s-default-service-account": {"pod": "serviceAccountName: default"},
    "k8s-seccomp-not-set": {"container": "securityContext: {seccompProfile: {type: Unconfined}}",
                            "pod": "securityContext: {seccompProfile: {type: RuntimeDefault}}"},
    "cfg-hardcoded-aws-key": {"container": "args: [--key, AKIAIOSFODNN7EXAMPLE]"},
}.items():
    _case(_rule, "kubernetes", "Deployment/web", _deployment(**_kw))

_case("k8s-rbac-wildcard-verbs", "kubernetes", "Role/ops", '''
    apiVersion: rbac.authorization.k8s.io/v1
    kind: Role
    metadata: {name: ops, namespace: shop}
    rules:
      - apiGroups: ["apps"]
        resources: [deployments]
        verbs: ["*"]
    ''')
_case("k8s-rbac-wildcard-resources", "kubernetes", "ClusterRole/reader", '''
    apiVersion: rbac.authorization.k8s.io/v1
    kind: ClusterRole
    metadata: {name: reader}
    rules:
      - apiGroups: ["*"]
        resources: ["*"]
        verbs: [get]
    ''')
_case("k8s-cluster-admin-binding", "kubernetes", "RoleBinding/ops", '''
    apiVersion: rbac.authorization.k8s.io/v1
    kind: RoleBinding
    metadata: {name: ops, namespace: shop}
    roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}
    subjects: [{kind: User, name: alice, apiGroup: rbac.authorization.k8s.io}]
    ''')
_case("k8s-nodeport-service", "kubernetes", "Service/web", '''
    apiVersion: v1
    kind: Service
    metadata: {name: web}
    spec:
      type: NodePort
      externalTrafficPolicy: Local
      selector: {app: web}
      ports: [{port: 80, targetPort: 8080, nodePort: 30080}]
    ''')
_case("k8s-loadbalancer-unrestricted", "kubernetes", "Service/web", '''
    apiVersion: v1
    kind: Service
    metadata:
      name: web
      annotations: {service.beta.kubernetes.io/load-balancer-source-ranges: "0.0.0.0/0"}
    spec:
      type: LoadBalancer
      selector: {app: web}
      ports: [{port: 443}]
    ''')
_case("k8s-removed-api-version", "kubernetes", "PodDisruptionBudget/web", '''
    apiVersion: policy/v1beta1
    kind: PodDisruptionBudget
    metadata: {name: web, namespace: shop}
    spec:
      minAvailable: 1
      selector: {matchLabels: {app: web}}
    ''')
_case("k8s-ingress-no-tls", "kubernetes", "Ingress/web", '''
    apiVersion: networking.k8s.io/v1
    kind: Ingress
    metadata: {name: web}
    spec:
      rules:
        - host: shop.example.com
          http:
            paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]
    ''')
_case("k8s-missing-networkpolicy", "kubernetes", "Namespace/default", '''
    apiVersion: v1
    kind: Namespace
    metadata: {name: default}
    ---
    apiVersion: v1
    kind: Pod
    metadata: {name: p}
    spec:
      containers: [{name: c, image: "busybox:1.36"}]
    ''')
_case("k8s-secret-in-configmap", "kubernetes", "ConfigMap/settings", '''
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: settings}
    data: {db.password: hunter2, mode: production}
    ---
    apiVersion: v1
    kind: Pod
    metadata: {name: p}
    spec:
      containers:
        - name: c
          image: "busybox:1.36"
          env: [{name: DB, valueFrom: {configMapKeyRef: {name: settings, key: db.password}}}]
    ''')
_case("cfg-hardcoded-private-key", "kubernetes", "Secret/tls", '''
    apiVersion: v1
    kind: Secret
    metadata: {name: tls}
    stringData:
      tls.crt: cert
      tls.key: |
        -----BEGIN EC PRIVATE KEY-----
        MHcCAQEEIBkg
        -----END EC PRIVATE KEY-----
    ''')

_BUCKET = 'resource "aws_s3_bucket" "logs" {\n  bucket = "acme-logs"\n}\n'
_case("tf-aws-s3-public-acl", "terraform", "aws_s3_bucket.logs", _BUCKET + '''
    resource "aws_s3_bucket_acl" "logs" {
      bucket = aws_s3_bucket.logs.id
      acl    = "public-read"
    }
    ''')
_case("tf-aws-s3-public-access-block-off", "terraform", "aws_s3_bucket.logs", _BUCKET)
_case("tf-aws-s3-no-encryption", "terraform", "aws_s3_bucket.logs", _BUCKET)
_case("tf-aws-s3-versioning-off", "terraform", "aws_s3_bucket.logs", '''
    resource "aws_s3_bucket" "logs" {
      bucket = "acme-logs"
      versioning {
        enabled = false
      }
    }
    ''')
_case("tf-aws-s3-logging-off", "terraform", "aws_s3_bucket.logs", _BUCKET)
# TF, declared and attached: the whole oracle reads it (an unattached group and an undeclared variable are findings).
_case("tf-aws-sg-open-admin-port", "terraform", "aws_security_group.web", TF + K('''
    variable "x" {
      type = string
    }

    resource "aws_network_interface" "web" {
      subnet_id       = "subnet-0123456789abcdef0"
      security_groups = [aws_security_group.web.id]
    }
    '''))
_case("tf-aws-iam-wildcard-policy", "terraform", "data.aws_iam_policy_document.admin", '''
    data "aws_iam_policy_document" "admin" {
      statement {
        actions   = ["*"]
        resources = ["*"]
      }
    }
    ''')
_case("tf-aws-rds-unencrypted", "terraform", "aws_db_instance.db", '''
    resource "aws_db_instance" "db" {
      engine            = "postgres"
      storage_encrypted = false
    }
    ''')
_case("tf-aws-rds-public", "terraform", "aws_db_instance.db", '''
    resource "aws_db_instance" "db" {
      engine              = "postgres"
      storage_encrypted   = true
      publicly_accessible = true
    }
    ''')
_case("tf-aws-ebs-unencrypted", "terraform", "aws_ebs_volume.v", 'resource "aws_ebs_volume" "v" { size = 10 }\n')
_case("tf-aws-kms-rotation-off", "terraform", "aws_kms_key.k", 'resource "aws_kms_key" "k" {}\n')
_case("tf-aws-cloudtrail-validation-off", "terraform", "aws_cloudtrail.t", '''
    resource "aws_cloudtrail" "t" {
      name                       = "t"
      s3_bucket_name             = "trail"
      enable_log_file_validation = false
    }
    ''')
_case("tf-gcp-bucket-public", "terraform", "google_storage_bucket_iam_binding.b", '''
    resource "google_storage_bucket_iam_binding" "b" {
      bucket  = "assets"
      role    = "roles/storage.objectViewer"
      members = ["allUsers", "user:ops@example.com"]
    }
    ''')
_case("tf-gcp-bucket-uniform-access-off", "terraform", "google_storage_bucket.b", '''
    resource "google_storage_bucket" "b" {
      name     = "assets"
      location = "EU"
    }
    ''')
_case("tf-gcp-firewall-open-admin-port", "terraform", "google_compute_firewall.ssh", '''
    resource "google_compute_firewall" "ssh" {
      name          = "ssh"
      network       = "default"
      source_ranges = ["0.0.0.0/0"]
      allow {
        protocol = "tcp"
        ports    = ["22", "3389"]
      }
    }
    ''')
_case("tf-gcp-sql-public", "terraform", "google_sql_database_instance.db", '''
    resource "google_sql_database_instance" "db" {
      database_version = "POSTGRES_18"
      settings {
        tier = "db-f1-micro"
        ip_configuration {
          authorized_networks {
            name  = "all"
            value = "0.0.0.0/0"
          }
        }
      }
    }
    ''')
_case("tf-gcp-kms-rotation-off", "terraform", "google_kms_crypto_key.k", '''
    resource "google_kms_crypto_key" "k" {
      name            = "k"
      key_ring        = "ring"
      rotation_period = "31536000s"
    }
    ''')
_STORAGE = '''
    resource "azurerm_storage_account" "sa" {{
      name                     = "acmedata"
      resource_group_name      = "rg"
      location                 = "westeurope"
      account_tier             = "Standard"
      account_replication_type = "LRS"
    {extra}
    }}
    '''
_case("tf-azure-storage-public-access", "terraform", "azurerm_storage_account.sa",
      _STORAGE.format(extra='      min_tls_version          = "TLS1_2"\n      allow_blob_public_access = true'))
_case("tf-azure-storage-https-off", "terraform", "azurerm_storage_account.sa",
      _STORAGE.format(extra='      min_tls_version          = "TLS1_2"\n      enable_https_traffic_only = false'))
_case("tf-azure-storage-old-tls", "terraform", "azurerm_storage_account.sa",
      _STORAGE.format(extra='      min_tls_version          = "TLS1_0"'))
_case("tf-azure-nsg-open-admin-port", "terraform", "azurerm_network_security_group.nsg", '''
    resource "azurerm_network_security_group" "nsg" {
      name                = "nsg"
      location            = "westeurope"
      resource_group_name = "rg"
      security_rule {
        name                       = "rdp"
        priority                   = 100
        direction                  = "Inbound"
        access                     = "Allow"
        protocol                   = "Tcp"
        source_port_range          = "*"
        destination_port_range     = "3389"
        source_address_prefix      = "Internet"
        destination_address_prefix = "*"
      }
      security_rule {
        name                       = "deny-all"
        priority                   = 4000
        direction                  = "Inbound"
        access                     = "Deny"
        protocol                   = "*"
        source_port_range          = "*"
        destination_port_range     = "*"
        source_address_prefix      = "*"
        destination_address_prefix = "*"
      }
    }
    ''')
_case("tf-azure-sql-public", "terraform", "azurerm_mssql_server.sql", '''
    resource "azurerm_mssql_server" "sql" {
      name                         = "sql"
      version                      = "12.0"
      administrator_login          = "sqladmin"
      administrator_login_password = var.sql_password
    }

    variable "sql_password" {
      type      = string
      sensitive = true
    }
    ''')
_case("tf-azure-keyvault-no-purge-protection", "terraform", "azurerm_key_vault.kv", '''
    resource "azurerm_key_vault" "kv" {
      name      = "kv"
      tenant_id = "t"
      sku_name  = "standard"
    }
    ''')
_case("tf-hardcoded-password", "terraform", "azurerm_mssql_server.sql", '''
    resource "azurerm_mssql_server" "sql" {
      name                          = "sql"
      public_network_access_enabled = false
      administrator_login_password  = "P@ss${""}" # nosemgrep
    }
    ''')
CASES["cfg-hardcoded-aws-key/terraform"] = ("terraform", "file", K('''
    provider "aws" {
      region     = "eu-west-1"
      access_key = "AKIAIOSFODNN7EXAMPLE"
      secret_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    }
    '''))
CASES["cfg-hardcoded-private-key/terraform"] = ("terraform", "aws_iam_server_certificate.c", K('''
    resource "aws_iam_server_certificate" "c" {
      name             = "c"
      certificate_body = file("cert.pem")
      private_key      = <<-EOT
        -----BEGIN RSA PRIVATE KEY-----
        MIIBOgIBAAJBAKj34GkxFhD90vcN
        -----END RSA PRIVATE KEY-----
      EOT
    }
    '''))


@pytest.fixture(scope="module")
def oracle() -> Any:
    oracle_module = pytest.importorskip("security_verifiers.engines.oracle")
    try:
        return oracle_module.get_oracle()
    except oracle_module.EngineUnavailable as err:  # pragma: no cover - depends on the installation
        pytest.skip(f"the oracle's engines are not available: {err}")


CONFIG_SUFFIXES = (".yaml", ".yml", ".tf")


def _rule_fixture_files() -> list[tuple[str, Path]]:
    """``(rule id, path)`` of every fire fixture: ``rules/<rule_id>/fire*`` and the semgrep rules' ``fire_*``."""
    files = [(p.parent.name, p) for p in sorted((FIXTURES / "rules").glob("*/fire*"))]
    files += [(_semgrep_rule(p), p) for p in sorted((FIXTURES / "semgrep").glob("fire*"))]
    return [(rule, p) for rule, p in files if p.suffix in CONFIG_SUFFIXES]


def _semgrep_rule(path: Path) -> str:
    """The semgrep fixtures are named after what they hold, not by rule id (fire_passwords.tf ...)."""
    name = path.stem
    return ("cfg-hardcoded-private-key" if "private" in name else "tf-hardcoded-password" if "password" in name
            else "cfg-hardcoded-aws-key")


def _pass_fixture_files() -> list[Path]:
    """Fixtures where a rule must not fire (other rules may): fixing whatever the oracle reports must work too."""
    files = sorted((FIXTURES / "rules").glob("*/pass*")) + sorted((FIXTURES / "semgrep").glob("pass*"))
    return [p for p in files if p.suffix in CONFIG_SUFFIXES]


def _platform(path: Path) -> str:
    return "terraform" if path.suffix == ".tf" else "kubernetes"


@pytest.fixture(scope="module")
def verdicts(oracle: Any) -> dict[str, tuple[Any, AutofixResult, Any]]:
    """Oracle before, autofix result and oracle after, for every own case and rule fixture (two batched scans)."""
    items: dict[str, tuple[str, str]] = {f"case:{key}": (platform, text) for key, (platform, _, text) in CASES.items()}
    items |= {f"fixture:{path}": (_platform(path), path.read_text(encoding="utf-8"))
              for path in [p for _, p in _rule_fixture_files()] + _pass_fixture_files()}
    keys = list(items)
    before = oracle.scan_many([items[k] for k in keys])
    results = [autofix(items[k][0], items[k][1], b.findings) for k, b in zip(keys, before, strict=True)]
    after = oracle.scan_many([(items[k][0], r.text) for k, r in zip(keys, results, strict=True)])
    return {k: (b, r, a) for k, b, r, a in zip(keys, before, results, after, strict=True)}


def _check_fixed(platform: str, original: str, before: Any, result: AutofixResult, after: Any,
                 key: tuple[str, str] | None) -> None:
    from security_verifiers.engines.validate import validate

    assert before.valid, before.validation_errors or before.parse_error
    if key is not None:
        assert key in before.keys, f"the input does not trigger {key}: {sorted(before.keys)}"
    assert result.text != original
    if platform == "kubernetes":
        parse_kubernetes(result.text)
    else:
        parse_terraform(result.text)
    validation = validate(platform, result.text)
    assert validation.ok, validation.errors
    assert after.valid, after.validation_errors or after.parse_error
    lost = inventory_preserved(inventory(platform, original), inventory(platform, result.text))
    assert lost is None, f"the fix lost or changed an object: {lost}"
    assert not after.keys, f"findings left after the fix: {sorted(after.keys)}; skipped: {result.skipped}"
    assert apply_unified_diff(original, unified_diff(original, result.text, "f")) == result.text


@pytest.mark.parametrize("case", sorted(CASES))
def test_own_case_is_fixed_for_the_oracle(case: str, verdicts: dict[str, Any]) -> None:
    platform, resource, text = CASES[case]
    before, result, after = verdicts[f"case:{case}"]
    _check_fixed(platform, text, before, result, after, (case.split("/")[0], resource))


def test_own_cases_cover_every_rule() -> None:
    """Every core rule has a case here; the Checkov-only rules the generator injects have theirs in the platform
    files (test_autofix_kubernetes.py, ...)."""
    covered = {key.split("/")[0] for key in CASES}
    assert {rule.id for rule in catalog().values() if rule.engine != "checkov"} <= covered


@pytest.mark.parametrize(("rule_id", "path"), _rule_fixture_files(),
                         ids=[f"{rule}/{path.name}" for rule, path in _rule_fixture_files()])
def test_rule_fixture_is_fixed_for_the_oracle(rule_id: str, path: Path, verdicts: dict[str, Any]) -> None:
    text = path.read_text(encoding="utf-8")
    before, result, after = verdicts[f"fixture:{path}"]
    resource = _expected_resource(text)
    _check_fixed(_platform(path), text, before, result, after, (rule_id, resource) if resource else None)


@pytest.mark.parametrize("path", _pass_fixture_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_pass_fixture_is_fixed_or_left_alone(path: Path, verdicts: dict[str, Any]) -> None:
    text = path.read_text(encoding="utf-8")
    before, result, after = verdicts[f"fixture:{path}"]
    if not before.findings:
        assert result.text == text
    else:
        _check_fixed(_platform(path), text, before, result, after, None)


def _expected_resource(text: str) -> str | None:
    first = text.splitlines()[0] if text else ""
    marker = first.split("expect:", 1)
    return marker[1].strip() if first.lstrip().startswith("#") and len(marker) == 2 else None


@pytest.mark.parametrize("path", sorted((FIXTURES / "secure").glob("*")),
                         ids=lambda p: p.name)
def test_secure_fixtures_change_only_where_the_oracle_objects(path: Path, oracle: Any) -> None:
    if path.suffix not in (".yaml", ".yml", ".tf"):
        pytest.skip("not a config file")
    text = path.read_text(encoding="utf-8")
    platform = _platform(path)
    before = oracle.scan(platform, text)
    result = autofix(platform, text, before.findings)
    if not before.findings:
        assert result.text == text and unified_diff(text, result.text, path.name) == ""
    else:  # a "secure" base the oracle still objects to: the fix must then satisfy it
        _check_fixed(platform, text, before, result, oracle.scan(platform, result.text), None)
