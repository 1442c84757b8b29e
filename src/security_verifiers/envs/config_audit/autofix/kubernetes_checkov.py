"""Fixers for the Kubernetes rules that Checkov alone implements and the generator injects (or that a hardened
manifest trips first: digests, pull policy, default namespace, security contexts, NetworkPolicy coverage).

Each fixer follows the rule's catalog remediation and leaves nothing another rule objects to: a Secret exposed as
an environment variable becomes a file of a mounted Secret volume, RBAC loses only the dangerous verbs or
resources, a missing security context gets the hardened one the bases use. Like the core fixers they apply to
every container of the flagged workload, and they are idempotent.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from typing import Any

from security_verifiers.engines.findings import Finding
from security_verifiers.envs.config_audit.autofix.common import slug
from security_verifiers.envs.config_audit.autofix.yaml_text import (
    K8sContext,
    K8sFixer,
    any_changed,
    child,
    meta,
    mount_secret,
    pod_containers,
    pod_spec,
    pod_specs,
    pop_key,
    set_key,
    workload_containers,
)

NON_ROOT_UID = 10001
#: CKV_K8S_40: a UID below this may collide with a user of the host.
MIN_UID = 10000
READ_VERBS = ["get", "list", "watch"]
#: Least-privilege replacements for a ``*`` resource, by API group.
RESOURCES_BY_GROUP = {"": ["pods", "services", "configmaps"], "apps": ["deployments", "replicasets", "statefulsets"],
                      "batch": ["jobs", "cronjobs"], "networking.k8s.io": ["ingresses", "networkpolicies"]}
RBAC_GROUP = "rbac.authorization.k8s.io"
#: Kinds a Namespace-less object of which lands in ``default`` (CKV_K8S_21).
NAMESPACED_KINDS = frozenset({"Pod", "Deployment", "DaemonSet", "StatefulSet", "ReplicaSet", "ReplicationController",
                              "Job", "CronJob", "Service", "Secret", "ServiceAccount", "Role", "RoleBinding",
                              "ConfigMap", "Ingress", "NetworkPolicy", "PersistentVolumeClaim"})


# --- images --------------------------------------------------------------------------------------------------


def placeholder_digest(image: str) -> str:
    """A well-formed ``sha256:`` digest derived from the image reference. A placeholder, like
    :data:`~.kubernetes.PINNED_TAG`: an offline fixer cannot ask the registry, so a human should replace it with
    the digest the registry reports for that tag (``crane digest``, ``docker buildx imagetools inspect``)."""
    return "sha256:" + hashlib.sha256(image.encode()).hexdigest()


def fix_image_digest(ctx: K8sContext, finding: Finding) -> bool:
    """Pin every image by digest (``repo:tag@sha256:...``), keeping its repository and tag."""
    changed = False
    for container in workload_containers(ctx, finding):
        image = container.get("image")
        if isinstance(image, str) and image and "@" not in image:
            container["image"] = f"{image}@{placeholder_digest(image)}"
            changed = True
    return changed


def fix_pull_policy(ctx: K8sContext, finding: Finding) -> bool:
    """imagePullPolicy: Always on every container (the kubelet re-checks the registry's authorization)."""
    return any_changed([set_key(c, "imagePullPolicy", "Always") for c in workload_containers(ctx, finding)])


# --- namespaces ------------------------------------------------------------------------------------------------


def _file_namespace(ctx: K8sContext, finding: Finding) -> str:
    """The namespace a default-namespace object should move to: the file's own (a declared Namespace, else the
    one most objects use), else one named after the object."""
    declared = [str(meta(d).get("name")) for d in ctx.all_docs() if d.get("kind") == "Namespace"
                and meta(d).get("name") not in (None, "default")]
    if declared:
        return declared[0]
    used = Counter(str(ns) for d in ctx.all_docs() if (ns := meta(d).get("namespace")) not in (None, "", "default"))
    if used:
        return used.most_common(1)[0][0]
    return slug(finding.resource.partition("/")[2], "-")


def fix_default_namespace(ctx: K8sContext, finding: Finding) -> bool:
    """metadata.namespace: the file's namespace (see :func:`_file_namespace`), declared with a Namespace object when
    the file neither uses nor declares it (the scorer's inventory allows a move out of ``default`` only into a
    namespace the file knows). A workload moved into a declared Namespace that has no NetworkPolicy brings a
    default-deny policy along (else the move would add a finding)."""
    namespace = _file_namespace(ctx, finding)
    known = {meta(d).get("namespace") for d in ctx.all_docs()} | {
        meta(d).get("name") for d in ctx.all_docs() if d.get("kind") == "Namespace"}
    if namespace not in known:  # a namespace of its own: declared here, or the move leaves the file's inventory
        ctx.added.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    changed = False
    for doc in ctx.objects(finding.resource):
        if meta(doc).get("namespace") not in (None, "", "default"):
            continue
        child(doc, "metadata")["namespace"] = namespace
        changed = True
        declared = any(d.get("kind") == "Namespace" and meta(d).get("name") == namespace for d in ctx.all_docs())
        if pod_spec(doc) is not None and declared and not ctx.names("NetworkPolicy", namespace):
            ctx.added.append({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                              "metadata": {"name": "default-deny-all", "namespace": namespace},
                              "spec": {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}})
    return changed


# --- security contexts -----------------------------------------------------------------------------------------


def fix_any_capability_added(ctx: K8sContext, finding: Finding) -> bool:
    """Remove capabilities.add from every container: drop ALL and add nothing back (bind ports above 1024)."""
    changed = False
    for container in workload_containers(ctx, finding):
        caps = (container.get("securityContext") or {}).get("capabilities")
        if isinstance(caps, dict) and pop_key(caps, "add"):
            changed = True
    return changed


def fix_low_uid(ctx: K8sContext, finding: Finding) -> bool:
    """runAsUser of 10000 or more: on the pod when it has none or a lower one, and on every container that
    overrides it with a lower one."""
    changes: list[bool] = []
    for spec in pod_specs(ctx, finding):
        pod_sc = child(spec, "securityContext")
        uid = pod_sc.get("runAsUser")
        if not isinstance(uid, int) or uid < MIN_UID:
            changes.append(set_key(pod_sc, "runAsUser", NON_ROOT_UID))
        for container in pod_containers(spec):
            sc = container.get("securityContext")
            if not isinstance(sc, dict):
                continue
            value = sc.get("runAsUser")
            if value is not None and (not isinstance(value, int) or value < MIN_UID):
                changes.append(set_key(sc, "runAsUser", NON_ROOT_UID))
    return any_changed(changes)


def hardened_container_context() -> dict[str, Any]:
    """The container securityContext of the generator's bases (and of the core rules' remediations)."""
    return {"allowPrivilegeEscalation": False, "privileged": False, "readOnlyRootFilesystem": True,
            "runAsNonRoot": True, "capabilities": {"drop": ["ALL"]}}


def fix_container_security_context(ctx: K8sContext, finding: Finding) -> bool:
    """Give every container without a securityContext the hardened one; fill in the keys an existing one lacks."""
    changed = False
    for container in workload_containers(ctx, finding):
        sc = child(container, "securityContext")
        for key, value in hardened_container_context().items():
            if key not in sc:
                sc[key] = value
                changed = True
    return changed


def fix_pod_security_context(ctx: K8sContext, finding: Finding) -> bool:
    """Give the pod a securityContext: non-root with a high UID/GID, RuntimeDefault seccomp (keys already set are
    kept)."""
    changed = False
    defaults = {"runAsNonRoot": True, "runAsUser": NON_ROOT_UID, "runAsGroup": NON_ROOT_UID,
                "fsGroup": NON_ROOT_UID, "seccompProfile": {"type": "RuntimeDefault"}}
    for spec in pod_specs(ctx, finding):
        sc = child(spec, "securityContext")
        for key, value in defaults.items():
            if key not in sc:
                sc[key] = value
                changed = True
    return changed


# --- secrets and environment ---------------------------------------------------------------------------------


def fix_secret_env_ref(ctx: K8sContext, finding: Finding) -> bool:
    """Secrets read through env (valueFrom.secretKeyRef, envFrom.secretRef) are mounted as files instead: the
    Secret becomes a read-only volume under ``/var/run/secrets/<secret>`` (one file per key) and the variables go.
    The application reads the file (most images accept a ``*_FILE`` setting or a config path)."""
    changed = False
    for doc in ctx.objects(finding.resource):
        spec = pod_spec(doc)
        if spec is None:
            continue
        for container in pod_containers(spec):
            refs = [e for e in container.get("env") or [] if isinstance(e, dict)
                    and isinstance((e.get("valueFrom") or {}).get("secretKeyRef"), dict)]
            from_env = [e for e in container.get("envFrom") or [] if isinstance(e, dict)
                        and isinstance(e.get("secretRef"), dict)]
            secrets = [str(e["valueFrom"]["secretKeyRef"].get("name")) for e in refs]
            secrets += [str(e["secretRef"].get("name")) for e in from_env]
            if not secrets:
                continue
            kept_env = [e for e in container.get("env") or [] if not any(e is r for r in refs)]
            kept_from = [e for e in container.get("envFrom") or [] if not any(e is r for r in from_env)]
            for key, kept in (("env", kept_env), ("envFrom", kept_from)):
                if kept:
                    container[key] = kept
                else:
                    container.pop(key, None)
            for secret in dict.fromkeys(secrets):
                mount_secret(spec, container, secret)
            changed = True
    return changed


def fix_git_sync_override(ctx: K8sContext, finding: Finding) -> bool:
    """Remove GITSYNC_GIT: git-sync then runs its own git binary, not one an attacker can swap in."""
    changed = False
    for container in workload_containers(ctx, finding):
        env = container.get("env")
        if isinstance(env, list) and any(isinstance(e, dict) and e.get("name") == "GITSYNC_GIT" for e in env):
            container["env"] = [e for e in env if not (isinstance(e, dict) and e.get("name") == "GITSYNC_GIT")]
            if not container["env"]:
                del container["env"]
            changed = True
    return changed


# --- ingress-nginx -------------------------------------------------------------------------------------------


def fix_ingress_snippets(ctx: K8sContext, finding: Finding) -> bool:
    """Remove every ``*-snippet`` annotation (CVE-2021-25742: a snippet runs arbitrary nginx configuration in the
    controller, which can read every Secret it holds). Headers and redirects have dedicated annotations."""
    changed = False
    for doc in ctx.objects(finding.resource, ("Ingress",)):
        annotations = meta(doc).get("annotations")
        if not isinstance(annotations, dict):
            continue
        for key in [k for k in annotations if "snippet" in str(k)]:
            del annotations[key]
            changed = True
        if changed and not annotations:
            del doc["metadata"]["annotations"]
    return changed


# --- RBAC ----------------------------------------------------------------------------------------------------


def _covers(granted: list[Any], wanted: tuple[str, ...]) -> bool:
    """Whether a rule's list (apiGroups / resources) grants any of ``wanted`` (``*`` and ``*/sub`` count)."""
    for value in granted:
        value = str(value)
        if value == "*" or value in wanted:
            return True
        if value.startswith("*/") and any(w.endswith(value[1:]) for w in wanted if "/" in w):
            return True
    return False


def _strip_verbs(rule: dict[str, Any], groups: tuple[str, ...], resources: tuple[str, ...],
                 verbs: tuple[str, ...]) -> bool:
    """Take ``verbs`` (and a ``*`` verb, which becomes read-only verbs) away from a rule granting them on
    ``resources`` of ``groups``."""
    granted = rule.get("verbs")
    if not (isinstance(granted, list) and _covers(rule.get("apiGroups") or [], groups)
            and _covers(rule.get("resources") or [], resources)):
        return False
    kept = [v for v in granted if v != "*" and v not in verbs]
    if "*" in granted:
        kept += [v for v in READ_VERBS if v not in kept and v not in verbs]
    if kept == granted:
        return False
    rule["verbs"] = kept
    return True


#: An RBAC operation Checkov looks for: (API groups, resources, verbs); granting any verb of it on any resource fails.
Operation = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]


