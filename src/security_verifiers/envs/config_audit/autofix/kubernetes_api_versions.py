"""Autofix of ``k8s-removed-api-version``: move an object to the API version that replaced its removed one.

Most migrations only change ``apiVersion`` (the schemas are the same: CronJob, PodDisruptionBudget, RBAC,
StorageClass). Three need the body to follow, else the migrated object is refused by the API server:

* ``apps/v1`` workloads require ``spec.selector`` (the old versions defaulted it from the template labels):
  ``matchLabels`` is set to the pod template's labels, and a workload without template labels gets
  ``app: <name>`` on both;
* ``networking.k8s.io/v1`` Ingress renamed ``backend.serviceName/servicePort`` to
  ``backend.service.name/port.number|name``, ``spec.backend`` to ``spec.defaultBackend``, and requires
  ``pathType`` (``ImplementationSpecific`` keeps the old controller-defined matching);
* ``autoscaling/v2`` HorizontalPodAutoscaler metrics moved their targets into ``target`` (Resource metrics with
  ``targetAverageUtilization`` / ``targetAverageValue`` are converted).

A kind that is gone (PodSecurityPolicy) has nothing to migrate to: the finding is left (skipped).
"""

from __future__ import annotations

from typing import Any

from security_verifiers.engines.api_versions import removed_api
from security_verifiers.engines.findings import Finding
from security_verifiers.envs.config_audit.autofix.yaml_text import K8sContext, child, meta

APPS_V1_WORKLOADS = frozenset({"Deployment", "DaemonSet", "ReplicaSet", "StatefulSet"})


def fix_removed_api_version(ctx: K8sContext, finding: Finding) -> bool:
    """Set the replacement apiVersion of every object of the finding's resource that uses a removed one."""
    changed = False
    for doc in ctx.objects(finding.resource):
        removed = removed_api(doc.get("apiVersion"), doc.get("kind"))
        if removed is None or removed.replacement is None:
            continue
        doc["apiVersion"] = removed.replacement
        if removed.replacement == "apps/v1" and doc.get("kind") in APPS_V1_WORKLOADS:
            _add_selector(doc)
        elif doc.get("kind") == "Ingress":
            _migrate_ingress(doc)
        elif doc.get("kind") == "HorizontalPodAutoscaler":
            _migrate_hpa(doc)
        changed = True
    return changed


def _add_selector(doc: dict[str, Any]) -> None:
    """``spec.selector.matchLabels`` from the template labels, which apps/v1 no longer defaults."""
    spec = child(doc, "spec")
    if isinstance(spec.get("selector"), dict) and spec["selector"]:
        return
    template_meta = child(child(spec, "template"), "metadata")
    labels = template_meta.get("labels")
    if not isinstance(labels, dict) or not labels:
        labels = template_meta["labels"] = {"app": str(meta(doc).get("name"))}
    spec["selector"] = {"matchLabels": dict(labels)}


def _backend(old: Any) -> Any:
    """An extensions/v1beta1 backend (``serviceName``, ``servicePort``) in the networking.k8s.io/v1 shape."""
    if not isinstance(old, dict) or "serviceName" not in old:
        return old
    port = old.get("servicePort")
    new = {k: v for k, v in old.items() if k not in ("serviceName", "servicePort")}
    new["service"] = {"name": old["serviceName"],
                      "port": {"number": port} if isinstance(port, int) else {"name": str(port)}}
    return new


def _migrate_ingress(doc: dict[str, Any]) -> None:
    spec = doc.get("spec")
    if not isinstance(spec, dict):
        return
    if "backend" in spec and "defaultBackend" not in spec:
        spec["defaultBackend"] = _backend(spec.pop("backend"))
    for rule in spec.get("rules") or []:
        http = rule.get("http") if isinstance(rule, dict) else None
        for path in (http.get("paths") or []) if isinstance(http, dict) else []:
            if isinstance(path, dict):
                path["backend"] = _backend(path.get("backend"))
                path.setdefault("pathType", "ImplementationSpecific")


def _migrate_hpa(doc: dict[str, Any]) -> None:
    spec = doc.get("spec")
    for metric in (spec.get("metrics") or []) if isinstance(spec, dict) else []:
        resource = metric.get("resource") if isinstance(metric, dict) else None
        if not isinstance(resource, dict) or "target" in resource:
            continue
        if "targetAverageUtilization" in resource:
            resource["target"] = {"type": "Utilization",
                                  "averageUtilization": resource.pop("targetAverageUtilization")}
        elif "targetAverageValue" in resource:
            resource["target"] = {"type": "AverageValue", "averageValue": resource.pop("targetAverageValue")}


K8S_API_VERSION_FIXERS = {"k8s-removed-api-version": fix_removed_api_version}
