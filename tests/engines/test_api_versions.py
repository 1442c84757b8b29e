"""Removed Kubernetes API versions: one table (engines.api_versions) read by the Rego rule k8s-removed-api-version,
by validation (the object is checked against its replacement's schema) and by the autofixer; custom resources are
recorded as unchecked, not failed."""

from __future__ import annotations

import pytest

from security_verifiers.engines.api_versions import REMOVED_APIS
from security_verifiers.engines.rego import RegoEngine
from security_verifiers.engines.validate import validate

ENGINE = RegoEngine()


def test_the_rego_table_is_the_python_table() -> None:
    docs = [f"apiVersion: {api}\nkind: {kind}\nmetadata:\n  name: x{i}\n" for i, (api, kind) in
            enumerate(sorted(REMOVED_APIS))]
    found = {f.resource: f.message for f in ENGINE.scan("kubernetes", "---\n".join(docs))
             if f.rule_id == "k8s-removed-api-version"}
    assert len(found) == len(REMOVED_APIS)
    for i, ((api, kind), removed) in enumerate(sorted(REMOVED_APIS.items())):
        message = found[f"{kind}/x{i}"]
        assert api in message and f"Kubernetes {removed.removed_in}" in message
        assert (removed.replacement or "Pod Security Admission") in message


@pytest.mark.parametrize("api_version", ["apps/v1", "networking.k8s.io/v1", "batch/v1", "v1"])
def test_served_api_versions_do_not_fire(api_version: str) -> None:
    text = f"apiVersion: {api_version}\nkind: Deployment\nmetadata:\n  name: web\n"
    assert not [f for f in ENGINE.scan("kubernetes", text) if f.rule_id == "k8s-removed-api-version"]


DAEMONSET = """apiVersion: extensions/v1beta1
kind: DaemonSet
metadata:
  name: agent
spec:
  selector:
    matchLabels: {app: agent}
  template:
    metadata:
      labels: {app: agent}
    spec:
      containers:
        - name: agent
          image: agent:1.0
"""


def test_a_removed_api_version_is_validated_against_its_replacement() -> None:
    assert validate("kubernetes", DAEMONSET).ok  # a valid apps/v1 DaemonSet once migrated: not an invalid file
    typo = validate("kubernetes", DAEMONSET.replace("containers:", "containerz:"))
    assert not typo.ok and any("containerz" in e for e in typo.errors)  # its content is still checked
    no_selector = DAEMONSET.replace("  selector:\n    matchLabels: {app: agent}\n", "")
    assert any("selector" in e for e in validate("kubernetes", no_selector).errors)  # what apps/v1 requires


@pytest.mark.parametrize(("text", "unchecked"), [
    # a custom resource: structure checked, content not
    ("apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata:\n  name: web\nspec:\n  anything: 1\n",
     "ServiceMonitor/web"),
    # a kind that is gone with no replacement
    ("apiVersion: policy/v1beta1\nkind: PodSecurityPolicy\nmetadata:\n  name: restricted\nspec: {}\n",
     "PodSecurityPolicy/restricted"),
])
def test_kinds_without_a_schema_are_recorded_unchecked_not_failed(text: str, unchecked: str) -> None:
    result = validate("kubernetes", text)
    assert result.ok and [u.split(":")[0] for u in result.unchecked] == [unchecked]


@pytest.mark.parametrize("text", [
    # a built-in kind at an apiVersion it never had: not a way out of its schema
    "apiVersion: apps/v9\nkind: Deployment\nmetadata:\n  name: web\n",
    # a custom resource still needs a well-formed apiVersion
    "apiVersion: Monitoring/V1\nkind: ServiceMonitor\nmetadata:\n  name: web\n",
])
def test_malformed_or_unknown_versions_of_builtin_kinds_fail(text: str) -> None:
    result = validate("kubernetes", text)
    assert not result.ok and not result.unchecked