def _strip_rules(operations: list[Operation]) -> K8sFixer:
    def fix(ctx: K8sContext, finding: Finding) -> bool:
        changed = False
        for doc in ctx.objects(finding.resource, ("Role", "ClusterRole")):
            rules = doc.get("rules")
            if not isinstance(rules, list):
                continue
            for rule in [r for r in rules if isinstance(r, dict)]:
                for groups, resources, verbs in operations:
                    changed = _strip_verbs(rule, groups, resources, verbs) or changed
            kept = [r for r in rules if not (isinstance(r, dict) and r.get("verbs") == [])]
            if kept != rules:
                doc["rules"] = kept
        return changed

    fix.__doc__ = "Remove " + "; ".join(f"{'/'.join(v)} on {', '.join(r)}" for _, r, v in operations) + \
        " from the role's rules (a rule left without verbs goes)."
    return fix


#: The operations each Checkov RBAC check looks for.
BIND: list[Operation] = [((RBAC_GROUP,), ("rolebindings", "clusterrolebindings"), ("bind",))]
ESCALATE: list[Operation] = [((RBAC_GROUP,), ("roles", "clusterroles"), ("escalate",))]
WEBHOOKS: list[Operation] = [
    (("admissionregistration.k8s.io",), ("mutatingwebhookconfigurations", "validatingwebhookconfigurations"),
     ("create", "update", "patch"))]
