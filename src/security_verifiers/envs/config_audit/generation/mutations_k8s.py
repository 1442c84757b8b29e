"""Mutation operators for Kubernetes bases: one per rule, each injecting one misconfiguration.

Every operator is *precise*: it changes exactly the field its rule is about, in a way that both the Rego
library and any mapped Checkov check agree on, and it keeps the manifest valid under the strict schema. What
the same edit necessarily violates besides is declared (``also`` on the same resource, ``spillover`` on
others), and :mod:`.mutations_k8s_graph` predicts what Checkov's graph checks add on other objects. Where two
rules share a field (``capabilities.add`` vs ``capabilities.drop``) the operators edit disjoint keys so they
can be combined in one item. Some choices exist only to stay precise:

* wildcard *resources* go into a rule other than the first, because Checkov's CKV_K8S_49 (mapped to the
  wildcard-*verbs* rule) looks at the first rule's resources too and would add a second finding;
* the AWS key is planted in an env var or ConfigMap key whose *name* is not secret-like, so it does not
  also trigger the secret-in-env / secret-in-ConfigMap rules;
* bases pin every image by digest, which also satisfies the latest-tag and pull-policy checks: unpinning an
  image therefore also drops its digest (``also``: ``k8s-image-not-pinned-by-digest``);
* an operator that edits a security context requires one to exist (creating one would silence
  CKV_K8S_29, a missing pod securityContext, injected by another operator of the same item).

The core rules' operators live here; the operators of rules that Checkov alone implements are in
:mod:`.mutations_k8s_checkov`.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from security_verifiers.envs.config_audit.generation.mutation_kit import (
    Operator,
    fake_aws_key_id,
    fake_aws_secret,
    fake_password,
    fake_pem,
    fake_token,
)
from security_verifiers.envs.config_audit.generation.mutations_k8s_api import removed_api_version_operator
from security_verifiers.envs.config_audit.generation.mutations_k8s_checkov import (
    DIGEST,
    checkov_operators,
    drop_secret_mount,
    rbac_spillover,
    secret_mounts,
    strip_digest,
)
from security_verifiers.envs.config_audit.generation.mutations_k8s_graph import (
    bound_roles,
    graph_rule_hits,
    networkpolicy_spillover,
)
from security_verifiers.envs.config_audit.generation.mutations_k8s_kit import (
    ContainerEdit,
    ContainerPred,
    Doc,
    container_op,
    containers,
    doc_op,
    either,
    pod_op,
    sc,
    workloads,
)
from security_verifiers.envs.config_audit.generation.templates_k8s import K8sBase

DANGEROUS_CAPS = ("SYS_ADMIN", "NET_ADMIN", "SYS_PTRACE", "SYS_MODULE", "NET_RAW", "DAC_READ_SEARCH", "ALL")
SECRET_ENV_NAMES = ("DB_PASSWORD", "API_TOKEN", "STRIPE_API_KEY", "JWT_SECRET", "SMTP_PASSWD", "GITHUB_TOKEN",
                    "REDIS_PASSWORD", "SENTRY_APIKEY", "OAUTH_CLIENT_SECRET", "ADMIN_PASSWORD", "SLACK_TOKEN")
SECRET_CM_KEYS = ("DB_PASSWORD", "api.token", "SMTP_PASSWORD", "client-secret", "PAYMENT_API_KEY", "session.secret",
                  "REDIS_PASSWD", "webhook_token")
#: Env names that carry an AWS key id without looking secret to the name-based rules.
AWS_KEY_ENV_NAMES = ("AWS_KEY_ID", "S3_KEY_ID", "UPLOADER_AWS_ID", "BACKUP_AWS_KEY_ID")
PEM_CM_KEYS = ("tls.key", "server.pem", "signing.pem", "client-key.pem", "jwt-signing.key")
HOST_PATHS = (("/var/log", "Directory"), ("/var/run/docker.sock", "Socket"), ("/etc", "Directory"),
              ("/proc", "Directory"), ("/var/lib/kubelet", "Directory"), ("/", "Directory"))
#: capabilities.drop lists that miss ALL but keep NET_RAW (so CKV_K8S_28 still passes).
PARTIAL_DROPS = (["NET_RAW"], ["MKNOD", "NET_RAW"], ["NET_RAW", "SYS_CHROOT"])


# --------------------------------------------------------------------------------------------------
# Container security context
# --------------------------------------------------------------------------------------------------
def _has_sc(c: Doc) -> bool:
    return isinstance(c.get("securityContext"), dict) and bool(c["securityContext"])


def _pod_has_sc(spec: Doc) -> bool:
    return isinstance(spec.get("securityContext"), dict) and bool(spec["securityContext"])


def _privileged(c: Doc, spec: Doc, rng: random.Random) -> None:
    sc(c)["privileged"] = True


def _escalation(c: Doc, spec: Doc, rng: random.Random) -> None:
    if rng.random() < 0.5:
        sc(c)["allowPrivilegeEscalation"] = True
    else:
        sc(c).pop("allowPrivilegeEscalation", None)


def _run_as_root(c: Doc, spec: Doc, rng: random.Random) -> None:
    """Three realistic ways to end up as root: an explicit uid 0, or no non-root guarantee at all. Every one
    also leaves the UID below 10000 (``k8s-low-uid``)."""
    variant = rng.randrange(3) if _pod_has_sc(spec) else 0
    if variant == 0:  # the container asks for uid 0
        sc(c).pop("runAsNonRoot", None)
        sc(c)["runAsUser"] = 0
        return
    pod = sc(spec)
    if variant == 1:  # the whole pod runs as root
        pod.pop("runAsNonRoot", None)
        pod["runAsUser"] = 0
    else:  # nobody says "non-root" (the image's USER decides)
        for key in ("runAsNonRoot", "runAsUser", "runAsGroup"):
            pod.pop(key, None)
    for other in containers(spec):
        (other.get("securityContext") or {}).pop("runAsNonRoot", None)


def _root_target(c: Doc) -> bool:
    return _has_sc(c) and sc(c).get("runAsUser") != 0


def _add_caps(c: Doc, spec: Doc, rng: random.Random) -> None:
    caps = sc(c).setdefault("capabilities", {})
    added = rng.sample(DANGEROUS_CAPS, rng.choice((1, 1, 2)))
    caps["add"] = sorted(set(caps.get("add", [])) | set(added))


def _adds_nothing(c: Doc) -> bool:
    return _has_sc(c) and not (sc(c).get("capabilities") or {}).get("add")


def _drops_all(c: Doc) -> bool:
    return "ALL" in ((c.get("securityContext") or {}).get("capabilities") or {}).get("drop", [])


def _partial_drop(c: Doc, spec: Doc, rng: random.Random) -> None:
    """Drop a hand-picked list instead of ALL: NET_RAW stays in it (its own rule is k8s-net-raw-not-dropped)."""
    sc(c)["capabilities"]["drop"] = list(rng.choice(PARTIAL_DROPS))


def _writable_root(c: Doc, spec: Doc, rng: random.Random) -> None:
    if rng.random() < 0.5:
        sc(c)["readOnlyRootFilesystem"] = False
    else:
        sc(c).pop("readOnlyRootFilesystem", None)


def _sc_is(key: str, value: Any) -> ContainerPred:
    return lambda c: (c.get("securityContext") or {}).get(key) == value


# --------------------------------------------------------------------------------------------------
# Container hygiene
# --------------------------------------------------------------------------------------------------
def _has_resource(part: str, kind: str) -> ContainerPred:
    return lambda c: kind in ((c.get("resources") or {}).get(part) or {})


def _drop_resource(part: str, kind: str) -> ContainerEdit:
    def edit(c: Doc, spec: Doc, rng: random.Random) -> None:
        res = c["resources"]
        del res[part][kind]
        if not res[part]:
            del res[part]
        if not res:
            del c["resources"]

    return edit


def _pinned(c: Doc) -> bool:
    last = str(c.get("image", "")).split("@", 1)[0].rsplit("/", 1)[-1]
    return ":" in last and not last.endswith(":latest")


def _unpin(c: Doc, spec: Doc, rng: random.Random) -> None:
    """``latest`` or no tag at all; the digest goes too (a digest pins the image whatever the tag says)."""
    image = strip_digest(c["image"])
    repo = image[: image.rfind(":")]
    c["image"] = repo + ":latest" if rng.random() < 0.5 else repo


def _has(key: str) -> ContainerPred:
    return lambda c: key in c


def _remove(key: str) -> ContainerEdit:
    def edit(c: Doc, spec: Doc, rng: random.Random) -> None:
        del c[key]

    return edit


def _secret_env(c: Doc, spec: Doc, rng: random.Random) -> None:
    """A literal credential in env: either a Secret that was mounted as files now pasted into a variable, or a
    new variable. (Variables that reference a Secret are left alone: they are another rule's finding.)"""
    env = c.setdefault("env", [])
    name = rng.choice(SECRET_ENV_NAMES)
    mounted = secret_mounts(c, spec)
    if mounted and rng.random() < 0.5:
        drop_secret_mount(c, spec, rng.choice(mounted))
    value = fake_password(rng) if "PASS" in name else fake_token(rng, rng.choice(("", "sk_live_", "ghp_", "xoxb-")))
    env.insert(rng.randint(0, len(env)), {"name": name, "value": value})


def _aws_key_env(c: Doc, spec: Doc, rng: random.Random) -> None:
    env = c.setdefault("env", [])
    env.insert(rng.randint(0, len(env)), {"name": rng.choice(AWS_KEY_ENV_NAMES), "value": fake_aws_key_id(rng)})


def _pem_env(c: Doc, spec: Doc, rng: random.Random) -> None:
    env = c.setdefault("env", [])
    env.append({"name": rng.choice(("TLS_KEY", "SIGNING_KEY_PEM", "SSH_KEY", "CLIENT_CERT_KEY")),
                "value": fake_pem(rng)})


def _host_port(c: Doc, spec: Doc, rng: random.Random) -> None:
    port = rng.choice(c["ports"])
    port["hostPort"] = port["containerPort"] if rng.random() < 0.6 else rng.choice((80, 443, 8080, 9100))


# --------------------------------------------------------------------------------------------------
# Pod spec
# --------------------------------------------------------------------------------------------------
def _set_pod(key: str) -> Callable[[Doc, random.Random], None]:
    def edit(spec: Doc, rng: random.Random) -> None:
        spec[key] = True

    return edit


def _hostpath(spec: Doc, rng: random.Random) -> None:
    path, type_ = rng.choice(HOST_PATHS)
    name = "host-" + (path.strip("/").replace("/", "-").replace(".", "-") or "root")
    spec.setdefault("volumes", []).append({"name": name, "hostPath": {"path": path, "type": type_}})
    c = rng.choice(spec["containers"])
    c.setdefault("volumeMounts", []).append({"name": name, "mountPath": "/host" + (path if path != "/" else ""),
                                             "readOnly": rng.random() < 0.5})


def _automount(spec: Doc, rng: random.Random) -> None:
    if rng.random() < 0.5:
        spec["automountServiceAccountToken"] = True
    else:
        del spec["automountServiceAccountToken"]


def _default_sa(spec: Doc, rng: random.Random) -> None:
    if rng.random() < 0.5:
        spec["serviceAccountName"] = "default"
    else:
        del spec["serviceAccountName"]


def _seccomp_ok(spec: Doc) -> bool:
    return ((spec.get("securityContext") or {}).get("seccompProfile") or {}).get("type") == "RuntimeDefault"


def _seccomp(spec: Doc, rng: random.Random) -> None:
    pod = sc(spec)
    if rng.random() < 0.4:
        pod["seccompProfile"] = {"type": "Unconfined"}
    else:
        del pod["seccompProfile"]


# --------------------------------------------------------------------------------------------------
# Objects
# --------------------------------------------------------------------------------------------------
def _is_role(doc: Doc) -> bool:
    return doc["kind"] in ("Role", "ClusterRole")


#: API groups of the rules other operators add (RBAC, admission webhooks, certificates): a wildcard there would
#: also grant bind/escalate/approve, other rules' findings.
SENSITIVE_GROUPS = frozenset({"rbac.authorization.k8s.io", "admissionregistration.k8s.io", "certificates.k8s.io"})


def _plain_rules(rules: list[Doc]) -> list[Doc]:
    return [r for r in rules if not SENSITIVE_GROUPS & set(r.get("apiGroups") or [])]


def _wild_verbs(doc: Doc, rng: random.Random) -> None:
    rng.choice(_plain_rules(doc["rules"]))["verbs"] = ["*"]


def _wild_resources(doc: Doc, rng: random.Random) -> None:
    rng.choice(_plain_rules(doc["rules"][1:]))["resources"] = ["*"]


def _cluster_admin(doc: Doc, rng: random.Random) -> None:
    doc["roleRef"] = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"}


def _cluster_admin_op() -> Operator:
    """Re-point a binding at cluster-admin; not a binding whose own role fails a graph check (re-pointing it
    would silence that finding, injected by another operator)."""

    def targets(base: K8sBase) -> list[str]:
        return [f"{d['kind']}/{d['metadata']['name']}" for d in base.docs
                if d["kind"] in ("RoleBinding", "ClusterRoleBinding") and d["roleRef"]["name"] != "cluster-admin"
                and not any(graph_rule_hits(r) for r in bound_roles(base.docs, d))]

    op = doc_op("k8s-cluster-admin-binding", lambda d: False, _cluster_admin)
    return Operator(op.rule_id, "kubernetes", targets, op.apply)


def _plain_service(doc: Doc) -> bool:
    spec = doc.get("spec") or {}
    return doc["kind"] == "Service" and spec.get("type") == "ClusterIP" and spec.get("clusterIP") != "None"


def _nodeport(doc: Doc, rng: random.Random) -> None:
    doc["spec"]["type"] = "NodePort"
    if rng.random() < 0.5:
        doc["spec"]["ports"][0]["nodePort"] = rng.randint(30000, 32767)


def _lb_ok(doc: Doc) -> bool:
    spec = doc.get("spec") or {}
    return _plain_service(doc) or (doc["kind"] == "Service" and spec.get("type") == "LoadBalancer"
                                   and bool(spec.get("loadBalancerSourceRanges")))


def _lb_open(doc: Doc, rng: random.Random) -> None:
    spec = doc["spec"]
    if spec["type"] == "LoadBalancer" and rng.random() < 0.5:
        spec["loadBalancerSourceRanges"] = ["0.0.0.0/0"]
        return
    spec["type"] = "LoadBalancer"
    spec.pop("loadBalancerSourceRanges", None)


def _no_tls(doc: Doc, rng: random.Random) -> None:
    del doc["spec"]["tls"]


def _cm_secret(doc: Doc, rng: random.Random) -> None:
    key = rng.choice(SECRET_CM_KEYS)
    value = fake_password(rng) if "PASS" in key.upper() else fake_token(rng)
    doc["data"][key] = value


def _cm_pem(doc: Doc, rng: random.Random) -> None:
    doc["data"][rng.choice(PEM_CM_KEYS)] = fake_pem(rng)


def _cm_aws(doc: Doc, rng: random.Random) -> None:
    doc["data"][rng.choice(("credentials", "aws.conf", "boto.cfg"))] = (
        f"[default]\naws_access_key_id = {fake_aws_key_id(rng)}\naws_secret_access_key = {fake_aws_secret(rng)}\n"
        f"region = {rng.choice(('eu-west-1', 'us-east-1', 'us-west-2'))}\n")


def _is_cm(doc: Doc) -> bool:
    return doc["kind"] == "ConfigMap"


def _missing_networkpolicy() -> Operator:
    """Delete every NetworkPolicy of a declared namespace that runs workloads (the fix adds them back). Its pods
    are then selected by no policy either (CKV2_K8S_6 on each workload: the spillover)."""

    def namespaces(base: K8sBase) -> list[str]:
        declared = {d["metadata"]["name"] for d in base.docs if d["kind"] == "Namespace"}
        with_workloads = {d["metadata"].get("namespace") for d, _ in workloads(base)}
        covered = {d["metadata"].get("namespace") for d in base.docs if d["kind"] == "NetworkPolicy"}
        return sorted(declared & with_workloads & covered)

    def targets(base: K8sBase) -> list[str]:
        return [f"Namespace/{ns}" for ns in namespaces(base)]

    def apply(base: K8sBase, resource: str, rng: random.Random) -> None:
        ns = resource.split("/", 1)[1]
        base.docs[:] = [d for d in base.docs if not (d["kind"] == "NetworkPolicy"
                                                     and d["metadata"].get("namespace") == ns)]

    return Operator("k8s-missing-networkpolicy", "kubernetes", targets, apply,
                    spillover=lambda base, resource: networkpolicy_spillover(base.docs, resource))


def _with_rbac_spillover(op: Operator) -> Operator:
    """The operator, with the RoleBindings its role edit makes fail CKV2_K8S_1-5 as spillover."""
    return Operator(op.rule_id, "kubernetes", op.targets, op.apply, op.also, rbac_spillover)


_JOBS = ("Job", "CronJob")


def core_operators() -> list[Operator]:
    """The operators of the core rules (Rego / semgrep), in catalog order."""
    always = lambda c: True  # noqa: E731 - a predicate for "any container"
    return [
        container_op("k8s-privileged-container", _sc_is("privileged", False), _privileged),
        container_op("k8s-privilege-escalation", _sc_is("allowPrivilegeEscalation", False), _escalation),
        container_op("k8s-run-as-root", _root_target, _run_as_root, also=("k8s-low-uid",),
                     init=False),  # CKV_K8S_40 (k8s-low-uid) ignores init containers
        container_op("k8s-added-capabilities", _adds_nothing, _add_caps, also=("k8s-any-capability-added",)),
        container_op("k8s-capabilities-not-dropped", _drops_all, _partial_drop),
        pod_op("k8s-host-network", lambda s: not s.get("hostNetwork"), _set_pod("hostNetwork")),
        pod_op("k8s-host-pid", lambda s: not s.get("hostPID"), _set_pod("hostPID")),
        pod_op("k8s-host-ipc", lambda s: not s.get("hostIPC"), _set_pod("hostIPC")),
        pod_op("k8s-hostpath-volume", lambda s: not any("hostPath" in v for v in s.get("volumes", [])), _hostpath),
        container_op("k8s-host-port", lambda c: bool(c.get("ports")) and not any(
            "hostPort" in p for p in c["ports"]), _host_port, init=False),
        container_op("k8s-writable-root-fs", _sc_is("readOnlyRootFilesystem", True), _writable_root),
        container_op("k8s-missing-cpu-limit", _has_resource("limits", "cpu"), _drop_resource("limits", "cpu")),
        container_op("k8s-missing-memory-limit", _has_resource("limits", "memory"),
                     _drop_resource("limits", "memory")),
        container_op("k8s-missing-cpu-request", _has_resource("requests", "cpu"), _drop_resource("requests", "cpu")),
        container_op("k8s-missing-memory-request", _has_resource("requests", "memory"),
                     _drop_resource("requests", "memory")),
        container_op("k8s-latest-image-tag", _pinned, _unpin, also=(DIGEST,)),
        container_op("k8s-missing-liveness-probe", _has("livenessProbe"), _remove("livenessProbe"), init=False,
                     skip_kinds=_JOBS),
        container_op("k8s-missing-readiness-probe", _has("readinessProbe"), _remove("readinessProbe"), init=False,
                     skip_kinds=_JOBS),
        container_op("k8s-secret-in-env", always, _secret_env),
        pod_op("k8s-sa-token-automount", lambda s: s.get("automountServiceAccountToken") is False, _automount),
        pod_op("k8s-default-service-account", lambda s: s.get("serviceAccountName") not in (None, "default"),
               _default_sa),
        pod_op("k8s-seccomp-not-set", _seccomp_ok, _seccomp),
        _with_rbac_spillover(doc_op("k8s-rbac-wildcard-verbs", lambda d: _is_role(d) and bool(
            _plain_rules(d["rules"])), _wild_verbs)),
        _with_rbac_spillover(doc_op("k8s-rbac-wildcard-resources", lambda d: _is_role(d) and bool(
            _plain_rules(d["rules"][1:])), _wild_resources)),
        _cluster_admin_op(),
        doc_op("k8s-nodeport-service", _plain_service, _nodeport),
        doc_op("k8s-loadbalancer-unrestricted", _lb_ok, _lb_open),
        doc_op("k8s-ingress-no-tls", lambda d: d["kind"] == "Ingress" and "tls" in d["spec"], _no_tls),
        _missing_networkpolicy(),
        doc_op("k8s-secret-in-configmap", _is_cm, _cm_secret),
        removed_api_version_operator(),
        either("cfg-hardcoded-private-key", doc_op("cfg-hardcoded-private-key", _is_cm, _cm_pem),
               container_op("cfg-hardcoded-private-key", always, _pem_env, init=False)),
        either("cfg-hardcoded-aws-key", doc_op("cfg-hardcoded-aws-key", _is_cm, _cm_aws),
               container_op("cfg-hardcoded-aws-key", always, _aws_key_env, init=False)),
    ]


def kubernetes_operators() -> list[Operator]:
    """Every Kubernetes operator: the core rules' first (catalog order), then the Checkov-backed ones."""
    return [*core_operators(), *checkov_operators()]
