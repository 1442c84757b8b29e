"""Our Rego v1 policy library, evaluated in-process with regopy: the main engine of the config-audit oracle.

The policies live in ``policies/kubernetes/*.rego`` (package ``config_audit.kubernetes``) and
``policies/terraform/*.rego`` (package ``config_audit.terraform``); each package exposes ``findings``, an
array of ``{"rule_id", "resource", "path", "message"}`` objects. Rules see the whole file at once, so
cross-object rules (a bucket and its encryption configuration, a namespace and its NetworkPolicy) work.
Python only parses (``configs``) and reshapes the file into the input document; every decision is made
in Rego. The lib.rego of each package documents its input and the rego-cpp quirks the policies avoid.

Speed (warm, one typical file, see the tests' fixtures): ``Interpreter.query`` recompiles every module
on each call, so the library is compiled once into a bundle in ``__init__`` and each scan only sets
the input (~0.7 ms through the C input API) and runs the plan (~1-3 ms). Parsing (PyYAML, or
python-hcl2 at ~3-7 ms per Terraform file) is not ours and comes on top.

Strictness: every built-in error is fatal (``strict_built_in_errors``), and so is an unknown rule id: a
policy that trips over an unexpected value is a bug to fix, not a silently missing finding.

Thread-safety: a regopy ``Interpreter`` holds the current input as mutable state, so "set input, then
query" must be atomic, and rego-cpp's thread-safety is not documented. :class:`RegoEngine` therefore
serialises all regopy calls with a lock; parsing and building the input document run outside it, so
threads overlap their Python work. One engine may be shared by all threads of a process.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import math
import re
import threading
from pathlib import Path
from typing import Any

import regopy
from regopy import Input, Interpreter, rego_shared

from security_verifiers.engines.canonical import kubernetes_body
from security_verifiers.engines.configs import K8sObject, TerraformFile, parse_kubernetes, parse_terraform
from security_verifiers.engines.findings import Finding, Platform, catalog

POLICY_DIR = Path(__file__).parent / "policies"

#: platform -> (policy folder, bundle entrypoint of its ``findings`` set)
ENTRYPOINTS: dict[str, tuple[str, str]] = {
    "kubernetes": ("kubernetes", "config_audit/kubernetes/findings"),
    "terraform": ("terraform", "config_audit/terraform/findings"),
}


def policy_files() -> list[Path]:
    """Every Rego module of the library, in a stable order (the order feeds :meth:`RegoEngine.version`)."""
    return sorted(p for folder, _ in ENTRYPOINTS.values() for p in (POLICY_DIR / folder).glob("*.rego"))


def _scalar_text(value: Any) -> str:
    """A non-JSON scalar (YAML dates, bytes, ...) or mapping key as text, as ``json.dumps(default=str)`` would."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    return str(value)


#: Characters that JSON escapes inside strings.
_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f]')


def _string_term(text: str) -> bytes:
    """A string as rego-cpp stores it: JSON-escaped content without the quotes (its input API expects that;
    a raw quote or newline would corrupt the document)."""
    if _NEEDS_ESCAPE.search(text):
        text = json.dumps(text, ensure_ascii=False)[1:-1]
    return text.encode()


class _FastInput(Input):
    """An input document built straight through rego-cpp's C input API.

    ``set_input_term`` parses JSON with rego-cpp's own parser (~1.9 ms for a typical manifest);
    ``regopy.Input`` calls the C API through a Python wrapper per value (~1.2 ms) and does not escape
    strings (a value with a quote breaks the output). Calling the ctypes functions directly, with
    escaping, takes ~0.7 ms. Relies on regopy's ``rego_shared`` module, pinned with regopy (==1.5.2);
    :meth:`RegoEngine.raw_findings` falls back to ``set_input_term`` if it ever changes.
    """

    def __init__(self, value: Any) -> None:
        lib = rego_shared.rego
        string, integer, real = lib.regoInputString, lib.regoInputInt, lib.regoInputFloat
        boolean, null, item = lib.regoInputBoolean, lib.regoInputNull, lib.regoInputObjectItem
        obj, array = lib.regoInputObject, lib.regoInputArray
        impl = rego_shared.rego_new_input()
        failed = 0

        def add(v: Any) -> None:
            nonlocal failed
            t = type(v)
            if t is str:
                failed |= string(impl, _string_term(v))
            elif t is dict:
                for key, x in v.items():
                    failed |= string(impl, _string_term(key if type(key) is str else _scalar_text(key)))
                    add(x)
                    failed |= item(impl)
                failed |= obj(impl, len(v))
            elif t is list or t is tuple:
                for x in v:
                    add(x)
                failed |= array(impl, len(v))
            elif t is bool:
                failed |= boolean(impl, v)
            elif t is int:
                failed |= integer(impl, v) if -(2**63) <= v < 2**63 else real(impl, float(v))
            elif t is float:
                failed |= real(impl, v) if math.isfinite(v) else string(impl, str(v).encode())
            elif v is None:
                failed |= null(impl)
            else:
                failed |= string(impl, _string_term(_scalar_text(v)))

        try:
            add(value)
        except Exception:
            rego_shared.rego_free_input(impl)
            raise
        if failed:
            rego_shared.rego_free_input(impl)
            raise RuntimeError("rego-cpp rejected the input document")
        self._impl = impl


