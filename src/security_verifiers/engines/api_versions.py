"""Kubernetes API versions the API server no longer serves, and what replaced them.

Real manifests are often older than the cluster they target: ``extensions/v1beta1`` Deployments, ``batch/v1beta1``
CronJobs, ``policy/v1beta1`` PodDisruptionBudgets. Such a file is not malformed; it will be refused by a current
API server, which the catalog rule ``k8s-removed-api-version`` reports (implemented in Rego,
``policies/kubernetes/api_versions.rego``, which holds the same table; a test keeps the two equal). Validation
checks these objects against the schema of their replacement (so that migrating the apiVersion is judged like
any other edit) and the autofixer migrates them. Source: the Kubernetes deprecated API migration guide.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RemovedApi:
    """``kind`` at ``api_version`` stopped being served in Kubernetes ``removed_in``; ``replacement`` is the
    apiVersion to use instead (None when the kind itself is gone, e.g. PodSecurityPolicy)."""

    api_version: str
    kind: str
    removed_in: str
    replacement: str | None


def _entries(api_versions: tuple[str, ...], kinds: tuple[str, ...], removed_in: str,
             replacement: str | None) -> list[RemovedApi]:
    return [RemovedApi(a, k, removed_in, replacement) for a in api_versions for k in kinds]


_RBAC = ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")
_STORAGE = ("StorageClass", "CSIDriver", "CSINode", "VolumeAttachment")

#: (apiVersion, kind) -> what happened to it.
REMOVED_APIS: dict[tuple[str, str], RemovedApi] = {(r.api_version, r.kind): r for r in [
    *_entries(("extensions/v1beta1", "apps/v1beta2"), ("Deployment", "DaemonSet", "ReplicaSet"), "1.16", "apps/v1"),
    *_entries(("apps/v1beta1", "apps/v1beta2"), ("Deployment", "StatefulSet"), "1.16", "apps/v1"),
    *_entries(("apps/v1beta1",), ("ControllerRevision",), "1.16", "apps/v1"),
    *_entries(("extensions/v1beta1",), ("NetworkPolicy",), "1.16", "networking.k8s.io/v1"),
    *_entries(("extensions/v1beta1",), ("PodSecurityPolicy",), "1.16", None),
    *_entries(("extensions/v1beta1", "networking.k8s.io/v1beta1"), ("Ingress",), "1.22", "networking.k8s.io/v1"),
    *_entries(("networking.k8s.io/v1beta1",), ("IngressClass",), "1.22", "networking.k8s.io/v1"),
    *_entries(("rbac.authorization.k8s.io/v1beta1", "rbac.authorization.k8s.io/v1alpha1"), _RBAC, "1.22",
              "rbac.authorization.k8s.io/v1"),
    *_entries(("admissionregistration.k8s.io/v1beta1",),
              ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"), "1.22",
              "admissionregistration.k8s.io/v1"),
    *_entries(("apiextensions.k8s.io/v1beta1",), ("CustomResourceDefinition",), "1.22", "apiextensions.k8s.io/v1"),
    *_entries(("apiregistration.k8s.io/v1beta1",), ("APIService",), "1.22", "apiregistration.k8s.io/v1"),
    *_entries(("certificates.k8s.io/v1beta1",), ("CertificateSigningRequest",), "1.22", "certificates.k8s.io/v1"),
    *_entries(("coordination.k8s.io/v1beta1",), ("Lease",), "1.22", "coordination.k8s.io/v1"),
    *_entries(("scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1alpha1"), ("PriorityClass",), "1.22",
              "scheduling.k8s.io/v1"),
    *_entries(("storage.k8s.io/v1beta1",), _STORAGE, "1.22", "storage.k8s.io/v1"),
    *_entries(("batch/v1beta1", "batch/v2alpha1"), ("CronJob",), "1.25", "batch/v1"),
    *_entries(("discovery.k8s.io/v1beta1",), ("EndpointSlice",), "1.25", "discovery.k8s.io/v1"),
    *_entries(("events.k8s.io/v1beta1",), ("Event",), "1.25", "events.k8s.io/v1"),
    *_entries(("autoscaling/v2beta1",), ("HorizontalPodAutoscaler",), "1.25", "autoscaling/v2"),
    *_entries(("autoscaling/v2beta2",), ("HorizontalPodAutoscaler",), "1.26", "autoscaling/v2"),
    *_entries(("policy/v1beta1",), ("PodDisruptionBudget",), "1.25", "policy/v1"),
    *_entries(("policy/v1beta1",), ("PodSecurityPolicy",), "1.25", None),
    *_entries(("node.k8s.io/v1beta1",), ("RuntimeClass",), "1.25", "node.k8s.io/v1"),
    *_entries(("storage.k8s.io/v1beta1",), ("CSIStorageCapacity",), "1.27", "storage.k8s.io/v1"),
]}


def removed_api(api_version: object, kind: object) -> RemovedApi | None:
    """The entry for a removed (apiVersion, kind), or None when it is served (or not a built-in at all).

    >>> removed_api("extensions/v1beta1", "Deployment").replacement, removed_api("apps/v1", "Deployment")
    ('apps/v1', None)
    """
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return None
    return REMOVED_APIS.get((api_version, kind))