CSR_APPROVAL: list[Operation] = [
    (("certificates.k8s.io",), ("certificatesigningrequests/approval",), ("update", "patch")),
    (("certificates.k8s.io",), ("signers",), ("approve",))]
#: CKV2_K8S_1-5: the resources a ServiceAccount binding must not reach through its role.
GRAPH_RESOURCES = {"k8s-rbac-sa-can-bind": ("rolebindings", "clusterrolebindings"),
                   "k8s-rbac-sa-can-exec": ("pods/exec", "nodes/proxy"),
                   "k8s-rbac-sa-can-impersonate": ("groups", "users", "serviceaccounts"),
                   "k8s-rbac-sa-can-update-service-status": ("services/status",),
                   "k8s-rbac-sa-can-read-all-secrets": ("secrets",)}


def fix_binding_permission(ctx: K8sContext, finding: Finding) -> bool:
    """The binding's role (in the file) loses the resources the rule is about (a ``*`` resource becomes the
    explicit, harmless resources of its groups); a rule left without resources goes. Secrets a workload needs are
    better granted one by one (``resourceNames``)."""
    banned = GRAPH_RESOURCES[finding.rule_id]
    changed = False
    for binding in ctx.objects(finding.resource, ("RoleBinding", "ClusterRoleBinding")):
        ref = binding.get("roleRef")
        if not isinstance(ref, dict):
            continue
        for role in ctx.objects(f"{ref.get('kind')}/{ref.get('name')}", ("Role", "ClusterRole")):
            rules = role.get("rules")
            if not isinstance(rules, list):
                continue
            for rule in [r for r in rules if isinstance(r, dict) and isinstance(r.get("resources"), list)]:
                resources = rule["resources"]
                kept = [r for r in resources if r != "*" and str(r) not in banned
                        and not (str(r).startswith("*/") and any(b.endswith(str(r)[1:]) for b in banned))]
                if "*" in resources:
                    for group in rule.get("apiGroups") or [""]:
                        kept += [r for r in RESOURCES_BY_GROUP.get(str(group), ["pods"]) if r not in kept]
                if kept != resources:
                    rule["resources"] = kept
                    changed = True
            kept_rules = [r for r in rules if not (isinstance(r, dict) and r.get("resources") == [])]
            if kept_rules != rules:
                role["rules"] = kept_rules
    return changed


