"""The mutation operator of ``k8s-removed-api-version``: an object moved back to an API version the API server no
longer serves.

Only versions whose schema is the one of today's version are used (apps/v1beta2 workloads, batch/v1beta1
CronJobs, policy/v1beta1 PodDisruptionBudgets, rbac v1beta1 objects), so the edit changes nothing but the
``apiVersion``: validation checks a removed version against its replacement's schema and every other rule reads
the same body, which keeps the operator precise. The autofixer migrates it back.
"""

from __future__ import annotations

import random

from security_verifiers.engines.api_versions import removed_api
from security_verifiers.envs.config_audit.generation.mutation_kit import Operator
from security_verifiers.envs.config_audit.generation.mutations_k8s_kit import Doc, doc_op

_RBAC = "rbac.authorization.k8s.io"

#: (served apiVersion, kind) -> a removed apiVersion of the same kind with the same schema.
OLD_VERSIONS: dict[tuple[str, str], str] = {
    **{("apps/v1", kind): "apps/v1beta2" for kind in ("Deployment", "DaemonSet", "ReplicaSet", "StatefulSet")},
    ("batch/v1", "CronJob"): "batch/v1beta1",
    ("policy/v1", "PodDisruptionBudget"): "policy/v1beta1",
    **{(f"{_RBAC}/v1", kind): f"{_RBAC}/v1beta1" for kind in ("Role", "ClusterRole", "RoleBinding",
                                                              "ClusterRoleBinding")},
}

# every old version is one the rule reports, and migrates back to where it came from
for (_served, _kind), _old in OLD_VERSIONS.items():
    _entry = removed_api(_old, _kind)
    if _entry is None or _entry.replacement != _served:
        raise ValueError(f"{_kind} {_old} does not migrate back to {_served}")


def _served_version(doc: Doc) -> bool:
    return (doc.get("apiVersion"), doc.get("kind")) in OLD_VERSIONS


def _downgrade(doc: Doc, rng: random.Random) -> None:
    doc["apiVersion"] = OLD_VERSIONS[(doc["apiVersion"], doc["kind"])]


def removed_api_version_operator() -> Operator:
    """One object of a base moved to the removed apiVersion of its kind."""
    return doc_op("k8s-removed-api-version", _served_version, _downgrade)
