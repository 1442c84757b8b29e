"""Every workload kind goes through the one pod-spec accessor (``configs.POD_SPEC_PATHS`` / ``pod_spec_of``):
the policies fire on each kind, the autofixer repairs each kind, the inventory sees each kind's containers, the
mutation operators inject into each kind, and the scorer gives no fix to a patch that empties, drops or re-points
the containers of any kind (the hacks measured on real manifests, where ReplicationControllers were invisible)."""

from __future__ import annotations

import copy
import json
import random
from functools import cache
from typing import Any

import pytest
import yaml

from security_verifiers.core.types import Item, Message, Transcript
from security_verifiers.engines.configs import POD_SPEC_PATHS, inventory, pod_spec_of
from security_verifiers.engines.findings import catalog
from security_verifiers.engines.rego import RegoEngine
from security_verifiers.engines.validate import validate
from security_verifiers.envs.config_audit import ConfigAudit
from security_verifiers.envs.config_audit.autofix import autofix
from security_verifiers.envs.config_audit.generation.generator import findings_records
from security_verifiers.envs.config_audit.generation.mutations import operators
from security_verifiers.envs.config_audit.generation.templates_k8s import K8sBase, render_yaml
from security_verifiers.envs.config_audit.scoring import inventory_preserved
from security_verifiers.envs.kits.patching import unified_diff

KINDS = ["Pod", "Deployment", "ReplicaSet", "ReplicationController", "StatefulSet", "DaemonSet", "Job", "CronJob",
         "PodTemplate"]
LABELS = {"app": "app"}


def hardened_spec(kind: str) -> dict[str, Any]:
    """A pod spec no core rule fires on, with one init container and one main container."""
    security = {"privileged": False, "allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                "capabilities": {"drop": ["ALL"]}}
    resources = {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"cpu": "500m", "memory": "256Mi"}}
    probe = {"httpGet": {"path": "/healthz", "port": 8080}}
    spec: dict[str, Any] = {
        "serviceAccountName": "app", "automountServiceAccountToken": False,
        "securityContext": {"runAsNonRoot": True, "runAsUser": 10001, "seccompProfile": {"type": "RuntimeDefault"}},
        "initContainers": [{"name": "migrate", "image": "registry.example.com/shop/migrate:2.0.1",
                            "resources": resources, "securityContext": dict(security)}],
        "containers": [{"name": "app", "image": "registry.example.com/shop/app:1.4.2", "resources": resources,
                        "livenessProbe": probe, "readinessProbe": probe, "securityContext": dict(security)}]}
    if kind in ("Job", "CronJob"):
        spec["restartPolicy"] = "Never"
    return copy.deepcopy(spec)


def workload(kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    """A minimal valid object of ``kind`` around ``spec``, in namespace shop."""
    metadata = {"name": "app", "namespace": "shop", "labels": dict(LABELS)}
    template = {"metadata": {"labels": dict(LABELS)}, "spec": spec}
    selector = {"matchLabels": dict(LABELS)}
    group = {"Pod": "v1", "ReplicationController": "v1", "PodTemplate": "v1", "Job": "batch/v1",
             "CronJob": "batch/v1"}.get(kind, "apps/v1")
    doc: dict[str, Any] = {"apiVersion": group, "kind": kind, "metadata": metadata}
    if kind == "Pod":
        doc["spec"] = spec
    elif kind == "PodTemplate":
        doc["template"] = template
    elif kind == "ReplicationController":
        doc["spec"] = {"selector": dict(LABELS), "template": template}
    elif kind == "Job":
        doc["spec"] = {"template": template}
    elif kind == "CronJob":
        doc["spec"] = {"schedule": "0 3 * * *", "jobTemplate": {"spec": {"template": template}}}
    else:
        doc["spec"] = {"selector": selector, "template": template}
        if kind == "StatefulSet":
            doc["spec"]["serviceName"] = "app"
    return doc


def manifest(kind: str, spec: dict[str, Any] | None = None) -> str:
    deny = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": "default-deny", "namespace": "shop"},
            "spec": {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}}
    return render_yaml([workload(kind, spec or hardened_spec(kind)), deny])


def insecure(kind: str) -> str:
    """The hardened workload with a privileged main container and the host PID namespace."""
    spec = hardened_spec(kind)
    spec["hostPID"] = True
    spec["containers"][0]["securityContext"]["privileged"] = True
    return manifest(kind, spec)


@cache
def engine() -> RegoEngine:
    return RegoEngine()


def keys(text: str) -> set[tuple[str, str]]:
    return {f.key for f in engine().scan("kubernetes", text)}


def edit_specs(text: str, edit: Any) -> str:
    docs = list(yaml.safe_load_all(text))
    for doc in docs:
        spec = pod_spec_of(doc)
        if spec is not None:
            edit(spec)
    return render_yaml(docs)


def empty_containers(spec: dict[str, Any]) -> None:
    spec["initContainers"] = [*spec.get("initContainers", []), *spec["containers"]]
    spec["containers"] = []


def repoint_images(spec: dict[str, Any]) -> None:
    for container in [*spec.get("initContainers", []), *spec["containers"]]:
        container["image"] = "mirror.example.net/hardened/" + container["image"].rsplit("/", 1)[-1]