def _dedicated_account(ctx: K8sContext, binding: dict[str, Any], namespace: str | None) -> str:
    """The ServiceAccount a binding to ``default`` should name: the file's only other one in that namespace, else
    one named after the binding."""
    accounts = sorted({str(meta(d).get("name")) for d in ctx.all_docs() if d.get("kind") == "ServiceAccount"
                       and meta(d).get("name") != "default" and meta(d).get("namespace") == namespace})
    return accounts[0] if len(accounts) == 1 else slug(str(meta(binding).get("name")), "-")


def fix_default_sa_bound(ctx: K8sContext, finding: Finding) -> bool:
    """Bind a dedicated ServiceAccount instead of ``default`` (which every pod of the namespace runs as unless told
    otherwise)."""
    changed = False
    for binding in ctx.objects(finding.resource, ("RoleBinding", "ClusterRoleBinding")):
        for subject in binding.get("subjects") or []:
            if (isinstance(subject, dict) and subject.get("kind") == "ServiceAccount"
                    and subject.get("name") == "default"):
                namespace = subject.get("namespace") or meta(binding).get("namespace")
                subject["name"] = _dedicated_account(ctx, binding, namespace)
                changed = True
    return changed


K8S_CHECKOV_FIXERS: dict[str, K8sFixer] = {
    "k8s-image-not-pinned-by-digest": fix_image_digest,
    "k8s-image-pull-policy-not-always": fix_pull_policy,
    "k8s-default-namespace": fix_default_namespace,
    "k8s-any-capability-added": fix_any_capability_added,
    "k8s-low-uid": fix_low_uid,
    "k8s-container-security-context-missing": fix_container_security_context,
    "k8s-pod-security-context-missing": fix_pod_security_context,
    "k8s-secret-in-env-ref": fix_secret_env_ref,
    "k8s-git-sync-git-override": fix_git_sync_override,
    "k8s-ingress-nginx-snippet": fix_ingress_snippets,
    "k8s-ingress-nginx-alias-snippet": fix_ingress_snippets,
    "k8s-ingress-nginx-lua-snippet": fix_ingress_snippets,
    "k8s-default-sa-bound": fix_default_sa_bound,
    "k8s-rbac-bind-permission": _strip_rules(BIND),
    "k8s-rbac-escalate-permission": _strip_rules(ESCALATE),
    "k8s-rbac-webhook-config-write": _strip_rules(WEBHOOKS),
    "k8s-rbac-csr-approve": _strip_rules(CSR_APPROVAL),
    **{rule: fix_binding_permission for rule in GRAPH_RESOURCES},
}

#: Families (see ``FIX_FAMILIES`` in :mod:`.kubernetes`): one fix changes what several rules look at.
K8S_CHECKOV_FAMILIES = {
    "k8s-container-security-context-missing": "container-context", "k8s-capabilities-not-dropped": "container-context",
    "k8s-net-raw-not-dropped": "container-context", "k8s-privilege-escalation": "container-context",
    "k8s-writable-root-fs": "container-context",
    "k8s-pod-security-context-missing": "pod-context", "k8s-low-uid": "pod-context",
    "k8s-seccomp-not-set": "pod-context",
    "k8s-ingress-nginx-snippet": "snippets", "k8s-ingress-nginx-alias-snippet": "snippets",
    "k8s-ingress-nginx-lua-snippet": "snippets",
    "k8s-rbac-bind-permission": "rbac", "k8s-rbac-escalate-permission": "rbac",
    "k8s-rbac-webhook-config-write": "rbac", "k8s-rbac-csr-approve": "rbac",
    **{rule: "rbac-binding" for rule in GRAPH_RESOURCES},
}
