"""The Kubernetes autofixer against the whole oracle: one case per Checkov-only rule the generator injects, the
fixes of the core rules that had to change (a secret now goes to a mounted file, never to an env variable), and
generated items (their mutations all repaired, nothing new reported, the inventory kept).

Each case starts from a clean, hardened manifest (:data:`CLEAN`) and breaks one thing, so that "the finding is
gone and nothing else appears" is checked against every engine.
"""

from __future__ import annotations

import copy
import random
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from security_verifiers.engines.configs import inventory
from security_verifiers.engines.findings import Finding, catalog
from security_verifiers.envs.config_audit.autofix import autofix, fixable_rules
from security_verifiers.envs.config_audit.autofix.kubernetes_checkov import placeholder_digest
from security_verifiers.envs.config_audit.generation.generator import Slot, draft
from security_verifiers.envs.config_audit.generation.mutations import injectable_rules
from security_verifiers.envs.config_audit.generation.templates_k8s import render_yaml
from security_verifiers.envs.config_audit.scoring import inventory_preserved

Docs = list[dict[str, Any]]
DIGEST = "sha256:" + "ab" * 32
CLEAN_TEXT = f"""\
apiVersion: v1
kind: ServiceAccount
metadata: {{name: web, namespace: shop}}
automountServiceAccountToken: false
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web, namespace: shop, labels: {{app: web}}}}
spec:
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      serviceAccountName: web
      automountServiceAccountToken: false
      securityContext:
        runAsNonRoot: true
        runAsUser: 10001
        seccompProfile: {{type: RuntimeDefault}}
      containers:
        - name: web
          image: ghcr.io/acme/web:1.4.2@{DIGEST}
          imagePullPolicy: Always
          ports: [{{name: http, containerPort: 8080}}]
          resources:
            requests: {{cpu: 100m, memory: 128Mi}}
            limits: {{cpu: 500m, memory: 256Mi}}
          livenessProbe: {{httpGet: {{path: /healthz, port: http}}}}
          readinessProbe: {{httpGet: {{path: /ready, port: http}}}}
          securityContext:
            allowPrivilegeEscalation: false
            privileged: false
            readOnlyRootFilesystem: true
            runAsNonRoot: true
            capabilities: {{drop: [ALL]}}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {{name: web, namespace: shop}}
spec:
  podSelector: {{matchLabels: {{app: web}}}}
  policyTypes: [Ingress]
  ingress: [{{ports: [{{port: 8080}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {{name: web, namespace: shop}}
spec:
  ingressClassName: nginx
  tls: [{{hosts: [shop.example.com], secretName: web-tls}}]
  rules:
    - host: shop.example.com
      http:
        paths: [{{path: /, pathType: Prefix, backend: {{service: {{name: web, port: {{number: 80}}}}}}}}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {{name: web-operator}}
rules:
  - apiGroups: [acme.io]
    resources: [widgets]
    verbs: [get, list, watch, update]
  - apiGroups: [""]
    resources: [events]
    verbs: [create, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {{name: web-operator}}
roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: web-operator}}
subjects: [{{kind: ServiceAccount, name: web, namespace: shop}}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {{name: web-reader, namespace: shop}}
rules:
  - apiGroups: [""]
    resources: [configmaps, pods]
    verbs: [get, list]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {{name: web-reader, namespace: shop}}
roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: Role, name: web-reader}}
subjects: [{{kind: ServiceAccount, name: web, namespace: shop}}]
"""
CLEAN: Docs = list(yaml.safe_load_all(CLEAN_TEXT))


def _doc(docs: Docs, kind: str) -> dict[str, Any]:
    return next(d for d in docs if d["kind"] == kind)


def _pod(docs: Docs) -> dict[str, Any]:
    spec: dict[str, Any] = _doc(docs, "Deployment")["spec"]["template"]["spec"]
    return spec


def _web(docs: Docs) -> dict[str, Any]:
    container: dict[str, Any] = _pod(docs)["containers"][0]
    return container


def _annotate(docs: Docs, key: str, value: str) -> None:
    _doc(docs, "Ingress")["metadata"]["annotations"] = {f"nginx.ingress.kubernetes.io/{key}": value}