def input_json(document: Any) -> str:
    """``document`` as JSON for ``set_input_term`` (the slower path; NaN/Infinity and non-JSON scalars
    become strings)."""
    try:
        return json.dumps(document, default=_scalar_text, allow_nan=False)
    except ValueError:
        return json.dumps(_finite(document), default=_scalar_text, allow_nan=False)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


_FAST_INPUT = hasattr(rego_shared, "rego_new_input") and all(
    hasattr(getattr(rego_shared, "rego", None), name)
    for name in ("regoInputString", "regoInputInt", "regoInputFloat", "regoInputBoolean", "regoInputNull",
                 "regoInputObjectItem", "regoInputObject", "regoInputArray"))


def kubernetes_input(objects: list[K8sObject]) -> dict[str, Any]:
    """The Rego input for a manifest: the objects by kind, plus the workloads' pod specs and containers as flat lists.

    Only reshaping, no policy: rego-cpp spends microseconds per evaluation step, so building these views
    in Rego costs ten times more than here. Nothing is carried twice (a workload's body loses its
    ``spec``, a pod spec its container lists), because input conversion cost grows with size too.
    """
    by_kind: dict[str, list[dict[str, Any]]] = {}
    workloads: list[dict[str, Any]] = []
    containers: list[dict[str, Any]] = []
    for obj in objects:
        body = kubernetes_body(obj.kind, obj.body)  # meaning, canonically spelled (see canonical.py)
        doc = {"kind": obj.kind, "name": obj.name, "namespace": obj.namespace, "resource": obj.resource,
               "body": body}
        by_kind.setdefault(obj.kind, []).append(doc)
        spec = obj.pod_spec
        if spec is None:
            continue
        doc["body"] = {k: v for k, v in body.items() if k != "spec"}
        workloads.append({"resource": obj.resource, "kind": obj.kind, "namespace": obj.namespace,
                          "spec": {k: v for k, v in spec.items() if k not in _CONTAINER_LISTS}})
        for key, init in (("containers", False), ("initContainers", True)):
            value = spec.get(key)
            for container in value if isinstance(value, list) else []:
                if isinstance(container, dict):
                    containers.append({"resource": obj.resource, "kind": obj.kind, "init": init,
                                       "container": container,
                                       "pod_security_context": spec.get("securityContext")})
    return {"objects": by_kind, "workloads": workloads, "containers": containers}


#: Pod spec fields that the input carries separately (or, for ephemeral containers, not at all).
_CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")


def terraform_input(tf: TerraformFile) -> dict[str, Any]:
    """The Rego input for a Terraform file: resource and data blocks grouped by type (a rule reads only
    the types it is about), with plain attribute values."""
    groups: dict[str, dict[str, list[dict[str, Any]]]] = {"resource": {}, "data": {}}
    for b in tf.blocks:
        groups[b.block].setdefault(b.type, []).append(
            {"type": b.type, "name": b.name, "address": b.address, "attributes": b.attributes})
    return {"resources": groups["resource"], "data": groups["data"]}


