"""Mutation operators for Kubernetes bases: one per catalog rule, each injecting one misconfiguration.

Every operator is *precise*: it changes exactly the field its rule is about, in a way that both the Rego
library and any mapped Checkov check agree on, and it keeps the manifest valid under the strict schema.
Where two rules share a field (``capabilities.add`` vs ``capabilities.drop``) the operators edit
disjoint keys so they can be combined in one item. Some choices exist only to stay precise:

* wildcard *resources* go into a rule other than the first, because Checkov's CKV_K8S_49 (mapped to the
  wildcard-*verbs* rule) looks at the first rule's resources too and would add a second finding;
* the AWS key is planted in an env var or ConfigMap key whose *name* is not secret-like, so it does not
  also trigger the secret-in-env / secret-in-ConfigMap rules.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

from security_verifiers.engines.configs import POD_SPEC_PATHS
from security_verifiers.envs.config_audit.generation.mutation_kit import (
    Operator,
    fake_aws_key_id,
    fake_aws_secret,
    fake_password,
    fake_pem,
    fake_token,
)
from security_verifiers.envs.config_audit.generation.templates_k8s import K8sBase

Doc = dict[str, Any]
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


# --------------------------------------------------------------------------------------------------
# Navigation
# --------------------------------------------------------------------------------------------------
def resource_of(doc: Doc) -> str:
    return f"{doc['kind']}/{doc['metadata']['name']}"


def find(base: K8sBase, resource: str) -> Doc:
    for doc in base.docs:
        if resource_of(doc) == resource:
            return doc
    raise KeyError(resource)


def pod_spec(doc: Doc) -> Doc | None:
    path = POD_SPEC_PATHS.get(doc["kind"])
    if path is None:
        return None
    node: Any = doc
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else None


def workloads(base: K8sBase) -> Iterator[tuple[Doc, Doc]]:
    for doc in base.docs:
        spec = pod_spec(doc)
        if spec is not None:
            yield doc, spec


def containers(spec: Doc, init: bool = True) -> list[Doc]:
    keys = ("initContainers", "containers") if init else ("containers",)
    return [c for key in keys for c in spec.get(key) or []]


def _sc(c: Doc) -> Doc:
    return c.setdefault("securityContext", {})


# --------------------------------------------------------------------------------------------------
# Operator factories
# --------------------------------------------------------------------------------------------------
ContainerPred = Callable[[Doc], bool]
ContainerEdit = Callable[[Doc, Doc, random.Random], None]  # (container, pod spec, rng)


def container_op(rule_id: str, eligible: ContainerPred, edit: ContainerEdit, init: bool = True,
                 skip_kinds: tuple[str, ...] = ()) -> Operator:
    """An operator that edits one eligible container of one workload."""

    def targets(base: K8sBase) -> list[str]:
        return [resource_of(d) for d, spec in workloads(base)
                if d["kind"] not in skip_kinds and any(eligible(c) for c in containers(spec, init))]

    def apply(base: K8sBase, resource: str, rng: random.Random) -> None:
        spec = pod_spec(find(base, resource))
        assert spec is not None
        chosen = rng.choice([c for c in containers(spec, init) if eligible(c)])
        edit(chosen, spec, rng)

    return Operator(rule_id, "kubernetes", targets, apply)


def pod_op(rule_id: str, eligible: Callable[[Doc], bool], edit: Callable[[Doc, random.Random], None]) -> Operator:
    """An operator that edits the pod spec of one workload."""

    def targets(base: K8sBase) -> list[str]:
        return [resource_of(d) for d, spec in workloads(base) if eligible(spec)]

    def apply(base: K8sBase, resource: str, rng: random.Random) -> None:
        spec = pod_spec(find(base, resource))
        assert spec is not None
        edit(spec, rng)

    return Operator(rule_id, "kubernetes", targets, apply)


def doc_op(rule_id: str, eligible: Callable[[Doc], bool], edit: Callable[[Doc, random.Random], None]) -> Operator:
    """An operator that edits one whole object (Service, Ingress, Role, binding, ConfigMap)."""

    def targets(base: K8sBase) -> list[str]:
        return [resource_of(d) for d in base.docs if eligible(d)]

    def apply(base: K8sBase, resource: str, rng: random.Random) -> None:
        edit(find(base, resource), rng)

    return Operator(rule_id, "kubernetes", targets, apply)


# --------------------------------------------------------------------------------------------------
# Container security context
# --------------------------------------------------------------------------------------------------
def _privileged(c: Doc, spec: Doc, rng: random.Random) -> None:
    _sc(c)["privileged"] = True


def _escalation(c: Doc, spec: Doc, rng: random.Random) -> None:
    if rng.random() < 0.5:
        _sc(c)["allowPrivilegeEscalation"] = True
    else:
        _sc(c).pop("allowPrivilegeEscalation", None)


def _root_ok(c: Doc) -> bool:
    sc = c.get("securityContext") or {}
    return sc.get("runAsUser") != 0


def _run_as_root(c: Doc, spec: Doc, rng: random.Random) -> None:
    """Three realistic ways to end up as root: an explicit uid 0, or no non-root guarantee at all."""
    variant = rng.randrange(3)
    sc = _sc(c)
    if variant == 0:  # the container asks for uid 0
        sc.pop("runAsNonRoot", None)
        sc["runAsUser"] = 0
    elif variant == 1:  # the whole pod runs as root
        pod = spec.setdefault("securityContext", {})
        pod.pop("runAsNonRoot", None)
        pod["runAsUser"] = 0
        for other in containers(spec):
            _sc(other).pop("runAsNonRoot", None)
    else:  # nobody says "non-root" (the image's USER decides)
        pod = spec.setdefault("securityContext", {})
        for key in ("runAsNonRoot", "runAsUser", "runAsGroup"):
            pod.pop(key, None)
        for other in containers(spec):
            _sc(other).pop("runAsNonRoot", None)


def _add_caps(c: Doc, spec: Doc, rng: random.Random) -> None:
    caps = _sc(c).setdefault("capabilities", {})
    added = rng.sample(DANGEROUS_CAPS, rng.choice((1, 1, 2)))
    caps["add"] = sorted(set(caps.get("add", [])) | set(added))


def _drops_all(c: Doc) -> bool:
    return "ALL" in ((c.get("securityContext") or {}).get("capabilities") or {}).get("drop", [])


def _no_drop(c: Doc, spec: Doc, rng: random.Random) -> None:
    caps = _sc(c)["capabilities"]
    if rng.random() < 0.5:
        caps["drop"] = rng.choice((["NET_RAW"], ["MKNOD", "NET_RAW"], ["SETUID", "SETGID"]))
    else:
        del caps["drop"]
        if not caps:
            del _sc(c)["capabilities"]


def _writable_root(c: Doc, spec: Doc, rng: random.Random) -> None:
    if rng.random() < 0.5:
        _sc(c)["readOnlyRootFilesystem"] = False
    else:
        _sc(c).pop("readOnlyRootFilesystem", None)


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
    last = str(c.get("image", "")).rsplit("/", 1)[-1]
    return ":" in last and not last.endswith(":latest")


def _unpin(c: Doc, spec: Doc, rng: random.Random) -> None:
    image = c["image"]
    repo = image[: image.rfind(":")]
    c["image"] = repo + ":latest" if rng.random() < 0.5 else repo


def _has(key: str) -> ContainerPred:
    return lambda c: key in c


def _remove(key: str) -> ContainerEdit:
    def edit(c: Doc, spec: Doc, rng: random.Random) -> None:
        del c[key]

    return edit


def _secret_env(c: Doc, spec: Doc, rng: random.Random) -> None:
    """A literal credential: either a new variable, or a secretKeyRef replaced by its value."""
    env = c.setdefault("env", [])
    refs = [e for e in env if "valueFrom" in e and "secretKeyRef" in e["valueFrom"]]
    if refs and rng.random() < 0.5:
        entry = rng.choice(refs)
        del entry["valueFrom"]
        entry["value"] = fake_password(rng)
        return
    name = rng.choice(SECRET_ENV_NAMES)
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
    sc = spec["securityContext"]
    if rng.random() < 0.4:
        sc["seccompProfile"] = {"type": "Unconfined"}
    else:
        del sc["seccompProfile"]


# --------------------------------------------------------------------------------------------------
# Objects
# --------------------------------------------------------------------------------------------------
def _is_role(doc: Doc) -> bool:
    return doc["kind"] in ("Role", "ClusterRole")


def _wild_verbs(doc: Doc, rng: random.Random) -> None:
    rng.choice(doc["rules"])["verbs"] = ["*"]


def _wild_resources(doc: Doc, rng: random.Random) -> None:
    rng.choice(doc["rules"][1:])["resources"] = ["*"]


def _cluster_admin(doc: Doc, rng: random.Random) -> None:
    doc["roleRef"] = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"}


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
    """Delete every NetworkPolicy of a declared namespace that runs workloads (the fix adds them back)."""

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

    return Operator("k8s-missing-networkpolicy", "kubernetes", targets, apply)


def _either(rule_id: str, *ops: Operator) -> Operator:
    """One rule, several ways to break it (an env var or a ConfigMap key, say): pick among applicable ones."""

    def targets(base: K8sBase) -> list[str]:
        return sorted({t for op in ops for t in op.targets(base)})

    def apply(base: K8sBase, resource: str, rng: random.Random) -> None:
        usable = [op for op in ops if resource in op.targets(base)]
        rng.choice(usable).apply(base, resource, rng)

    return Operator(rule_id, "kubernetes", targets, apply)


_JOBS = ("Job", "CronJob")


def kubernetes_operators() -> list[Operator]:
    """Every Kubernetes operator, in catalog order."""
    always = lambda c: True  # noqa: E731 - a predicate for "any container"
    return [
        container_op("k8s-privileged-container", _sc_is("privileged", False), _privileged),
        container_op("k8s-privilege-escalation", _sc_is("allowPrivilegeEscalation", False), _escalation),
        container_op("k8s-run-as-root", _root_ok, _run_as_root),
        container_op("k8s-added-capabilities", lambda c: not (c.get("securityContext") or {}).get(
            "capabilities", {}).get("add"), _add_caps),
        container_op("k8s-capabilities-not-dropped", _drops_all, _no_drop),
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
        container_op("k8s-latest-image-tag", _pinned, _unpin),
        container_op("k8s-missing-liveness-probe", _has("livenessProbe"), _remove("livenessProbe"), init=False,
                     skip_kinds=_JOBS),
        container_op("k8s-missing-readiness-probe", _has("readinessProbe"), _remove("readinessProbe"), init=False,
                     skip_kinds=_JOBS),
        container_op("k8s-secret-in-env", always, _secret_env),
        pod_op("k8s-sa-token-automount", lambda s: s.get("automountServiceAccountToken") is False, _automount),
        pod_op("k8s-default-service-account", lambda s: s.get("serviceAccountName") not in (None, "default"),
               _default_sa),
        pod_op("k8s-seccomp-not-set", _seccomp_ok, _seccomp),
        doc_op("k8s-rbac-wildcard-verbs", _is_role, _wild_verbs),
        doc_op("k8s-rbac-wildcard-resources", lambda d: _is_role(d) and len(d["rules"]) > 1, _wild_resources),
        doc_op("k8s-cluster-admin-binding", lambda d: d["kind"] in ("RoleBinding", "ClusterRoleBinding")
               and d["roleRef"]["name"] != "cluster-admin", _cluster_admin),
        doc_op("k8s-nodeport-service", _plain_service, _nodeport),
        doc_op("k8s-loadbalancer-unrestricted", _lb_ok, _lb_open),
        doc_op("k8s-ingress-no-tls", lambda d: d["kind"] == "Ingress" and "tls" in d["spec"], _no_tls),
        _missing_networkpolicy(),
        doc_op("k8s-secret-in-configmap", _is_cm, _cm_secret),
        _either("cfg-hardcoded-private-key", doc_op("cfg-hardcoded-private-key", _is_cm, _cm_pem),
                container_op("cfg-hardcoded-private-key", always, _pem_env, init=False)),
        _either("cfg-hardcoded-aws-key", doc_op("cfg-hardcoded-aws-key", _is_cm, _cm_aws),
                container_op("cfg-hardcoded-aws-key", always, _aws_key_env, init=False)),
    ]
