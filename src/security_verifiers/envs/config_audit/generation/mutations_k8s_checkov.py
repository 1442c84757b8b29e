"""Mutation operators for Kubernetes rules that Checkov alone implements (``engine: checkov`` in the catalog).

Each one injects a realistic, security-relevant misconfiguration that the pinned Checkov reports on exactly one
resource: an image no longer pinned by digest or cached on the node, a Secret exposed as an environment variable,
a UID below 10000, a pod without its securityContext, a capability added back, NET_RAW kept, RBAC that can bind,
escalate, approve certificates, rewrite admission webhooks, read every Secret, exec into pods, impersonate or
patch service status, a binding to the default ServiceAccount, an ingress-nginx snippet annotation, a git-sync
binary override, a workload moved to the default namespace or left outside every NetworkPolicy.

Not here: a container without securityContext (CKV_K8S_30). Removing it necessarily fails four more rules
(privilege escalation, writable root, capabilities and NET_RAW not dropped): five findings, more than an item's
mutation budget. Its fixer exists (:mod:`..autofix.kubernetes_checkov`).

Precision rests on the same discipline as the core operators (:mod:`.mutations_k8s`): an edit that necessarily
violates another rule says so (``also`` on the same resource; ``spillover`` for what Checkov's graph checks then
report on other objects, predicted by :mod:`.mutations_k8s_graph`), and an operator leaves alone what another
operator of the same item may have injected (RBAC graph checks only judge one-rule roles, so the operators that
append rules only touch roles with several).
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable

from security_verifiers.envs.config_audit.generation.mutation_kit import Operator
from security_verifiers.envs.config_audit.generation.mutations_k8s_graph import (
    BINDING_KINDS,
    ROLE_KINDS,
    bound_roles,
    graph_pod_labels,
    graph_rule_hits,
    rbac_graph_findings,
    selects,
    unselected_pods,
)
from security_verifiers.envs.config_audit.generation.mutations_k8s_kit import (
    Doc,
    container_op,
    containers,
    doc_op,
    either,
    find,
    pod_op,
    resource_of,
    sc,
    workloads,
)
from security_verifiers.envs.config_audit.generation.templates_k8s import K8sBase

DIGEST = "k8s-image-not-pinned-by-digest"
#: Kinds CKV_K8S_21 judges (the default ServiceAccount and the kubernetes Service aside).
DEFAULT_NS_KINDS = frozenset({"Pod", "Deployment", "DaemonSet", "StatefulSet", "ReplicaSet", "ReplicationController",
                              "Job", "CronJob", "Service", "Secret", "ServiceAccount", "Role", "RoleBinding",
                              "ConfigMap", "Ingress"})
#: Capabilities a container may plausibly ask for that are not in the dangerous set of k8s-added-capabilities.
BENIGN_CAPS = ("NET_BIND_SERVICE", "CHOWN", "SETUID", "SETGID", "FOWNER", "KILL")
#: capabilities.drop lists that drop neither ALL nor NET_RAW.
NET_RAW_KEPT = (["MKNOD"], ["SETUID", "SETGID"], ["KILL", "MKNOD"], ["SYS_CHROOT"])
LOW_UIDS = (1000, 1001, 999, 101, 5000)
REF_ENV_NAMES = (("DATABASE_PASSWORD", "password"), ("API_TOKEN", "token"), ("SMTP_PASSWORD", "password"),
                 ("OAUTH_CLIENT_SECRET", "client-secret"), ("REDIS_PASSWORD", "password"))
GIT_WRAPPERS = ("/usr/local/bin/git-wrapper.sh", "/git-tools/git", "/opt/git/bin/git")
RBAC_GROUP = "rbac.authorization.k8s.io"
SNIPPETS = ('more_set_headers "X-Frame-Options: DENY";\nmore_set_headers "X-Content-Type-Options: nosniff";\n',
            'proxy_set_header X-Request-Start "t=${msec}";\n',
            'if ($http_user_agent ~* "(curl|wget)") {\n  return 403;\n}\n')
ALIAS_SNIPPETS = ("location /static/ {\n  alias /var/www/static/;\n  expires 7d;\n}\n",
                  "location /downloads/ {\n  alias /srv/files/;\n}\n")
LUA_SNIPPETS = ('access_by_lua_block {\n  if ngx.var.http_x_internal ~= "1" then\n'
                "    return ngx.exit(ngx.HTTP_FORBIDDEN)\n  end\n}\n",
                'header_filter_by_lua_block {\n  ngx.header["Server"] = nil\n}\n')
SNIPPET_PREFIX = "nginx.ingress.kubernetes.io/"


def strip_digest(image: str) -> str:
    return image.split("@", 1)[0]


def rbac_spillover(base: K8sBase, resource: str) -> list[tuple[str, str]]:
    """Every binding that now fails a CKV2_K8S_1-5 graph check (the RBAC operators' spillover)."""
    return sorted(rbac_graph_findings(base.docs))


# --------------------------------------------------------------------------------------------------
# Images
# --------------------------------------------------------------------------------------------------
def _digest_always(c: Doc) -> bool:
    return "@" in str(c.get("image", "")) and c.get("imagePullPolicy") == "Always"


def _drop_digest(c: Doc, spec: Doc, rng: random.Random) -> None:
    c["image"] = strip_digest(c["image"])


def _pull_if_not_present(c: Doc, spec: Doc, rng: random.Random) -> None:
    """Cache the image on the node: a pod can then start from an image it is no longer allowed to pull. Only an
    image without digest can fail the check, so the digest goes too."""
    c["image"] = strip_digest(c["image"])
    c["imagePullPolicy"] = "IfNotPresent"


# --------------------------------------------------------------------------------------------------
# Security contexts
# --------------------------------------------------------------------------------------------------
def _has_sc(c: Doc) -> bool:
    return isinstance(c.get("securityContext"), dict) and bool(c["securityContext"])


def _adds_nothing(c: Doc) -> bool:
    return _has_sc(c) and not (sc(c).get("capabilities") or {}).get("add")


def _add_benign_caps(c: Doc, spec: Doc, rng: random.Random) -> None:
    sc(c).setdefault("capabilities", {})["add"] = sorted(rng.sample(BENIGN_CAPS, rng.choice((1, 1, 2))))


def _drops_net_raw(c: Doc) -> bool:
    drop = ((c.get("securityContext") or {}).get("capabilities") or {}).get("drop") or []
    return "ALL" in drop or "NET_RAW" in drop


def _keep_net_raw(c: Doc, spec: Doc, rng: random.Random) -> None:
    caps = sc(c)["capabilities"]
    if rng.random() < 0.6:
        caps["drop"] = list(rng.choice(NET_RAW_KEPT))
        return
    del caps["drop"]
    if not caps:
        del sc(c)["capabilities"]


def _pod_uid_ok(spec: Doc) -> bool:
    """A pod-level UID of 10000 or more that no container overrides."""
    uid = (spec.get("securityContext") or {}).get("runAsUser")
    return isinstance(uid, int) and uid >= 10000 and all(
        "runAsUser" not in (c.get("securityContext") or {}) for c in containers(spec))


def _low_pod_uid(spec: Doc, rng: random.Random) -> None:
    uid = rng.choice(LOW_UIDS)
    for key in ("runAsUser", "runAsGroup", "fsGroup"):
        if key in sc(spec):
            sc(spec)[key] = uid


def _low_container_uid(c: Doc, spec: Doc, rng: random.Random) -> None:
    sc(c)["runAsUser"] = rng.choice(LOW_UIDS)


def _pod_sc_removable(spec: Doc) -> bool:
    """The pod's context is the hardened one and every container says runAsNonRoot itself (so removing the pod's
    context loses the UID and seccomp settings, not the non-root guarantee)."""
    pod = spec.get("securityContext") or {}
    uid = pod.get("runAsUser")
    return (pod.get("runAsNonRoot") is True and isinstance(uid, int) and uid >= 10000
            and (pod.get("seccompProfile") or {}).get("type") == "RuntimeDefault"
            and all((c.get("securityContext") or {}).get("runAsNonRoot") is True
                    and "runAsUser" not in c["securityContext"] for c in containers(spec)))


def _drop_pod_sc(spec: Doc, rng: random.Random) -> None:
    del spec["securityContext"]


# --------------------------------------------------------------------------------------------------
# Secrets and environment
# --------------------------------------------------------------------------------------------------
def secret_mounts(c: Doc, spec: Doc) -> list[Doc]:
    """The container's mounts of Secret volumes."""
    secret_volumes = {v["name"] for v in spec.get("volumes") or [] if "secret" in v}
    return [m for m in c.get("volumeMounts") or [] if m.get("name") in secret_volumes]


def drop_secret_mount(c: Doc, spec: Doc, mount: Doc) -> str:
    """Remove ``mount`` from the container (and its volume when no other container mounts it); the Secret's name."""
    c["volumeMounts"].remove(mount)
    volume = next(v for v in spec["volumes"] if v["name"] == mount["name"])
    if not any(m.get("name") == volume["name"] for other in containers(spec) for m in other.get("volumeMounts") or []):
        spec["volumes"].remove(volume)
    return str(volume["secret"]["secretName"])


def _secret_as_env(c: Doc, spec: Doc, rng: random.Random) -> None:
    """A Secret handed to the container as environment variables instead of files: the mounted Secret moved to
    a secretKeyRef, a whole Secret loaded with envFrom, or a new variable referencing one."""
    mounted = secret_mounts(c, spec)
    variant = rng.randrange(3)
    name, key = rng.choice(REF_ENV_NAMES)
    if mounted and variant == 0:
        secret = drop_secret_mount(c, spec, rng.choice(mounted))
    elif variant == 1:
        c.setdefault("envFrom", []).append({"secretRef": {"name": f"{c['name']}-env"}})
        return
    else:
        secret = f"{c['name']}-credentials"
    env = c.setdefault("env", [])
    env.insert(rng.randint(0, len(env)), {"name": name, "valueFrom": {"secretKeyRef": {"name": secret, "key": key}}})


def _runs_git_sync(c: Doc) -> bool:
    names = {e.get("name") for e in c.get("env") or []}
    return "GITSYNC_REPO" in names and "GITSYNC_GIT" not in names


def _git_override(c: Doc, spec: Doc, rng: random.Random) -> None:
    c["env"].append({"name": "GITSYNC_GIT", "value": rng.choice(GIT_WRAPPERS)})


# --------------------------------------------------------------------------------------------------
# Namespaces and NetworkPolicies
# --------------------------------------------------------------------------------------------------
def _default_namespace_op() -> Operator:
    """Drop an object's namespace (or name ``default``). Not a workload of a namespace the file declares: the
    Namespace's own NetworkPolicy finding depends on the workloads it holds."""

    def targets(base: K8sBase) -> list[str]:
        declared = {d["metadata"]["name"] for d in base.docs if d["kind"] == "Namespace"}
        workload_kinds = {d["kind"] for d, _ in workloads(base)}
        return [resource_of(d) for d in base.docs if d["kind"] in DEFAULT_NS_KINDS
                and d["metadata"].get("namespace") not in (None, "default")
                and not (d["kind"] in workload_kinds and d["metadata"]["namespace"] in declared)]

    def apply(base: K8sBase, resource: str, rng: random.Random) -> None:
        meta = find(base, resource)["metadata"]
        if rng.random() < 0.5:
            del meta["namespace"]
        else:
            meta["namespace"] = "default"

    return Operator("k8s-default-namespace", "kubernetes", targets, apply)


def _drifted(docs: list[Doc], resource: str, rng: random.Random | None) -> list[Doc] | None:
    """``docs`` (a copy) where the NetworkPolicies selecting ``resource``'s pods no longer do (their selector still
    names the legacy ``app`` label, or, where no namespace loses its last policy, the policy is deleted); None when
    that would also leave another pod unselected or when a policy selecting every pod covers it."""
    out = copy.deepcopy(docs)
    doc = next(d for d in out if resource_of(d) == resource)
    labels = graph_pod_labels(doc)
    if labels is None or "app.kubernetes.io/name" not in labels:
        return None
    policies = [p for p in out if p["kind"] == "NetworkPolicy" and selects(p, labels)]
    if not policies or any(not p["spec"]["podSelector"].get("matchLabels") for p in policies):
        return None
    declared = {d["metadata"]["name"] for d in out if d["kind"] == "Namespace"}
    for policy in policies:
        ns = policy["metadata"].get("namespace")
        siblings = [p for p in out if p["kind"] == "NetworkPolicy" and not any(p is q for q in policies)
                    and p["metadata"].get("namespace") == ns]
        if rng is not None and rng.random() < 0.5 and (ns not in declared or siblings):
            out.remove(policy)
        else:
            policy["spec"]["podSelector"] = {"matchLabels": {"app": labels["app.kubernetes.io/name"]}}
    before = set(unselected_pods(docs))
    return out if set(unselected_pods(out)) - before == {resource} else None


def _pod_without_policy_op() -> Operator:
    def targets(base: K8sBase) -> list[str]:
        before = set(unselected_pods(base.docs))
        return [resource_of(d) for d in base.docs if graph_pod_labels(d) is not None
                and resource_of(d) not in before and _drifted(base.docs, resource_of(d), None) is not None]

    def apply(base: K8sBase, resource: str, rng: random.Random) -> None:
        drifted = _drifted(base.docs, resource, rng)
        if drifted is None:  # the random deletion would strand a namespace: drift the selector instead
            drifted = _drifted(base.docs, resource, None)
        assert drifted is not None
        base.docs[:] = drifted

    return Operator("k8s-pod-no-networkpolicy", "kubernetes", targets, apply)


# --------------------------------------------------------------------------------------------------
# RBAC
# --------------------------------------------------------------------------------------------------
def _role_op(rule_id: str, kinds: tuple[str, ...], rules: Callable[[str], list[Doc]]) -> Operator:
    """Append ``rules(kind)`` to a role of ``kinds`` that has several rules already (so what the one-rule graph
    checks see cannot change) and none in the same API group yet."""
    group = rules(kinds[0])[0]["apiGroups"][0]

    def eligible(doc: Doc) -> bool:
        return (doc["kind"] in kinds and len(doc.get("rules") or []) >= 2
                and not any(group in (r.get("apiGroups") or []) for r in doc["rules"]))

    def edit(doc: Doc, rng: random.Random) -> None:
        doc["rules"].extend(rules(doc["kind"]))

    op = doc_op(rule_id, eligible, edit)
    return Operator(op.rule_id, "kubernetes", op.targets, op.apply, spillover=rbac_spillover)


def _rbac_rule(group: str, resources: list[str], verbs: list[str]) -> Doc:
    return {"apiGroups": [group], "resources": resources, "verbs": verbs}


def _bind_rules(kind: str) -> list[Doc]:
    """Manage (Cluster)RoleBindings and bind the roles they grant: a tenant or namespace operator's classic rule."""
    cluster = ["clusterrolebindings", "clusterroles"] if kind == "ClusterRole" else []
    return [_rbac_rule(RBAC_GROUP, ["rolebindings", "roles", *cluster], ["get", "list", "create", "update", "bind"])]


def _escalate_rules(kind: str) -> list[Doc]:
    cluster = ["clusterroles"] if kind == "ClusterRole" else []
    return [_rbac_rule(RBAC_GROUP, ["roles", *cluster], ["get", "list", "watch", "create", "update", "patch",
                                                         "escalate"])]


def _webhook_rules(kind: str) -> list[Doc]:
    """Patch admission webhook configurations (a CA-injector's rule): enough to disable or hijack admission."""
    return [_rbac_rule("admissionregistration.k8s.io", ["validatingwebhookconfigurations",
                                                        "mutatingwebhookconfigurations"],
                       ["get", "list", "watch", "update", "patch"])]


def _csr_rules(kind: str) -> list[Doc]:
    """Approve CertificateSigningRequests for any signer (kubernetes.io/kube-apiserver-client included)."""
    group = "certificates.k8s.io"
    return [_rbac_rule(group, ["certificatesigningrequests"], ["get", "list", "watch"]),
            _rbac_rule(group, ["certificatesigningrequests/approval"], ["update"]),
            _rbac_rule(group, ["signers"], ["approve"])]


def _role_can_bind(role: Doc) -> bool:
    """Whether CKV_K8S_157 (k8s-rbac-bind-permission) fails the role: one rule grants bind on role bindings."""
    def grants(rule: Doc, key: str, wanted: set[str]) -> bool:
        return bool(set(rule.get(key) or []) & (wanted | {"*"}))

    return any(grants(r, "apiGroups", {RBAC_GROUP}) and grants(r, "verbs", {"bind"})
               and grants(r, "resources", {"rolebindings", "clusterrolebindings"}) for r in role.get("rules") or [])


def _graph_op(rule_id: str, resources: tuple[str, ...], verbs: tuple[str, ...], groups: tuple[str, ...] = ()
              ) -> Operator:
    """Widen the one rule of the role a ServiceAccount binding references: the binding now fails ``rule_id``
    (CKV2_K8S_1-5), and so does any other binding of that role; a role that can now bind role bindings also
    fails CKV_K8S_157 itself (spillover)."""

    def role_of(base: K8sBase, binding: Doc) -> Doc | None:
        subjects = binding.get("subjects") or []
        if not subjects or any(s.get("kind") != "ServiceAccount" for s in subjects):
            return None
        roles = bound_roles(base.docs, binding)
        if len(roles) != 1 or len(roles[0].get("rules") or []) != 1 or rule_id in graph_rule_hits(roles[0]):
            return None
        return roles[0]

    def targets(base: K8sBase) -> list[str]:
        return [resource_of(d) for d in base.docs if d["kind"] in BINDING_KINDS and role_of(base, d) is not None]

    def apply(base: K8sBase, resource: str, rng: random.Random) -> None:
        role = role_of(base, find(base, resource))
        assert role is not None
        rule = role["rules"][0]
        rule["apiGroups"] = [*rule["apiGroups"], *(g for g in groups if g not in rule["apiGroups"])]
        rule["resources"] = [*rule["resources"], *(r for r in resources if r not in rule["resources"])]
        rule["verbs"] = [*rule["verbs"], *(v for v in verbs if v not in rule["verbs"])]

    def spillover(base: K8sBase, resource: str) -> list[tuple[str, str]]:
        pairs = rbac_spillover(base, resource)
        pairs += [("k8s-rbac-bind-permission", resource_of(r)) for r in base.docs
                  if r["kind"] in ROLE_KINDS and _role_can_bind(r)]
        return sorted(set(pairs))

    return Operator(rule_id, "kubernetes", targets, apply, spillover=spillover)


def _sa_subject(doc: Doc) -> bool:
    return doc["kind"] in BINDING_KINDS and any(s.get("kind") == "ServiceAccount" and s.get("name") != "default"
                                                for s in doc.get("subjects") or [])


def _bind_default_sa(doc: Doc, rng: random.Random) -> None:
    subject = rng.choice([s for s in doc["subjects"] if s.get("kind") == "ServiceAccount"])
    subject["name"] = "default"


# --------------------------------------------------------------------------------------------------
# Ingress annotations
# --------------------------------------------------------------------------------------------------
def _annotations(doc: Doc) -> dict[str, str]:
    annotations: dict[str, str] = doc["metadata"].setdefault("annotations", {})
    return annotations


def _snippet_keys(doc: Doc) -> set[str]:
    return {k for k in (doc["metadata"].get("annotations") or {}) if "snippet" in k}


def _add_snippet(key: str, texts: tuple[str, ...]) -> Callable[[Doc, random.Random], None]:
    """Set (or extend) the ``key`` snippet annotation with one of ``texts``."""

    def edit(doc: Doc, rng: random.Random) -> None:
        annotations = _annotations(doc)
        annotations[SNIPPET_PREFIX + key] = annotations.get(SNIPPET_PREFIX + key, "") + rng.choice(texts)

    return edit


def _plain_snippet(doc: Doc, rng: random.Random) -> None:
    free = [k for k in ("configuration-snippet", "server-snippet") if SNIPPET_PREFIX + k not in _snippet_keys(doc)]
    _annotations(doc)[SNIPPET_PREFIX + rng.choice(free)] = rng.choice(SNIPPETS)


def _is_ingress(doc: Doc) -> bool:
    return doc["kind"] == "Ingress"


def checkov_operators() -> list[Operator]:
    """The operators of Checkov-only rules."""
    return [
        container_op(DIGEST, _digest_always, _drop_digest),
        container_op("k8s-image-pull-policy-not-always", lambda c: c.get("imagePullPolicy") == "Always",
                     _pull_if_not_present, also=(DIGEST,)),
        _default_namespace_op(),
        container_op("k8s-any-capability-added", _adds_nothing, _add_benign_caps),
        container_op("k8s-net-raw-not-dropped", _drops_net_raw, _keep_net_raw,
                     also=("k8s-capabilities-not-dropped",)),
        either("k8s-low-uid", pod_op("k8s-low-uid", _pod_uid_ok, _low_pod_uid),
               container_op("k8s-low-uid", lambda c: _has_sc(c) and "runAsUser" not in sc(c), _low_container_uid,
                            init=False)),  # CKV_K8S_40 reads the pod and its regular containers only
        pod_op("k8s-pod-security-context-missing", _pod_sc_removable, _drop_pod_sc,
               also=("k8s-low-uid", "k8s-seccomp-not-set")),
        container_op("k8s-secret-in-env-ref", lambda c: True, _secret_as_env),
        container_op("k8s-git-sync-git-override", _runs_git_sync, _git_override),
        _pod_without_policy_op(),
        doc_op("k8s-default-sa-bound", _sa_subject, _bind_default_sa),
        _role_op("k8s-rbac-bind-permission", ROLE_KINDS, _bind_rules),
        _role_op("k8s-rbac-escalate-permission", ROLE_KINDS, _escalate_rules),
        _role_op("k8s-rbac-webhook-config-write", ("ClusterRole",), _webhook_rules),
        _role_op("k8s-rbac-csr-approve", ("ClusterRole",), _csr_rules),
        _graph_op("k8s-rbac-sa-can-read-all-secrets", ("secrets",), ("get",)),
        _graph_op("k8s-rbac-sa-can-bind", ("rolebindings",), ("create", "bind"), (RBAC_GROUP,)),
        _graph_op("k8s-rbac-sa-can-exec", ("pods/exec",), ("create",)),
        _graph_op("k8s-rbac-sa-can-impersonate", ("serviceaccounts",), ("impersonate",)),
        _graph_op("k8s-rbac-sa-can-update-service-status", ("services/status",), ("update", "patch")),
        doc_op("k8s-ingress-nginx-snippet", lambda d: _is_ingress(d) and len(_snippet_keys(d)) < 2, _plain_snippet),
        doc_op("k8s-ingress-nginx-alias-snippet", _is_ingress, _add_snippet("server-snippet", ALIAS_SNIPPETS),
               also=("k8s-ingress-nginx-snippet",)),
        doc_op("k8s-ingress-nginx-lua-snippet", _is_ingress, _add_snippet("configuration-snippet", LUA_SNIPPETS),
               also=("k8s-ingress-nginx-snippet",)),
    ]
