"""Validity of Kubernetes manifests (strict schema, offline) and Terraform files (HCL structure)."""

from __future__ import annotations

import kubernetes_validate
import pytest
import yaml

from security_verifiers.engines.validate import KUBERNETES_VERSION, schema_errors, validate

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: shop
spec:
  containers:
    - name: app
      image: nginx:1.27
      ports:
        - containerPort: 8080
      resources:
        limits: {cpu: 1, memory: 128Mi}
"""
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  selector:
    matchLabels: {app: api}
  template:
    metadata:
      labels: {app: api}
    spec:
      containers:
        - name: api
          image: api:2.0
"""

# (case, text, ok, parsed, a substring of the first error)
K8S_CASES = [
    # A valid Pod (an integer cpu quantity is allowed).
    ("valid pod", POD, True, True, None),
    # Two valid documents.
    ("valid multi-doc", POD + "---\n" + DEPLOYMENT, True, True, None),
    # A date in an annotation is a string for the API server, not a type error.
    ("date annotation", POD.replace("  namespace: shop\n", "  namespace: shop\n  annotations:\n    at: 2024-01-01\n"),
     True, True, None),
    # Strict schema: an unknown field inside the container.
    ("unknown field", POD.replace("      image: nginx:1.27\n", "      image: nginx:1.27\n      privilegd: true\n"),
     False, True, "'privilegd' was unexpected"),
    # A wrong type: containerPort must be an integer.
    ("wrong type", POD.replace("containerPort: 8080", 'containerPort: "8080"'), False, True,
     "is not of type 'integer'"),
    # apiVersion missing.
    ("missing apiVersion", POD.replace("apiVersion: v1\n", ""), False, True, "apiVersion is missing"),
    # A kind that does not exist in this apiVersion (Deployment is apps/v1, not v1).
    ("kind/apiVersion mismatch", DEPLOYMENT.replace("apps/v1", "v1"), False, True, "is not an object"),
    # A sub-object schema shipped by kubernetes-validate is not a top-level kind.
    ("sub-object kind", "apiVersion: v1\nkind: Affinity\nmetadata:\n  name: a\n", False, True, "is not an object"),
    # A kind of no built-in group at a core apiVersion: not a custom resource (those live in a dotted group).
    ("unknown core kind", "apiVersion: v1\nkind: Widget\nmetadata:\n  name: w\n", False, True, "is not an object"),
    # The same Kind/name twice in one namespace.
    ("duplicate object", POD + "---\n" + POD, False, True, "declared twice"),
    # Broken YAML: not parsed.
    ("broken yaml", POD + "  - : [\n", False, False, "YAML does not parse"),
    # No metadata.name: no identity, not parsed.
    ("no name", "apiVersion: v1\nkind: Pod\nspec: {}\n", False, False, "lacks kind or metadata.name"),
    # Only comments: no object at all.
    ("empty", "# nothing here\n", False, False, "no Kubernetes object"),
]

TF_CASES = [
    # Resources and data sources with type and name.
    ("valid", 'resource "aws_s3_bucket" "b" {\n  bucket = "x"\n}\n\ndata "aws_caller_identity" "me" {}\n', True, True,
     None),
    # A resource and a data source may share type and name: different addresses.
    ("resource and data same name", 'resource "a_b" "x" {}\ndata "a_b" "x" {}\n', True, True, None),
    # Broken HCL.
    ("broken hcl", 'resource "aws_s3_bucket" "b" {\n  bucket = \n}\n', False, False, "HCL does not parse"),
    # A resource block with one label (no name).
    ("missing name", 'resource "aws_s3_bucket" {\n  bucket = "x"\n}\n', False, False, "has no name label"),
    # A resource block with no label.
    ("no labels", "resource {\n}\n", False, False, "has no type label"),
    # Three labels.
    ("three labels", 'resource "a" "b" "c" {\n  x = 1\n}\n', False, False, "exactly two labels"),
    # The same address twice.
    ("duplicate address", 'resource "a" "b" {}\nresource "a" "b" {}\n', False, True, "declared twice"),
]


@pytest.mark.parametrize(("case", "text", "ok", "parsed", "error"), K8S_CASES, ids=[c[0] for c in K8S_CASES])
def test_kubernetes(case: str, text: str, ok: bool, parsed: bool, error: str | None) -> None:
    result = validate("kubernetes", text)
    assert (result.ok, result.parsed) == (ok, parsed), result.errors
    if error is None:
        assert result.errors == []
    else:
        assert error in result.errors[0]


@pytest.mark.parametrize(("case", "text", "ok", "parsed", "error"), TF_CASES, ids=[c[0] for c in TF_CASES])
def test_terraform(case: str, text: str, ok: bool, parsed: bool, error: str | None) -> None:
    result = validate("terraform", text)
    assert (result.ok, result.parsed) == (ok, parsed), result.errors
    if error is None:
        assert result.errors == []
    else:
        assert error in result.errors[0]


@pytest.mark.parametrize("case", [c for c in K8S_CASES if c[3] and c[0] not in (
    "duplicate object", "date annotation", "missing apiVersion")], ids=lambda c: c[0])
def test_cached_validators_agree_with_kubernetes_validate(case: tuple) -> None:
    # Our cached validators and kubernetes_validate.validate(strict=True) accept and reject the same objects.
    for body in yaml.safe_load_all(case[1]):
        ours = not schema_errors(body)
        try:
            kubernetes_validate.validate(body, KUBERNETES_VERSION, strict=True)
            theirs = True
        except (kubernetes_validate.ValidationError, kubernetes_validate.SchemaNotFoundError):
            theirs = False
        if body.get("kind") == "Affinity":  # they validate it against the sub-object schema; we reject it
            continue
        assert ours == theirs, body


def test_errors_are_capped_per_object() -> None:
    containers = "".join(f"    - name: c{i}\n      image: x\n      bogus{i}: 1\n" for i in range(8))
    text = f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n{containers}"
    result = validate("kubernetes", text)
    assert not result.ok and len(result.errors) == 6 and "3 more" in result.errors[-1]


def test_unknown_platform() -> None:
    with pytest.raises(ValueError):
        validate("helm", "")