def _widen(docs: Docs, resources: list[str], verbs: list[str]) -> None:
    rule = _doc(docs, "Role")["rules"][0]
    rule["resources"] += resources
    rule["verbs"] += verbs


def _append_rules(docs: Docs, *rules: dict[str, Any]) -> None:
    _doc(docs, "ClusterRole")["rules"].extend(rules)


#: rule id -> (resource it fires on, how CLEAN is broken).
CASES: dict[str, tuple[str, Callable[[Docs], None]]] = {
    "k8s-image-not-pinned-by-digest": ("Deployment/web", lambda d: _web(d).update(image="ghcr.io/acme/web:1.4.2")),
    "k8s-image-pull-policy-not-always": ("Deployment/web", lambda d: _web(d).update(
        image="ghcr.io/acme/web:1.4.2", imagePullPolicy="IfNotPresent")),
    "k8s-default-namespace": ("Deployment/web", lambda d: _doc(d, "Deployment")["metadata"].pop("namespace")),
    "k8s-any-capability-added": ("Deployment/web", lambda d: _web(d)["securityContext"]["capabilities"].update(
        add=["NET_BIND_SERVICE"])),
    "k8s-net-raw-not-dropped": ("Deployment/web", lambda d: _web(d)["securityContext"]["capabilities"].update(
        drop=["MKNOD"])),
    "k8s-low-uid": ("Deployment/web", lambda d: _pod(d)["securityContext"].update(runAsUser=1000)),
    "k8s-container-security-context-missing": ("Deployment/web", lambda d: _web(d).pop("securityContext")),
    "k8s-pod-security-context-missing": ("Deployment/web", lambda d: _pod(d).pop("securityContext")),
    "k8s-secret-in-env-ref": ("Deployment/web", lambda d: _web(d).update(
        env=[{"name": "MODE", "value": "prod"},
             {"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "web-db", "key": "password"}}}],
        envFrom=[{"secretRef": {"name": "web-env"}}])),
    "k8s-git-sync-git-override": ("Deployment/web", lambda d: _web(d).update(
        env=[{"name": "GITSYNC_REPO", "value": "https://github.com/acme/site.git"},
             {"name": "GITSYNC_GIT", "value": "/git-tools/git"}])),
    "k8s-pod-no-networkpolicy": ("Deployment/web", lambda d: d.remove(_doc(d, "NetworkPolicy"))),
    "k8s-default-sa-bound": ("RoleBinding/web-reader", lambda d: _doc(d, "RoleBinding")["subjects"][0].update(
        name="default")),
    "k8s-rbac-bind-permission": ("ClusterRole/web-operator", lambda d: _append_rules(d, {
        "apiGroups": ["rbac.authorization.k8s.io"], "resources": ["rolebindings", "roles"],
        "verbs": ["get", "create", "bind"]})),
    "k8s-rbac-escalate-permission": ("ClusterRole/web-operator", lambda d: _append_rules(d, {
        "apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles"], "verbs": ["*"]})),
    "k8s-rbac-webhook-config-write": ("ClusterRole/web-operator", lambda d: _append_rules(d, {
        "apiGroups": ["admissionregistration.k8s.io"], "resources": ["validatingwebhookconfigurations"],
        "verbs": ["get", "patch"]})),
    "k8s-rbac-csr-approve": ("ClusterRole/web-operator", lambda d: _append_rules(
        d, {"apiGroups": ["certificates.k8s.io"], "resources": ["certificatesigningrequests/approval"],
            "verbs": ["update"]},
        {"apiGroups": ["certificates.k8s.io"], "resources": ["signers"], "verbs": ["approve"]})),
    "k8s-rbac-sa-can-read-all-secrets": ("RoleBinding/web-reader", lambda d: _widen(d, ["secrets"], [])),
    "k8s-rbac-sa-can-exec": ("RoleBinding/web-reader", lambda d: _widen(d, ["pods/exec"], ["create"])),
    "k8s-rbac-sa-can-impersonate": ("RoleBinding/web-reader", lambda d: _widen(d, ["serviceaccounts"],
                                                                               ["impersonate"])),
    "k8s-rbac-sa-can-update-service-status": ("RoleBinding/web-reader", lambda d: _widen(
        d, ["services/status"], ["patch"])),
    "k8s-rbac-sa-can-bind": ("RoleBinding/web-reader", lambda d: _widen(d, ["*"], ["bind"])),
    "k8s-ingress-nginx-snippet": ("Ingress/web", lambda d: _annotate(d, "configuration-snippet",
                                                                      'more_set_headers "X-Frame-Options: DENY";')),
    "k8s-ingress-nginx-alias-snippet": ("Ingress/web", lambda d: _annotate(
        d, "server-snippet", "location /static/ {\n  alias /var/www/static/;\n}\n")),
    "k8s-ingress-nginx-lua-snippet": ("Ingress/web", lambda d: _annotate(
        d, "configuration-snippet", "access_by_lua_block {\n  ngx.exit(403)\n}\n")),
}


def _text(rule_id: str) -> str:
    docs = copy.deepcopy(CLEAN)
    CASES[rule_id][1](docs)
    return render_yaml(docs)


@pytest.fixture(scope="module")
def oracle() -> Any:
    oracle_module = pytest.importorskip("security_verifiers.engines.oracle")
    try:
        return oracle_module.get_oracle()
    except oracle_module.EngineUnavailable as err:  # pragma: no cover - depends on the installation
        pytest.skip(f"the oracle's engines are not available: {err}")


def _check_fixed(oracle: Any, text: str, expected: tuple[str, str] | None = None) -> str:
    before = oracle.scan("kubernetes", text)
    assert before.valid, before.validation_errors
    if expected is not None:
        assert expected in before.keys, sorted(before.keys)
    result = autofix("kubernetes", text, before.findings)
    after = oracle.scan("kubernetes", result.text)
    assert after.valid, after.validation_errors
    assert not after.keys, f"left after the fix: {sorted(after.keys)}; skipped {result.skipped}"
    lost = inventory_preserved(inventory("kubernetes", text), inventory("kubernetes", result.text))
    assert lost is None, f"the fix lost or changed an object: {lost}"
    return result.text


def test_the_clean_manifest_is_clean(oracle: Any) -> None:
    result = oracle.scan("kubernetes", CLEAN_TEXT)
    assert result.valid and not result.findings, sorted(result.keys)


@pytest.mark.parametrize("rule_id", sorted(CASES))
def test_case_is_fixed_for_the_whole_oracle(rule_id: str, oracle: Any) -> None:
    _check_fixed(oracle, _text(rule_id), (rule_id, CASES[rule_id][0]))


def test_every_injectable_checkov_rule_has_a_case_and_a_fixer() -> None:
    rules = catalog()
    injected = {r for r in injectable_rules("kubernetes") if rules[r].engine == "checkov"}
    assert injected <= set(CASES), sorted(injected - set(CASES))
    assert set(CASES) <= fixable_rules("kubernetes")


# ------------------------------------------------------------------------------------------- exact edits


def _fix(text: str, rule_id: str, resource: str) -> Docs:
    result = autofix("kubernetes", text, [Finding(rule_id=rule_id, resource=resource)])
    assert result.fixed_rules == (rule_id,), result.skipped
    return list(yaml.safe_load_all(result.text))


def test_secret_env_refs_become_a_mounted_secret() -> None:
    docs = _fix(_text("k8s-secret-in-env-ref"), "k8s-secret-in-env-ref", "Deployment/web")
    web, pod = _web(docs), _pod(docs)
    assert web["env"] == [{"name": "MODE", "value": "prod"}] and "envFrom" not in web
    assert {"name": "secret-web-db", "secret": {"secretName": "web-db"}} in pod["volumes"]
    assert {"name": "secret-web-env", "secret": {"secretName": "web-env"}} in pod["volumes"]
    assert {"name": "secret-web-db", "mountPath": "/var/run/secrets/web-db", "readOnly": True} in web["volumeMounts"]


def test_literal_secrets_go_to_a_mounted_secret_not_an_env_ref() -> None:
    docs = copy.deepcopy(CLEAN)
    _web(docs)["env"] = [{"name": "API_TOKEN", "value": "tok_4f8a9c2e1b7d"}]
    _web(docs)["args"] = ["--aws-key", "AKIAQWERTYUIOPASDFGH"]
    text = render_yaml(docs)
    fixed = _fix(text, "k8s-secret-in-env", "Deployment/web")
    assert "env" not in _web(fixed)
    assert _web(fixed)["volumeMounts"] == [{"name": "secret-web-secrets", "mountPath": "/var/run/secrets/web-secrets",
                                            "readOnly": True}]
    fixed = _fix(text, "cfg-hardcoded-aws-key", "Deployment/web")
    assert _web(fixed)["args"] == ["--aws-key", "/var/run/secrets/web-secrets/AWS_ACCESS_KEY_ID"]


def test_digest_placeholder_is_deterministic_and_keeps_the_tag() -> None:
    docs = _fix(_text("k8s-image-not-pinned-by-digest"), "k8s-image-not-pinned-by-digest", "Deployment/web")
    image = _web(docs)["image"]
    assert image == "ghcr.io/acme/web:1.4.2@" + placeholder_digest("ghcr.io/acme/web:1.4.2")
    assert len(image.rsplit(":", 1)[1]) == 64


def test_default_namespace_moves_into_the_files_namespace() -> None:
    docs = _fix(_text("k8s-default-namespace"), "k8s-default-namespace", "Deployment/web")
    assert _doc(docs, "Deployment")["metadata"]["namespace"] == "shop"


def test_rbac_fixes_remove_only_the_dangerous_grant() -> None:
    docs = _fix(_text("k8s-rbac-bind-permission"), "k8s-rbac-bind-permission", "ClusterRole/web-operator")
    assert _doc(docs, "ClusterRole")["rules"][-1]["verbs"] == ["get", "create"]
    docs = _fix(_text("k8s-rbac-escalate-permission"), "k8s-rbac-escalate-permission", "ClusterRole/web-operator")
    assert _doc(docs, "ClusterRole")["rules"][-1]["verbs"] == ["get", "list", "watch"]
    docs = _fix(_text("k8s-rbac-sa-can-read-all-secrets"), "k8s-rbac-sa-can-read-all-secrets",
                "RoleBinding/web-reader")
    assert _doc(docs, "Role")["rules"] == CLEAN[-2]["rules"]
    docs = _fix(_text("k8s-default-sa-bound"), "k8s-default-sa-bound", "RoleBinding/web-reader")
    assert _doc(docs, "RoleBinding")["subjects"][0]["name"] == "web"


def test_snippet_annotations_are_removed() -> None:
    docs = _fix(_text("k8s-ingress-nginx-lua-snippet"), "k8s-ingress-nginx-lua-snippet", "Ingress/web")
    assert "annotations" not in _doc(docs, "Ingress")["metadata"]


# ------------------------------------------------------------------------------------------- generated items


def test_generated_items_are_fixed_for_the_whole_oracle(oracle: Any) -> None:
    """The autofixer is the reference policy: on generated items it must repair every injected mutation, together
    with whatever the others injected, and add nothing."""
    rng = random.Random(99)
    usage: Counter[str] = Counter()
    drafts = [draft(random.Random(rng.getrandbits(64)), "dev", Slot("kubernetes", False, None), usage)
              for _ in range(60)]
    before = oracle.scan_many([("kubernetes", d.text) for d in drafts])
    fixed = [autofix("kubernetes", d.text, b.findings) for d, b in zip(drafts, before, strict=True)]
    after = oracle.scan_many([("kubernetes", f.text) for f in fixed])
    problems = []
    for d, f, a in zip(drafts, fixed, after, strict=True):
        lost = inventory_preserved(inventory("kubernetes", d.text), inventory("kubernetes", f.text))
        if a.keys or not a.valid or lost:
            problems.append(f"{d.template} {d.mutations}: left {sorted(a.keys)}, valid {a.valid}")
    assert not problems, "\n".join(problems)
