"""What the Kubernetes mutation operators share: navigating a base's documents and the operator factories.

A factory turns a predicate (where the misconfiguration can be injected) and an edit (how) into an
:class:`Operator`: :func:`container_op` edits one container of a workload, :func:`pod_op` a pod spec,
:func:`doc_op` a whole object, and :func:`either` picks among several ways to break the same rule.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

from security_verifiers.engines.configs import pod_spec_of
from security_verifiers.envs.config_audit.generation.mutation_kit import Operator
from security_verifiers.envs.config_audit.generation.mutations_k8s_graph import resource_of
from security_verifiers.envs.config_audit.generation.templates_k8s import K8sBase

Doc = dict[str, Any]
ContainerPred = Callable[[Doc], bool]
ContainerEdit = Callable[[Doc, Doc, random.Random], None]  # (container, pod spec, rng)
Spillover = Callable[[K8sBase, str], list[tuple[str, str]]]

__all__ = ["ContainerEdit", "ContainerPred", "Doc", "container_op", "containers", "doc_op", "either", "find",
           "pod_op", "pod_spec", "resource_of", "sc", "workloads"]


def find(base: K8sBase, resource: str) -> Doc:
    for doc in base.docs:
        if resource_of(doc) == resource:
            return doc
    raise KeyError(resource)


def pod_spec(doc: Doc) -> Doc | None:
    """The pod spec of a workload of any kind (:func:`~security_verifiers.engines.configs.pod_spec_of`)."""
    return pod_spec_of(doc)


def workloads(base: K8sBase) -> Iterator[tuple[Doc, Doc]]:
    for doc in base.docs:
        spec = pod_spec(doc)
        if spec is not None:
            yield doc, spec


def containers(spec: Doc, init: bool = True) -> list[Doc]:
    keys = ("initContainers", "containers") if init else ("containers",)
    return [c for key in keys for c in spec.get(key) or []]


def sc(c: Doc) -> Doc:
    """A container's (or pod's) securityContext, which the caller has checked exists."""
    context: Doc = c["securityContext"]
    return context


def container_op(rule_id: str, eligible: ContainerPred, edit: ContainerEdit, init: bool = True,
                 skip_kinds: tuple[str, ...] = (), also: tuple[str, ...] = ()) -> Operator:
    """An operator that edits one eligible container of one workload."""

    def targets(base: K8sBase) -> list[str]:
        return [resource_of(d) for d, spec in workloads(base)
                if d["kind"] not in skip_kinds and any(eligible(c) for c in containers(spec, init))]

    def apply(base: K8sBase, resource: str, rng: random.Random) -> None:
        spec = pod_spec(find(base, resource))
        assert spec is not None
        chosen = rng.choice([c for c in containers(spec, init) if eligible(c)])
        edit(chosen, spec, rng)

    return Operator(rule_id, "kubernetes", targets, apply, also)


def pod_op(rule_id: str, eligible: Callable[[Doc], bool], edit: Callable[[Doc, random.Random], None],
           also: tuple[str, ...] = ()) -> Operator:
    """An operator that edits the pod spec of one workload."""

    def targets(base: K8sBase) -> list[str]:
        return [resource_of(d) for d, spec in workloads(base) if eligible(spec)]

    def apply(base: K8sBase, resource: str, rng: random.Random) -> None:
        spec = pod_spec(find(base, resource))
        assert spec is not None
        edit(spec, rng)

    return Operator(rule_id, "kubernetes", targets, apply, also)


def doc_op(rule_id: str, eligible: Callable[[Doc], bool], edit: Callable[[Doc, random.Random], None],
           also: tuple[str, ...] = ()) -> Operator:
    """An operator that edits one whole object (Service, Ingress, Role, binding, ConfigMap)."""

    def targets(base: K8sBase) -> list[str]:
        return [resource_of(d) for d in base.docs if eligible(d)]

    def apply(base: K8sBase, resource: str, rng: random.Random) -> None:
        edit(find(base, resource), rng)

    return Operator(rule_id, "kubernetes", targets, apply, also)


def either(rule_id: str, *ops: Operator) -> Operator:
    """One rule, several ways to break it (an env var or a ConfigMap key, say): pick among applicable ones.
    The ways must agree on ``also`` (it belongs to the rule's operator, not to one way)."""
    if len({op.also for op in ops}) != 1:
        raise ValueError(f"the ways of {rule_id} disagree on the rules they also violate")

    def targets(base: K8sBase) -> list[str]:
        return sorted({t for op in ops for t in op.targets(base)})

    def apply(base: K8sBase, resource: str, rng: random.Random) -> None:
        usable = [op for op in ops if resource in op.targets(base)]
        rng.choice(usable).apply(base, resource, rng)

    return Operator(rule_id, "kubernetes", targets, apply, ops[0].also)
