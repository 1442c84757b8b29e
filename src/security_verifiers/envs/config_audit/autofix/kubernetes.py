"""Rule-based remediation of Kubernetes findings, one fixer per rule id, editing the loaded YAML documents.

Why dict edits and not text edits: YAML indentation makes text surgery fragile, and the scorer only needs
the result to parse, validate and keep its inventory. The manifest under edit and its way back to text live in
:mod:`.yaml_text`.

Why one module past 500 lines: it is the whole Kubernetes dispatch table and its 30-odd small fixers, which read
best side by side with the table.

Fixers are idempotent and apply to every container of the flagged workload: fixing a container the engine
did not single out can only remove findings, never add one. A secret taken out of a manifest always lands in a
Secret mounted as files (never an env variable: that is k8s-secret-in-env-ref). The fixers of the rules that
Checkov alone implements are in :mod:`.kubernetes_checkov` and join the table here.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import yaml

from security_verifiers.engines.configs import FAST_LOADER, image_repository
from security_verifiers.engines.findings import Finding
from security_verifiers.envs.config_audit.autofix.common import SECRET_NAME_RE, Skipped, has_secret_literal, slug
from security_verifiers.envs.config_audit.autofix.kubernetes_api_versions import K8S_API_VERSION_FIXERS
from security_verifiers.envs.config_audit.autofix.kubernetes_checkov import (
    K8S_CHECKOV_FAMILIES,
    K8S_CHECKOV_FIXERS,
    NON_ROOT_UID,
    READ_VERBS,
    RESOURCES_BY_GROUP,
)
from security_verifiers.envs.config_audit.autofix.yaml_text import (
    K8sContext,
    K8sFixer,
    any_changed,
    child,
    meta,
    mount_secret,
    pod_containers,
    pod_metadata,
    pod_spec,
    pod_specs,
    pop_key,
    render,
    set_key,
    workload_containers,
)

#: The tag an unpinned image gets. A placeholder: the rule only rejects ``latest`` and missing tags, and an
#: offline fixer cannot know the image's real releases, so a human should replace it with a real version.
PINNED_TAG = "1.0.0"
DANGEROUS_CAPABILITIES = frozenset({"ALL", "SYS_ADMIN", "NET_ADMIN", "SYS_PTRACE", "SYS_MODULE", "NET_RAW",
                                    "DAC_READ_SEARCH"})
DEFAULT_RESOURCES = {("limits", "cpu"): "500m", ("limits", "memory"): "512Mi",
                     ("requests", "cpu"): "100m", ("requests", "memory"): "128Mi"}
INTERNAL_SOURCE_RANGE = "10.0.0.0/8"
LB_RANGES_ANNOTATION = "service.beta.kubernetes.io/load-balancer-source-ranges"
WORLD_RANGES = ("", "0.0.0.0/0", "::/0")  # "" : a blank entry restricts nothing


# --- container security context -------------------------------------------------------------------------


def _set_container_sc(key: str, value: Any) -> K8sFixer:
    def fix(ctx: K8sContext, finding: Finding) -> bool:
        return any_changed([set_key(child(c, "securityContext"), key, value)
                            for c in workload_containers(ctx, finding)])
    fix.__doc__ = f"Set securityContext.{key}: {value!r} on every container."
    return fix


def fix_privileged(ctx: K8sContext, finding: Finding) -> bool:
    """privileged: false where it was set (containers that never set it are left as they are)."""
    return any_changed([set_key(c["securityContext"], "privileged", False) for c in workload_containers(ctx, finding)
                        if isinstance(c.get("securityContext"), dict) and c["securityContext"].get("privileged")])


def fix_run_as_root(ctx: K8sContext, finding: Finding) -> bool:
    """runAsNonRoot: true at pod and container level, and no uid 0 anywhere (a container value overrides the pod's)."""
    changes: list[bool] = []
    for spec in pod_specs(ctx, finding):
        pod_sc = child(spec, "securityContext")
        changes.append(set_key(pod_sc, "runAsNonRoot", True))
        if pod_sc.get("runAsUser") == 0:
            changes.append(set_key(pod_sc, "runAsUser", NON_ROOT_UID))
        for container in pod_containers(spec):
            sc = child(container, "securityContext")
            changes.append(set_key(sc, "runAsNonRoot", True))
            if sc.get("runAsUser") in (0, None) and pod_sc.get("runAsUser") in (0, None):
                changes.append(set_key(sc, "runAsUser", NON_ROOT_UID))
            elif sc.get("runAsUser") == 0:
                changes.append(set_key(sc, "runAsUser", NON_ROOT_UID))
    return any_changed(changes)


def fix_added_capabilities(ctx: K8sContext, finding: Finding) -> bool:
    """Drop the dangerous entries from capabilities.add (the key goes when nothing is left)."""
    changed = False
    for container in workload_containers(ctx, finding):
        caps = (container.get("securityContext") or {}).get("capabilities")
        if not isinstance(caps, dict) or not isinstance(caps.get("add"), list):
            continue
        kept = [c for c in caps["add"] if str(c).upper().removeprefix("CAP_") not in DANGEROUS_CAPABILITIES]
        if kept != caps["add"]:
            changed = True
            if kept:
                caps["add"] = kept
            else:
                del caps["add"]
    return changed


def fix_capabilities_not_dropped(ctx: K8sContext, finding: Finding) -> bool:
    """capabilities.drop: [ALL] (other entries are redundant once ALL is dropped)."""
    changes = []
    for container in workload_containers(ctx, finding):
        caps = child(child(container, "securityContext"), "capabilities")
        drop = caps.get("drop")
        if not (isinstance(drop, list) and "ALL" in drop):
            changes.append(set_key(caps, "drop", ["ALL"]))
    return any_changed(changes)


def fix_seccomp(ctx: K8sContext, finding: Finding) -> bool:
    """Pod-level seccompProfile RuntimeDefault; container overrides and the legacy annotation must agree with it."""
    changes: list[bool] = []
    for doc in ctx.objects(finding.resource):
        spec = pod_spec(doc)
        if spec is None:
            continue
        changes.append(set_key(child(child(spec, "securityContext"), "seccompProfile"), "type", "RuntimeDefault"))
        for container in pod_containers(spec):
            profile = (container.get("securityContext") or {}).get("seccompProfile")
            if isinstance(profile, dict) and profile.get("type") not in ("RuntimeDefault", "Localhost"):
                container["securityContext"]["seccompProfile"] = {"type": "RuntimeDefault"}
                changes.append(True)
        if doc.get("kind") in SECCOMP_ANNOTATION_KINDS:  # the legacy annotation, agreeing with the field
            template_meta = child(child(child(doc, "spec"), "template"), "metadata")
            changes.append(set_key(child(template_meta, "annotations"), SECCOMP_ANNOTATION, "runtime/default"))
        annotations = (pod_metadata(doc) or {}).get("annotations")
        if isinstance(annotations, dict):
            for key in [k for k in annotations if str(k).startswith("seccomp.security.alpha.kubernetes.io/")]:
                changes.append(set_key(annotations, key, "runtime/default"))
    return any_changed(changes)


SECCOMP_ANNOTATION = "seccomp.security.alpha.kubernetes.io/pod"
#: Kinds whose seccomp profile Checkov's CKV_K8S_31 reads only from the legacy pod annotation (it ignores their
#: securityContext.seccompProfile): the fix sets both, to the same profile.
SECCOMP_ANNOTATION_KINDS = frozenset({"ReplicationController"})


# --- pod spec ----------------------------------------------------------------------------------------------


def _drop_pod_field(key: str) -> K8sFixer:
    def fix(ctx: K8sContext, finding: Finding) -> bool:
        return any_changed([pop_key(spec, key) for spec in pod_specs(ctx, finding)])
    fix.__doc__ = f"Remove {key} from the pod spec (false is the default)."
    return fix


def fix_hostpath_volume(ctx: K8sContext, finding: Finding) -> bool:
    """Replace each hostPath volume by an emptyDir of the same name, so the volumeMounts still resolve."""
    changed = False
    for spec in pod_specs(ctx, finding):
        for volume in spec.get("volumes") or []:
            if isinstance(volume, dict) and "hostPath" in volume:
                name = volume.get("name")
                volume.clear()
                volume.update({"name": name, "emptyDir": {}})
                changed = True
    return changed


def fix_host_port(ctx: K8sContext, finding: Finding) -> bool:
    """Remove hostPort from every container port (the port stays reachable through a Service)."""
    return any_changed([pop_key(port, "hostPort") for c in workload_containers(ctx, finding)
                 for port in c.get("ports") or [] if isinstance(port, dict)])


def _quantity(value: Any) -> float | None:
    """A CPU or memory quantity as a number (cores / bytes), None when it is not one we can read."""
    match = re.fullmatch(r"\s*([0-9.]+)\s*(m|k|Ki|M|Mi|G|Gi|T|Ti)?\s*", str(value))
    if not match:
        return None
    scale = {None: 1, "m": 1e-3, "k": 1e3, "Ki": 2**10, "M": 1e6, "Mi": 2**20, "G": 1e9, "Gi": 2**30,
             "T": 1e12, "Ti": 2**40}[match.group(2)]
    try:
        return float(match.group(1)) * scale
    except ValueError:
        return None


def _set_resource(section: str, resource: str) -> K8sFixer:
    """Add a default limit/request, kept consistent with the other side (requests must not exceed limits)."""
    other = "requests" if section == "limits" else "limits"

    def fix(ctx: K8sContext, finding: Finding) -> bool:
        changed = False
        for container in workload_containers(ctx, finding):
            resources = child(container, "resources")
            target = child(resources, section)
            if target.get(resource) not in (None, ""):
                continue
            value: Any = DEFAULT_RESOURCES[(section, resource)]
            counterpart = (resources.get(other) or {}).get(resource)
            default_q, counter_q = _quantity(value), _quantity(counterpart)
            if counter_q is not None and default_q is not None and (
                    counter_q > default_q if section == "limits" else counter_q < default_q):
                value = counterpart
            target[resource] = value
            changed = True
        return changed
    fix.__doc__ = f"Set resources.{section}.{resource} on every container."
    return fix


def fix_latest_image(ctx: K8sContext, finding: Finding) -> bool:
    """Pin ``latest`` / untagged images to :data:`PINNED_TAG`, keeping the repository (and any digest)."""
    changed = False
    for container in workload_containers(ctx, finding):
        image = container.get("image")
        if not isinstance(image, str) or not image:
            continue
        repo = image_repository(image)
        digest = image.split("@", 1)[1] if "@" in image else None
        tag = image.split("@", 1)[0][len(repo) + 1:]
        if digest is None and tag and tag != "latest":
            continue
        if digest is not None and tag != "latest":
            continue
        container["image"] = f"{repo}:{PINNED_TAG}" + (f"@{digest}" if digest else "")
        changed = True
    return changed


def _probe(container: dict[str, Any], initial_delay: int) -> dict[str, Any]:
    """A tcpSocket probe on the first declared containerPort, else an exec probe that only checks the shell runs."""
    for port in container.get("ports") or []:
        if isinstance(port, dict) and isinstance(port.get("containerPort"), int):
            action: dict[str, Any] = {"tcpSocket": {"port": port["containerPort"]}}
            break
    else:
        action = {"exec": {"command": ["/bin/sh", "-c", "exit 0"]}}
    return action | {"initialDelaySeconds": initial_delay, "periodSeconds": 10}


def _add_probe(key: str, initial_delay: int) -> K8sFixer:
    def fix(ctx: K8sContext, finding: Finding) -> bool:
        changed = False
        for container in workload_containers(ctx, finding, init=False):  # init containers may not have probes
            if not (isinstance(container.get(key), dict) and container[key]):  # an empty probe is no probe
                container[key] = _probe(container, initial_delay)
                changed = True
        return changed
    fix.__doc__ = f"Add a {key} to every (non-init) container."
    return fix


def _secret_env_entries(container: dict[str, Any], finding: Finding, rule_id: str) -> list[dict[str, Any]]:
    """The env entries holding a literal secret: named by the finding's path when it names one, else matched by
    name (k8s-secret-in-env) or by value pattern (private keys, AWS keys)."""
    env = [e for e in container.get("env") or [] if isinstance(e, dict) and e.get("value") not in (None, "")]
    if rule_id != "k8s-secret-in-env":
        return [e for e in env if has_secret_literal(str(e["value"]), rule_id)]
    named = [e for e in env if _named_in_path(str(e.get("name")), finding.path)]
    return named or [e for e in env if SECRET_NAME_RE.search(str(e.get("name", "")))
                     or has_secret_literal(str(e["value"]), "cfg-hardcoded-aws-key")
                     or has_secret_literal(str(e["value"]), "cfg-hardcoded-private-key")]


def _named_in_path(name: str, path: str | None) -> bool:
    """Whether a finding's path (``env/DB_PASSWORD``, ``data.api_key``, ``containers[0].env['X']``) names ``name``."""
    return bool(path) and re.search(rf"(^|[/.\[\]'\"=\s]){re.escape(name)}($|[/.\[\]'\"\s])", str(path)) is not None


def remove_env_entries(container: dict[str, Any], entries: list[dict[str, Any]]) -> None:
    """Drop ``entries`` (by identity) from the container's env; the key goes when nothing is left."""
    kept = [e for e in container.get("env") or [] if not any(e is x for x in entries)]
    if kept:
        container["env"] = kept
    else:
        container.pop("env", None)


def workload_secret(doc: dict[str, Any]) -> str:
    """The Secret that holds what a fix took out of a workload's manifest: ``<workload>-secrets``."""
    return f"{slug(str(meta(doc).get('name')), '-')}-secrets"


def fix_secret_in_env(ctx: K8sContext, finding: Finding) -> bool:
    """Move literal secret env values into the Secret ``<workload>-secrets`` (key = the variable name), mounted as
    files under ``/var/run/secrets/<workload>-secrets``: a secretKeyRef variable would still expose the value to
    the process environment (k8s-secret-in-env-ref). The Secret itself is provisioned out of band."""
    changed = False
    for doc in ctx.objects(finding.resource):
        spec = pod_spec(doc)
        for container in pod_containers(spec) if spec else []:
            entries = _secret_env_entries(container, finding, finding.rule_id)
            if entries and spec is not None:
                remove_env_entries(container, entries)
                mount_secret(spec, container, workload_secret(doc))
                changed = True
    return changed


def fix_sa_token_automount(ctx: K8sContext, finding: Finding) -> bool:
    """automountServiceAccountToken: false on the pod spec (or on a flagged ServiceAccount itself)."""
    changes = []
    for doc in ctx.objects(finding.resource):
        spec = pod_spec(doc)
        target = spec if spec is not None else doc if doc.get("kind") == "ServiceAccount" else None
        if target is not None:
            changes.append(set_key(target, "automountServiceAccountToken", False))
    return any_changed(changes)


def fix_default_service_account(ctx: K8sContext, finding: Finding) -> bool:
    """serviceAccountName: the workload's name (it need not exist for the rules; create it when deploying).

    A flagged ``ServiceAccount/default`` itself (Checkov's reading of the rule) gets its token automount off."""
    changes = []
    for doc in ctx.objects(finding.resource):
        spec = pod_spec(doc)
        if spec is None:
            if doc.get("kind") == "ServiceAccount":
                changes.append(set_key(doc, "automountServiceAccountToken", False))
            continue
        name = slug(str(meta(doc).get("name")), "-")
        changes.append(set_key(spec, "serviceAccountName", name if name != "default" else "default-workload"))
        if spec.get("serviceAccount") not in (None, spec["serviceAccountName"]):
            spec["serviceAccount"] = spec["serviceAccountName"]  # the deprecated alias must not contradict it
    return any_changed(changes)


# --- RBAC --------------------------------------------------------------------------------------------------


def _narrow_rule(rule: dict[str, Any]) -> bool:
    """Replace every wildcard of one PolicyRule: apiGroups -> core, resources -> a per-group list (``x/*``
    subresource wildcards -> ``x``), verbs -> read-only."""
    changed = False
    groups = rule.get("apiGroups")
    if isinstance(groups, list) and any("*" in str(g) for g in groups):
        rule["apiGroups"] = [g for g in groups if "*" not in str(g)] or [""]
        changed = True
    resources = rule.get("resources")
    if isinstance(resources, list) and any("*" in str(r) for r in resources):
        explicit = list(dict.fromkeys(str(r).split("/", 1)[0] for r in resources if r != "*" and
                                      not str(r).startswith("*")))
        if any(r == "*" or str(r).startswith("*") for r in resources):
            for group in rule.get("apiGroups") or [""]:
                explicit += [r for r in RESOURCES_BY_GROUP.get(str(group), ["pods"]) if r not in explicit]
        rule["resources"] = explicit
        changed = True
    verbs = rule.get("verbs")
    if isinstance(verbs, list) and any("*" in str(v) for v in verbs):
        explicit = [v for v in verbs if "*" not in str(v)]
        rule["verbs"] = explicit + [v for v in READ_VERBS if v not in explicit]
        changed = True
    return changed


def fix_rbac_wildcards(ctx: K8sContext, finding: Finding) -> bool:
    """Least privilege for every rule of the Role: wildcards in verbs, resources and apiGroups are all replaced
    (Checkov's CKV_K8S_49, mapped onto the verbs rule, flags a wildcard in any of the three)."""
    return any_changed([_narrow_rule(rule) for doc in ctx.objects(finding.resource, ("Role", "ClusterRole"))
                 for rule in doc.get("rules") or [] if isinstance(rule, dict)])


def fix_cluster_admin_binding(ctx: K8sContext, finding: Finding) -> bool:
    """Point the binding at ``<binding>-role`` and append that role with read-only rules.

    A ClusterRoleBinding gets a ClusterRole; a RoleBinding gets a Role in its own namespace. The appended role is
    a least-privilege starting point (get/list/watch on pods, services, configmaps) to be widened by hand."""
    changed = False
    for doc in ctx.objects(finding.resource, ("RoleBinding", "ClusterRoleBinding")):
        ref = doc.get("roleRef")
        if not isinstance(ref, dict) or ref.get("name") != "cluster-admin":
            continue
        namespace = meta(doc).get("namespace")
        cluster = doc.get("kind") == "ClusterRoleBinding" or not namespace
        kind = "ClusterRole" if cluster else "Role"
        name = f"{slug(str(meta(doc).get('name')), '-')}-role"
        doc["roleRef"] = {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": name}
        if name not in ctx.names(kind, None if cluster else namespace):
            role_meta: dict[str, Any] = {"name": name} | ({} if cluster else {"namespace": namespace})
            ctx.added.append({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": role_meta,
                              "rules": [{"apiGroups": [""], "resources": list(RESOURCES_BY_GROUP[""]),
                                         "verbs": list(READ_VERBS)}]})
        changed = True
    return changed


# --- networking --------------------------------------------------------------------------------------------


def fix_nodeport_service(ctx: K8sContext, finding: Finding) -> bool:
    """type ClusterIP, without the fields the API only accepts for NodePort / LoadBalancer services."""
    changed = False
    for doc in ctx.objects(finding.resource, ("Service",)):
        spec = child(doc, "spec")
        if spec.get("type") == "NodePort":
            spec["type"] = "ClusterIP"
            changed = True
        for key in ("externalTrafficPolicy", "healthCheckNodePort"):
            changed = pop_key(spec, key) or changed
        for port in spec.get("ports") or []:
            if isinstance(port, dict):
                changed = pop_key(port, "nodePort") or changed
    return changed


def fix_loadbalancer_unrestricted(ctx: K8sContext, finding: Finding) -> bool:
    """loadBalancerSourceRanges restricted to the internal range (internet-wide entries removed)."""
    changed = False
    for doc in ctx.objects(finding.resource, ("Service",)):
        spec = child(doc, "spec")
        if spec.get("type") != "LoadBalancer":
            continue
        ranges = spec.get("loadBalancerSourceRanges")
        kept = [r for r in ranges if str(r).strip() not in WORLD_RANGES] if isinstance(ranges, list) else []
        if kept != ranges or not kept:
            spec["loadBalancerSourceRanges"] = kept or [INTERNAL_SOURCE_RANGE]
            changed = True
        annotations = meta(doc).get("annotations")
        legacy = annotations.get(LB_RANGES_ANNOTATION) if isinstance(annotations, dict) else None
        if isinstance(annotations, dict) and isinstance(legacy, str):  # cloud controllers honour it too
            entries = [r.strip() for r in legacy.split(",") if r.strip() not in WORLD_RANGES]
            restricted = ",".join(entries or [INTERNAL_SOURCE_RANGE])
            changed = set_key(annotations, LB_RANGES_ANNOTATION, restricted) or changed
    return changed


def fix_ingress_no_tls(ctx: K8sContext, finding: Finding) -> bool:
    """A tls section for the Ingress's hosts, with the certificate in the Secret ``<ingress>-tls``."""
    changed = False
    for doc in ctx.objects(finding.resource, ("Ingress",)):
        spec = child(doc, "spec")
        if isinstance(spec.get("tls"), list) and spec["tls"]:
            continue
        hosts = list(dict.fromkeys(r["host"] for r in spec.get("rules") or []
                                   if isinstance(r, dict) and isinstance(r.get("host"), str)))
        entry: dict[str, Any] = ({"hosts": hosts} if hosts else {}) | {
            "secretName": f"{slug(str(meta(doc).get('name')), '-')}-tls"}
        spec["tls"] = [entry]
        changed = True
    return changed


def fix_missing_networkpolicy(ctx: K8sContext, finding: Finding) -> bool:
    """Append a default-deny (ingress and egress) NetworkPolicy to the flagged namespace, or to the namespace of
    the flagged workload (k8s-pod-no-networkpolicy: a policy with an empty podSelector selects every pod)."""
    kind, _, name = finding.resource.partition("/")
    if kind == "Namespace":
        namespaces = [name]
    else:
        namespaces = [str(meta(d).get("namespace") or "default") for d in ctx.objects(finding.resource)]
    changed = False
    for namespace in dict.fromkeys(namespaces):
        existing = ctx.names("NetworkPolicy", namespace)
        policy = "default-deny-all"
        while policy in existing:
            policy += "-x"
        if any(d.get("kind") == "NetworkPolicy" and meta(d).get("namespace") == namespace for d in ctx.added):
            changed = True  # another finding already added this namespace's policy, which covers this one too
            continue
        ctx.added.append({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                          "metadata": {"name": policy, "namespace": namespace},
                          "spec": {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}})
        changed = True
    return changed


# --- secrets -----------------------------------------------------------------------------------------------


def _configmap_refs(ctx: K8sContext, configmap: str, keys: set[str]) -> None:
    """Workloads reading a removed ConfigMap key now read it as a file of the Secret ``<configmap>-secret``."""
    for doc in ctx.all_docs():
        spec = pod_spec(doc)
        for container in pod_containers(spec) if spec else []:
            moved = []
            for entry in container.get("env") or []:
                ref = ((entry or {}).get("valueFrom") or {}).get("configMapKeyRef") if isinstance(entry, dict) else None
                if isinstance(ref, dict) and ref.get("name") == configmap and ref.get("key") in keys:
                    moved.append(entry)
            if moved and spec is not None:
                remove_env_entries(container, moved)
                mount_secret(spec, container, f"{configmap}-secret")


def fix_secret_in_configmap(ctx: K8sContext, finding: Finding) -> bool:
    """Remove the secret-looking keys from the ConfigMap (the value belongs in a Secret provisioned out of band).

    The key named by the finding's path is removed; otherwise every key whose name or value looks secret.
    Env references to a removed key become a file of the Secret ``<configmap>-secret``, mounted as a volume."""
    changed = False
    for doc in ctx.objects(finding.resource, ("ConfigMap",)):
        removed: set[str] = set()
        for section in ("data", "binaryData"):
            data = doc.get(section)
            if not isinstance(data, dict):
                continue
            named = {k for k in data if _named_in_path(str(k), finding.path)}
            for key in list(data):
                value = str(data[key])
                if key in named or (not named and (SECRET_NAME_RE.search(str(key))
                                                   or has_secret_literal(value, "cfg-hardcoded-aws-key")
                                                   or has_secret_literal(value, "cfg-hardcoded-private-key"))):
                    del data[key]
                    removed.add(str(key))
        if removed:
            _configmap_refs(ctx, str(meta(doc).get("name")), removed)
            changed = True
    return changed


def _redact(node: Any, rule_id: str) -> bool:
    """Delete every mapping entry or list item below ``node`` holding a literal of ``rule_id``'s secret pattern."""
    changed = False
    if isinstance(node, dict):
        for key in list(node):
            value = node[key]
            if isinstance(value, str) and has_secret_literal(value, rule_id):
                del node[key]
                changed = True
            else:
                changed = _redact(value, rule_id) or changed
    elif isinstance(node, list):
        for index in reversed(range(len(node))):
            item = node[index]
            if isinstance(item, str) and has_secret_literal(item, rule_id):
                del node[index]
                changed = True
            else:
                changed = _redact(item, rule_id) or changed
    return changed


def _redact_container(spec: dict[str, Any], container: dict[str, Any], rule_id: str, secret: str) -> bool:
    """Literal keys of one container into the Secret ``secret``, mounted as files: an env variable is removed (its
    value becomes the key of that name), a command/args item becomes the path of the mounted file."""
    entries = [e for e in container.get("env") or [] if isinstance(e, dict) and isinstance(e.get("value"), str)
               and has_secret_literal(e["value"], rule_id)]
    literal_args = [(key, i) for key in ("command", "args") if isinstance(container.get(key), list)
                    for i, arg in enumerate(container[key])
                    if isinstance(arg, str) and has_secret_literal(arg, rule_id)]
    if not entries and not literal_args:
        return False
    path = mount_secret(spec, container, secret)
    remove_env_entries(container, entries)
    file = "AWS_ACCESS_KEY_ID" if rule_id == "cfg-hardcoded-aws-key" else "PRIVATE_KEY"
    for key, index in literal_args:  # the flag must accept a file (most have a *-file variant)
        container[key][index] = f"{path}/{file}"
    return True


def fix_hardcoded_secret(ctx: K8sContext, finding: Finding) -> bool:
    """Private keys / AWS keys: in a container, into a Secret mounted as files (env variables removed, command or
    args pointing at the file); anywhere else (a ConfigMap, a Secret's data, an annotation) the entry is removed."""
    objects = ctx.objects(finding.resource) or list(ctx.all_docs())  # a line-placed finding may lack a resource
    changes = []
    for doc in objects:
        spec = pod_spec(doc)
        if spec is not None:
            changes += [_redact_container(spec, container, finding.rule_id, workload_secret(doc))
                        for container in pod_containers(spec)]
        changes.append(_redact(doc, finding.rule_id))
    return any_changed(changes)


K8S_FIXERS: dict[str, K8sFixer] = {
    "k8s-privileged-container": fix_privileged,
    "k8s-privilege-escalation": _set_container_sc("allowPrivilegeEscalation", False),
    "k8s-run-as-root": fix_run_as_root,
    "k8s-added-capabilities": fix_added_capabilities,
    "k8s-capabilities-not-dropped": fix_capabilities_not_dropped,
    "k8s-net-raw-not-dropped": fix_capabilities_not_dropped,  # drop: [ALL] drops NET_RAW too
    "k8s-host-network": _drop_pod_field("hostNetwork"),
    "k8s-host-pid": _drop_pod_field("hostPID"),
    "k8s-host-ipc": _drop_pod_field("hostIPC"),
    "k8s-hostpath-volume": fix_hostpath_volume,
    "k8s-host-port": fix_host_port,
    "k8s-writable-root-fs": _set_container_sc("readOnlyRootFilesystem", True),
    "k8s-missing-cpu-limit": _set_resource("limits", "cpu"),
    "k8s-missing-memory-limit": _set_resource("limits", "memory"),
    "k8s-missing-cpu-request": _set_resource("requests", "cpu"),
    "k8s-missing-memory-request": _set_resource("requests", "memory"),
    "k8s-latest-image-tag": fix_latest_image,
    "k8s-missing-liveness-probe": _add_probe("livenessProbe", 10),
    "k8s-missing-readiness-probe": _add_probe("readinessProbe", 5),
    "k8s-secret-in-env": fix_secret_in_env,
    "k8s-sa-token-automount": fix_sa_token_automount,
    "k8s-default-service-account": fix_default_service_account,
    "k8s-seccomp-not-set": fix_seccomp,
    "k8s-rbac-wildcard-verbs": fix_rbac_wildcards,
    "k8s-rbac-wildcard-resources": fix_rbac_wildcards,
    "k8s-cluster-admin-binding": fix_cluster_admin_binding,
    "k8s-nodeport-service": fix_nodeport_service,
    "k8s-loadbalancer-unrestricted": fix_loadbalancer_unrestricted,
    "k8s-ingress-no-tls": fix_ingress_no_tls,
    "k8s-missing-networkpolicy": fix_missing_networkpolicy,
    "k8s-pod-no-networkpolicy": fix_missing_networkpolicy,
    "k8s-secret-in-configmap": fix_secret_in_configmap,
    "cfg-hardcoded-private-key": fix_hardcoded_secret,
    "cfg-hardcoded-aws-key": fix_hardcoded_secret,
    **K8S_CHECKOV_FIXERS,
    **K8S_API_VERSION_FIXERS,
}

#: Rules whose fixes overlap: once one of a family changed a resource, a later finding of the family on that
#: resource with nothing left to change counts as fixed (an AWS key in an env var is both a literal secret in
#: env and an AWS key; RBAC verbs and resources are narrowed together).
FIX_FAMILIES = {"k8s-secret-in-env": "secrets", "k8s-secret-in-configmap": "secrets",
                "cfg-hardcoded-private-key": "secrets", "cfg-hardcoded-aws-key": "secrets",
                "k8s-rbac-wildcard-verbs": "rbac", "k8s-rbac-wildcard-resources": "rbac", **K8S_CHECKOV_FAMILIES}


def fix_kubernetes(text: str, findings: list[Finding]) -> tuple[str, list[Finding], list[Skipped]]:
    """Apply every known fixer to the flagged objects; the fixed text, the findings fixed and those skipped."""
    original = list(yaml.load_all(text, Loader=FAST_LOADER))
    ctx = K8sContext(docs=copy.deepcopy(original))
    fixed: list[Finding] = []
    skipped: list[Skipped] = []
    unchanged: list[Finding] = []
    applied: set[tuple[str, str]] = set()  # (family, resource) pairs a fix changed
    for finding in findings:
        fixer = K8S_FIXERS.get(finding.rule_id)
        family = (FIX_FAMILIES.get(finding.rule_id, finding.rule_id), finding.resource)
        if fixer is None:
            skipped.append(Skipped(finding.rule_id, finding.resource, "no Kubernetes fixer for this rule"))
        elif not ctx.objects(finding.resource) and finding.rule_id not in FILE_LEVEL_RULES:
            skipped.append(Skipped(finding.rule_id, finding.resource, "resource not found in the manifest"))
        elif fixer(ctx, finding) or family in applied:
            fixed.append(finding)
            applied.add(family)
        else:
            unchanged.append(finding)
    out = text if ctx.docs == original and not ctx.added else render(text, original, ctx)
    stripped = strip_secret_comments(out, {f.rule_id for f in findings if f.rule_id in SECRET_RULES})
    for finding in unchanged:
        if finding.rule_id in SECRET_RULES and stripped != out:
            fixed.append(finding)  # the literal was in a comment, which the documents do not show
        else:
            skipped.append(Skipped(finding.rule_id, finding.resource, "nothing to change"))
    return stripped, fixed, skipped


SECRET_RULES = frozenset({"cfg-hardcoded-private-key", "cfg-hardcoded-aws-key"})
#: Rules whose finding may name no object (a line outside every document is reported on "file").
FILE_LEVEL_RULES = SECRET_RULES | {"k8s-missing-networkpolicy"}


def strip_secret_comments(text: str, rule_ids: set[str]) -> str:
    r"""Delete YAML comments that still hold a secret after the documents were fixed: a scanner reads them too.

    >>> strip_secret_comments("a: 1  # AKIAIOSFODNN7EXAMPLE\n# AKIAIOSFODNN7EXAMPLE\nb: 2\n", {"cfg-hardcoded-aws-key"})
    'a: 1\nb: 2\n'
    """
    if not rule_ids:
        return text
    out = []
    for line in text.splitlines(keepends=True):
        if not any(has_secret_literal(line, rule_id) for rule_id in rule_ids):
            out.append(line)
        elif line.lstrip().startswith("#"):
            continue
        elif (cut := line.find(" #")) >= 0 and not any(has_secret_literal(line[:cut], r) for r in rule_ids):
            out.append(line[:cut].rstrip() + ("\n" if line.endswith("\n") else ""))
        else:
            out.append(line)
    return "".join(out)
