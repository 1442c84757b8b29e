"""What Checkov's Kubernetes *graph* checks will report on a base, predicted so that operators stay exact.

Two families of pinned-Checkov (3.3.30) graph checks judge one object by its connections to others, so an edit of
one object can add a finding on another:

* CKV2_K8S_6 (``k8s-pod-no-networkpolicy``): a pod that no NetworkPolicy selects. Checkov connects a policy to
  a pod when its ``podSelector.matchLabels`` is a subset of the pod's labels, when the selector has no
  ``matchLabels`` at all (``podSelector: {}`` selects every pod), or when the pod has no labels. It ignores
  namespaces. The pods are standalone
  Pods and the pod templates of the kinds Checkov unfolds (not CronJobs); the engine reports a template's
  finding on its workload.
* CKV2_K8S_1-5 (``k8s-rbac-sa-*``): a RoleBinding / ClusterRoleBinding whose ServiceAccount or Node subjects get
  a dangerous permission from the role it references (matched by ``roleRef`` kind and name, namespaces ignored).
  Checkov reads the role's ``rules.resources`` / ``rules.verbs`` as attributes, which resolve only when the role
  has exactly one rule: a role of several rules never fails these checks (a Checkov quirk, measured).

The functions here replicate exactly that (quirks included): the generator's self-check compares their
prediction with the oracle on every item, so a drift in Checkov shows up as a failed self-check, not as wrong
labels.
"""

from __future__ import annotations

from typing import Any

from security_verifiers.engines.configs import POD_SPEC_PATHS

Doc = dict[str, Any]

#: Kinds whose pod template Checkov unfolds into a Pod of the graph (checkov.kubernetes.kubernetes_utils).
UNFOLDED_KINDS = frozenset({"Deployment", "DeploymentConfig", "DaemonSet", "Job", "ReplicaSet",
                            "ReplicationController", "StatefulSet"})
BINDING_KINDS = ("RoleBinding", "ClusterRoleBinding")
ROLE_KINDS = ("Role", "ClusterRole")

#: CKV2_K8S_1-5 as (rule id, resources, verbs): a one-rule role granting any of the verbs on any of the resources
#: ("*" counts for both). CKV2_K8S_5 (secrets) also passes when the rule names ``resourceNames``.
RBAC_GRAPH_RULES = (
    ("k8s-rbac-sa-can-bind", {"clusterrolebindings", "rolebindings", "*"}, {"bind", "*"}),
    ("k8s-rbac-sa-can-exec", {"pods/exec", "nodes/proxy", "*"}, {"create", "*"}),
    ("k8s-rbac-sa-can-impersonate", {"groups", "users", "serviceaccounts", "*"}, {"impersonate", "*"}),
    ("k8s-rbac-sa-can-update-service-status", {"services/status", "*"}, {"update", "patch", "*"}),
    ("k8s-rbac-sa-can-read-all-secrets", {"secrets", "*"}, {"get", "watch", "list", "*"}),
)


def resource_of(doc: Doc) -> str:
    return f"{doc['kind']}/{doc['metadata']['name']}"


# --------------------------------------------------------------------------------------------------
# NetworkPolicy coverage (CKV2_K8S_6)
# --------------------------------------------------------------------------------------------------
#: The labels of a pod whose metadata has none (Checkov then connects it to every policy with a podSelector).
UNLABELLED: dict[str, str] = {}


def graph_pod_labels(doc: Doc) -> dict[str, str] | None:
    """The labels of the pod Checkov builds from ``doc`` (None when it builds none: a CronJob, a Service...);
    :data:`UNLABELLED` (this very object) when the pod's metadata has no labels."""
    kind = doc.get("kind")
    if kind == "Pod":
        meta = doc.get("metadata") or {}
    elif kind in UNFOLDED_KINDS and kind in POD_SPEC_PATHS:
        template = (doc.get("spec") or {}).get("template")
        meta = template.get("metadata") if isinstance(template, dict) else None
        if not isinstance(meta, dict) or (meta.get("labels") is None and meta.get("name") is None):
            return None
    else:
        return None
    labels = meta.get("labels")
    return dict(labels) if isinstance(labels, dict) and labels else UNLABELLED


def selects(policy: Doc, pod_labels: dict[str, str]) -> bool:
    """Whether Checkov connects the NetworkPolicy to a pod with these labels."""
    selector = (policy.get("spec") or {}).get("podSelector")
    if not isinstance(selector, dict):
        return False
    match = selector.get("matchLabels")
    if not match or pod_labels is UNLABELLED:  # no labels to match, or a pod without labels: connected
        return True
    return all(pod_labels.get(key) == value for key, value in match.items())


def unselected_pods(docs: list[Doc]) -> list[str]:
    """Workloads whose pods no NetworkPolicy of ``docs`` selects: where CKV2_K8S_6 fires."""
    policies = [d for d in docs if d.get("kind") == "NetworkPolicy"]
    out = []
    for doc in docs:
        labels = graph_pod_labels(doc)
        if labels is not None and not any(selects(p, labels) for p in policies):
            out.append(resource_of(doc))
    return sorted(out)


def networkpolicy_spillover(docs: list[Doc], resource: str) -> list[tuple[str, str]]:
    """``k8s-pod-no-networkpolicy`` on every workload left unselected (the operator's own resource aside)."""
    return [("k8s-pod-no-networkpolicy", r) for r in unselected_pods(docs) if r != resource]


# --------------------------------------------------------------------------------------------------
# RBAC graph checks (CKV2_K8S_1-5)
# --------------------------------------------------------------------------------------------------
def bound_roles(docs: list[Doc], binding: Doc) -> list[Doc]:
    """The roles of ``docs`` that Checkov connects to ``binding`` (same kind and name as its roleRef)."""
    ref = binding.get("roleRef") or {}
    return [d for d in docs if d.get("kind") in ROLE_KINDS and d.get("kind") == ref.get("kind")
            and (d.get("metadata") or {}).get("name") == ref.get("name")]


def graph_rule_hits(role: Doc) -> set[str]:
    """The CKV2_K8S_1-5 rules a binding to ``role`` fails (only a one-rule role can fail them)."""
    rules = role.get("rules") or []
    if len(rules) != 1 or not isinstance(rules[0], dict):
        return set()
    rule = rules[0]
    resources, verbs = set(rule.get("resources") or []), set(rule.get("verbs") or [])
    hits = set()
    for rule_id, bad_resources, bad_verbs in RBAC_GRAPH_RULES:
        if resources & bad_resources and verbs & bad_verbs:
            if rule_id == "k8s-rbac-sa-can-read-all-secrets" and rule.get("resourceNames"):
                continue
            hits.add(rule_id)
    return hits


def rbac_graph_findings(docs: list[Doc]) -> set[tuple[str, str]]:
    """(rule, binding) for every CKV2_K8S_1-5 failure of ``docs``."""
    out: set[tuple[str, str]] = set()
    for doc in docs:
        if doc.get("kind") not in BINDING_KINDS:
            continue
        subjects = doc.get("subjects") or []
        if not subjects or any(s.get("kind") not in ("ServiceAccount", "Node") for s in subjects):
            continue
        for role in bound_roles(docs, doc):
            out.update((rule_id, resource_of(doc)) for rule_id in graph_rule_hits(role))
    return out