class RegoEngine:
    """Loads and compiles the policy library once; :meth:`scan` evaluates it on one file."""

    def __init__(self) -> None:
        self._sources = {p.relative_to(POLICY_DIR).as_posix(): p.read_text(encoding="utf-8") for p in policy_files()}
        self._interpreter = Interpreter()
        self._interpreter.strict_built_in_errors = True
        for name, source in self._sources.items():
            self._interpreter.add_module(name, source)
        self._bundle = self._interpreter.build(None, [entry for _, entry in ENTRYPOINTS.values()])
        if not self._bundle.ok():
            raise RuntimeError("the Rego policy library does not compile")
        self._lock = threading.Lock()
        self._rules = catalog()
        # regopy's finalisers call into its C library; at interpreter exit that library's module globals
        # may already be gone, which prints spurious errors. Release the handles while they still exist.
        atexit.register(self.close)

    def close(self) -> None:
        """Free the compiled bundle and interpreter (also done at exit)."""
        with self._lock:
            self.__dict__.pop("_bundle", None)
            self.__dict__.pop("_interpreter", None)

    def version(self) -> str:
        """regopy's version and a digest of the policy sources: a change to either can change rewards."""
        digest = hashlib.sha256()
        for name, source in self._sources.items():
            digest.update(name.encode() + b"\0" + source.encode() + b"\0")
        return f"regopy-{regopy.__version__}+{digest.hexdigest()[:12]}"

    def scan(self, platform: Platform | str, text: str, context: tuple[str, ...] = ()) -> list[Finding]:
        """Findings of ``text``; raises ``ConfigParseError`` when it does not parse. ``context``: the other files
        of a Terraform module (their variables and locals are read when evaluating ``text``)."""
        if platform == "kubernetes":
            return self.scan_objects(parse_kubernetes(text))
        if platform == "terraform":
            return self.scan_terraform(parse_terraform(text, context))
        raise ValueError(f"unknown platform {platform!r}")

    def scan_objects(self, objects: list[K8sObject]) -> list[Finding]:
        """Findings of already-parsed Kubernetes objects (callers that parse once for several engines)."""
        return self._evaluate("kubernetes", kubernetes_input(objects))

    def scan_terraform(self, tf: TerraformFile) -> list[Finding]:
        """Findings of an already-parsed Terraform file."""
        return self._evaluate("terraform", terraform_input(tf))

    def raw_findings(self, platform: str, document: dict[str, Any]) -> list[dict[str, Any]]:
        """The ``findings`` array of ``platform``'s package for an input document, as Rego returns it."""
        entrypoint = ENTRYPOINTS[platform][1]
        with self._lock:
            if _FAST_INPUT:
                self._interpreter.set_input(_FastInput(document))
            else:  # pragma: no cover - regopy's internals changed
                self._interpreter.set_input_term(input_json(document))
            try:
                output = self._interpreter.query_bundle_entrypoint(self._bundle, entrypoint)
            except ValueError as err:  # regopy could not read the output JSON: a policy bug
                raise RuntimeError(f"Rego evaluation of {entrypoint} returned unreadable output: {err}") from err
            ok = output.ok()
            results = output.results
        if not ok:
            raise RuntimeError(f"Rego evaluation of {entrypoint} failed (a built-in error or a policy bug)")
        if not results or not results[0].expressions:
            raise RuntimeError(f"Rego returned no value for {entrypoint}")
        value = results[0].expressions[0]
        if not isinstance(value, list):
            raise RuntimeError(f"{entrypoint} is not an array: {value!r}")
        return value

    def _evaluate(self, platform: str, document: dict[str, Any]) -> list[Finding]:
        """Deduplicated, sorted findings (a rule may find one problem twice, e.g. through two container paths)."""
        findings = {self._to_finding(raw) for raw in self.raw_findings(platform, document)}
        return sorted(findings, key=lambda f: (f.resource, f.rule_id, f.path or "", f.message))

    def _to_finding(self, raw: dict[str, Any]) -> Finding:
        """A catalog-keyed Finding; an id outside the catalog is a policy bug, never a silent extra rule."""
        rule = self._rules.get(raw.get("rule_id", ""))
        if rule is None or rule.engine != "rego":
            raise RuntimeError(f"Rego policy reported rule id {raw.get('rule_id')!r}, not a rego rule of the catalog")
        path = raw.get("path")
        return Finding(rule_id=rule.id, resource=str(raw["resource"]), path=None if path is None else str(path),
                       engines=("rego",), severity=rule.severity, message=str(raw.get("message", "")))