def drop_main_container(spec: dict[str, Any]) -> None:
    spec["containers"] = spec["containers"][1:] or [spec["initContainers"][0]]


def retag(spec: dict[str, Any]) -> None:
    for container in [*spec.get("initContainers", []), *spec["containers"]]:
        container["image"] = container["image"].split(":")[0] + ":9.9.9@sha256:" + "0" * 64


def test_the_accessor_covers_every_workload_kind_and_the_catalog_agrees() -> None:
    assert set(POD_SPEC_PATHS) == set(KINDS)
    kinds = {t for t in catalog()["k8s-privileged-container"].resource_types if not t.startswith("kubernetes_")}
    assert kinds == set(KINDS)  # (the kubernetes_* types are Terraform resources of the same rule)


@pytest.mark.parametrize("kind", KINDS)
def test_minimal_workloads_are_valid_and_clean(kind: str) -> None:
    text = manifest(kind)
    assert validate("kubernetes", text).ok, validate("kubernetes", text).errors
    assert keys(text) == set()


@pytest.mark.parametrize("kind", KINDS)
def test_rules_fire_on_every_kind(kind: str) -> None:
    # container-level (privileged) and pod-level (hostPID) rules
    assert keys(insecure(kind)) == {("k8s-privileged-container", f"{kind}/app"), ("k8s-host-pid", f"{kind}/app")}


@pytest.mark.parametrize("kind", KINDS)
def test_autofix_repairs_every_kind(kind: str) -> None:
    """Against the whole oracle (Checkov reads some kinds its own way: a ReplicationController's seccomp profile
    only from the legacy annotation)."""
    from security_verifiers.engines.oracle import get_oracle

    text = insecure(kind)
    before = get_oracle().scan("kubernetes", text)
    assert {("k8s-privileged-container", f"{kind}/app"), ("k8s-host-pid", f"{kind}/app")} <= before.keys
    result = autofix("kubernetes", text, before.findings)
    after = get_oracle().scan("kubernetes", result.text)
    assert after.valid and after.keys == set(), sorted(after.keys)
    assert inventory_preserved(inventory("kubernetes", text), inventory("kubernetes", result.text)) is None


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("edit", "kept"), [
    (empty_containers, False),  # every container moved to initContainers, `containers: []`
    (repoint_images, False),  # the same image names at another registry
    (drop_main_container, False),  # the main container dropped (an init container promoted)
    (retag, True),  # another tag pinned by digest: the same images
])
def test_inventory_sees_every_kind(kind: str, edit: Any, kept: bool) -> None:
    text = manifest(kind)
    problem = inventory_preserved(inventory("kubernetes", text), inventory("kubernetes", edit_specs(text, edit)))
    assert (problem is None) == kept, problem


@pytest.mark.parametrize("kind", KINDS)
def test_moving_a_workload_to_an_undeclared_namespace_changes_the_inventory(kind: str) -> None:
    text = manifest(kind)
    moved = text.replace("namespace: shop", "namespace: elsewhere")
    assert "moved from namespace shop" in (inventory_preserved(inventory("kubernetes", text),
                                                               inventory("kubernetes", moved)) or "")


#: Core operators that edit a pod spec or a container, with no kind excluded.
POD_OPERATORS = ("k8s-privileged-container", "k8s-privilege-escalation", "k8s-host-pid", "k8s-host-network",
                 "k8s-host-ipc", "k8s-writable-root-fs", "k8s-run-as-root")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("rule_id", POD_OPERATORS)
def test_mutation_operators_apply_to_every_kind(kind: str, rule_id: str) -> None:
    base = K8sBase("minimal", [workload(kind, hardened_spec(kind))])
    op = operators("kubernetes")[rule_id]
    assert op.targets(base) == [f"{kind}/app"]
    op.apply(base, f"{kind}/app", random.Random(0))
    assert (rule_id, f"{kind}/app") in keys(base.render())


ENV = ConfigAudit()


def _item(text: str) -> Item:
    from security_verifiers.engines.oracle import get_oracle

    result = get_oracle().scan("kubernetes", text)
    target = {"findings": findings_records(result.findings), "fixed": None, "mutations": []}
    return Item(id="kinds", split="local", input={"platform": "kubernetes", "filename": "app.yaml", "text": text},
                target=target, meta={})


@pytest.mark.parametrize("kind", KINDS)
def test_emptying_or_repointing_containers_earns_no_fix(kind: str) -> None:
    item = _item(insecure(kind))
    claims = [{"rule_id": f["rule_id"], "resource": f["resource"]} for f in item.target["findings"]]
    for edit in (empty_containers, repoint_images, drop_main_container):
        # the hack also "fixes" the findings, so that only the inventory stands between it and the reward
        hacked = autofix("kubernetes", item.input["text"], []).text
        hacked = edit_specs(autofix("kubernetes", hacked, engine().scan("kubernetes", hacked)).text, edit)
        patch = unified_diff(item.input["text"], hacked, "app.yaml")
        text = json.dumps({"findings": claims, "patch": patch})
        score = ENV.score(item, Transcript(messages=[Message(role="assistant", content=text)]))
        assert score.outcome["patch_fixed_w"] == 0 and score.components["patch"] == 0, (edit.__name__, score.outcome)
        assert "inventory changed" in score.outcome["patch_error"], score.outcome["patch_error"]
