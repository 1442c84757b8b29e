"""Is a config (an original or a model's patched one) a valid Kubernetes manifest / Terraform file?

A patch that "fixes" a violation by breaking the file must not earn reward, so the oracle checks more
than "it parses":

* Kubernetes: the YAML parses, every document has ``kind`` and ``metadata.name`` (our resource identity),
  a string ``apiVersion``, and validates against the *strict* OpenAPI JSON schema of Kubernetes
  :data:`KUBERNETES_VERSION` shipped inside ``kubernetes-validate`` (offline; strict = unknown fields are
  errors, as ``kubectl apply --validate=strict`` does). Two objects of one kind, name and namespace are an
  error too: the second would silently replace the first.
  A key written twice in one mapping is an error (the API server's strict decoding rejects it; YAML
  readers keep the last value, which would let a patch shadow an insecure value).
* Terraform: the HCL parses (with checkov's ``hcl2`` fork, the parser every engine uses), every ``resource``
  and ``data`` block has exactly a type and a name label that are identifiers, no address is declared
  twice, every reference names a variable, local, resource, data source or module the module declares, and
  every value Terraform would compute from the files is computable (``tobool("TRUE")`` is an error; see
  :mod:`terraform_eval`). **No provider schema check is done**: provider schemas need ``terraform init``
  (network), so an unknown attribute or a wrong attribute type in a Terraform file is not detected here.

Every problem carries a ``key`` that does not depend on line numbers, so a patched file can be judged
against its original: a patch may not add a problem the original did not have (:func:`new_issues`).

Speed: ``kubernetes_validate.validate`` re-reads the 1.2 MB definitions file and builds a new validator on
every call (~9 ms per object). This module reads the very same schema files with the package's own helpers
but keeps one compiled validator per (kind, apiVersion): ~0.3 ms per object once warm. The tests check that
it agrees with ``kubernetes_validate.validate``.
"""

from __future__ import annotations

import datetime as _dt
import re
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from security_verifiers.engines.configs import ConfigParseError, parse_kubernetes

#: The Kubernetes release whose API schemas manifests are validated against (shipped offline by
#: kubernetes-validate==1.37.0, which has 1.25 ... 1.37). Changing it can change what counts as valid.
KUBERNETES_VERSION = "1.30.0"
#: At most this many schema errors are reported per object (the first is what matters to a model).
MAX_ERRORS_PER_OBJECT = 5

_KIND = re.compile(r"^[A-Za-z][A-Za-z0-9]*$")
_API_VERSION = re.compile(r"^(?:[a-z0-9]([a-z0-9.-]*[a-z0-9])?/)?v[0-9]+((alpha|beta)[0-9]+)?$")
_TF_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
#: jsonschema validators resolve references lazily; keeping their use serial costs nothing under the GIL.
_VALIDATOR_LOCK = threading.Lock()


@dataclass(frozen=True)
class Issue:
    """One validation problem: ``key`` identifies it independently of line numbers; ``message`` explains it."""

    key: tuple[str, ...]
    message: str


@dataclass(frozen=True)
class ValidationResult:
    """``ok`` is true when the text is valid; ``issues`` say why not, one per problem.

    ``parsed`` is false when the text is not even a set of identifiable resources (YAML/HCL syntax, a
    document without kind/name, a Terraform block without a name label): the policy engines cannot run.
    """

    ok: bool
    issues: list[Issue] = field(default_factory=list)
    parsed: bool = True
    #: Objects whose kind has no schema here (custom resources, kinds the API no longer has): their structure was
    #: checked (apiVersion, kind, metadata.name), not their content. Recorded, not a failure.
    unchecked: list[str] = field(default_factory=list)

    @property
    def errors(self) -> list[str]:
        return [issue.message for issue in self.issues]


def _result(issues: list[Issue], parsed: bool = True, unchecked: list[str] | None = None) -> ValidationResult:
    return ValidationResult(ok=parsed and not issues, issues=issues, parsed=parsed, unchecked=unchecked or [])


def new_issues(original: ValidationResult, patched: ValidationResult) -> list[Issue]:
    """The problems of ``patched`` that ``original`` did not have (all of them when it does not parse)."""
    if not patched.parsed:
        return list(patched.issues) or [Issue(("unparsed",), "the file does not parse")]
    before = {issue.key for issue in original.issues}
    return [issue for issue in patched.issues if issue.key not in before]


def validate(platform: str, text: str, context: tuple[str, ...] = ()) -> ValidationResult:
    """Validate one Kubernetes manifest (possibly several documents) or one Terraform file (``context``: the
    other files of its module). Never raises on bad input; an unknown platform is a programming error."""
    if platform == "kubernetes":
        return _validate_kubernetes(text)
    if platform == "terraform":
        return _validate_terraform(text, context)
    raise ValueError(f"unknown platform {platform!r}")


# --------------------------------------------------------------------------------------------- Kubernetes


def _validate_kubernetes(text: str) -> ValidationResult:
    try:
        objects = parse_kubernetes(text)
    except ConfigParseError as err:
        return _result([Issue(("parse",), str(err))], parsed=False)
    if not objects:
        return _result([Issue(("parse",), "the manifest contains no Kubernetes object")], parsed=False)
    issues: list[Issue] = []
    unchecked: list[str] = []
    seen: dict[tuple[str, str, str], int] = {}
    for obj in objects:
        ident = (obj.kind, obj.namespace or "default", obj.name)
        if ident in seen:
            issues.append(Issue(("declared-twice", *ident),
                                f"{obj.resource}: declared twice in namespace {ident[1]} (lines {seen[ident]} and "
                                f"{obj.start_line}); the second replaces the first"))
        seen.setdefault(ident, obj.start_line)
        issues.extend(Issue(("duplicate-key", obj.resource, path), f"{obj.resource}: key {path} is written twice; "
                            "the API server rejects duplicate keys") for path in obj.duplicate_keys)
        errors, reason = schema_check(obj.body)
        issues.extend(Issue(("schema", obj.resource, message), f"{obj.resource}: {message}") for message in errors)
        if reason is not None:
            unchecked.append(f"{obj.resource}: {reason}")
    return _result(issues, unchecked=unchecked)


def schema_errors(body: dict[str, Any], version: str = KUBERNETES_VERSION) -> list[str]:
    """Why ``body`` is not a valid Kubernetes object of ``version`` (strict schema); empty when it is (or when its
    kind has no schema: see :func:`schema_check`)."""
    return schema_check(body, version)[0]


def schema_check(body: dict[str, Any], version: str = KUBERNETES_VERSION) -> tuple[list[str], str | None]:
    """The schema errors of ``body`` and, when its content could not be checked, why (else None).

    * A kind of the Kubernetes API at a served apiVersion: its strict schema.
    * A kind at an apiVersion the API server no longer serves (:mod:`api_versions`): the schema of the apiVersion
      that replaced it, so that the object is judged as its migration will be, and migrating is an ordinary edit
      (the catalog rule ``k8s-removed-api-version`` reports the old version). A kind that is gone
      (PodSecurityPolicy) is unchecked.
    * A kind the API does not have, in a dotted API group (custom resources live in one, e.g. ServiceMonitor in
      ``monitoring.coreos.com``): unchecked, once its apiVersion and kind are well formed (metadata.name is
      required by the parser).
    * A kind the API has, at an apiVersion it never had (``apps/v9``), or an unknown kind of a built-in
      undotted group (``v1``, ``apps``): an error, so that a patch cannot slip an object out of its schema by
      renaming its version.
    """
    from security_verifiers.engines.api_versions import removed_api

    api_version = body.get("apiVersion")
    kind = body.get("kind")
    if not isinstance(api_version, str) or not api_version:
        return ["apiVersion is missing or not a string"], None
    if not isinstance(kind, str) or not _KIND.match(kind) or not _API_VERSION.match(api_version):
        return [f"unknown kind/apiVersion {kind!r}/{api_version!r}"], None
    removed = removed_api(api_version, kind)
    if removed is not None and _validator(kind, api_version, version) is None:
        if removed.replacement is None:
            return [], f"{kind} {api_version} was removed in Kubernetes {removed.removed_in} with no replacement"
        return _schema_errors({**body, "apiVersion": removed.replacement}, kind, removed.replacement, version), None
    group = api_version.rpartition("/")[0]
    if _validator(kind, api_version, version) is None and "." in group and kind not in _builtin_kinds(version):
        return [], f"{kind} {api_version} has no schema here (a custom resource?): structure checked only"
    return _schema_errors(body, kind, api_version, version), None


def _schema_errors(body: dict[str, Any], kind: str, api_version: str, version: str) -> list[str]:
    validator = _validator(kind, api_version, version)
    if validator is None:
        return [f"{kind} {api_version} is not an object of the Kubernetes {_major_minor(version)} API"]
    with _VALIDATOR_LOCK:  # jsonschema validators cache resolved references; keep their use serial
        found = list(validator.iter_errors(_json_like(body)))
    found.sort(key=lambda e: [str(p) for p in e.absolute_path])
    out = []
    for error in found[:MAX_ERRORS_PER_OBJECT]:
        where = ".".join(str(p) for p in error.absolute_path) or "(object)"
        out.append(f"{where}: {error.message[:300]}")
    if len(found) > MAX_ERRORS_PER_OBJECT:
        out.append(f"... and {len(found) - MAX_ERRORS_PER_OBJECT} more schema errors")
    return out


def _major_minor(version: str) -> str:
    return ".".join(version.lstrip("v").split(".")[:2])


@lru_cache(maxsize=8)
def _schema_dir(version: str) -> str:
    """The strict schema directory kubernetes-validate would use for ``version`` (newest not newer)."""
    from kubernetes_validate import utils
    from packaging.version import Version

    wanted = Version(_major_minor(version))
    candidates = [v for v in utils.all_versions() if Version(_major_minor(v)) <= wanted]
    if not candidates:
        raise ValueError(f"kubernetes-validate ships no schemas for Kubernetes {version}")
    return f"v{candidates[-1]}-local-strict"


@lru_cache(maxsize=8)
def _registry(version: str) -> Any:
    """The shared ``_definitions.json`` (1.2 MB) as a referencing registry, loaded once per version."""
    from kubernetes_validate import utils
    from referencing import Registry, Resource

    definitions = utils.schema_contents(f"kubernetes-json-schema/{_schema_dir(version)}/_definitions.json", version)
    return Resource.from_contents(definitions) @ Registry()


@lru_cache(maxsize=8)
def _builtin_kinds(version: str) -> frozenset[str]:
    """Every kind of the Kubernetes API of ``version``, at any apiVersion (from the schemas' group-version-kinds)."""
    from kubernetes_validate import utils

    definitions = utils.schema_contents(f"kubernetes-json-schema/{_schema_dir(version)}/_definitions.json", version)
    found = definitions.get("$defs") or definitions.get("definitions") or {}
    return frozenset(str(gvk.get("kind")) for definition in found.values()
                     for gvk in definition.get("x-kubernetes-group-version-kind") or [])


@lru_cache(maxsize=512)
def _validator(kind: str, api_version: str, version: str) -> Any:
    """One compiled strict validator per (kind, apiVersion), or None when the schema does not exist or is
    not a top-level object (kubernetes-validate also ships schemas of sub-objects such as Affinity)."""
    import jsonschema
    from kubernetes_validate import utils
    from referencing import Resource

    group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)  # as kubernetes_validate does
    try:
        schema = utils.schema_contents(
            f"kubernetes-json-schema/{_schema_dir(version)}/{kind.lower()}-{group_version}.json", version)
    except (FileNotFoundError, utils.VersionNotSupportedError):
        return None
    kind_enum = ((schema.get("properties") or {}).get("kind") or {}).get("enum")
    if not kind_enum or kind not in kind_enum:
        return None
    registry = Resource.from_contents(schema) @ _registry(version)
    return jsonschema.validators.Draft202012Validator(schema, registry=registry)


def _json_like(value: Any) -> Any:
    """What the API server would see: YAML timestamps as strings and mapping keys as strings (the
    YAML-to-JSON conversion of kubectl does the same)."""
    if isinstance(value, dict):
        return {_json_key(k): _json_like(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_like(v) for v in value]
    if isinstance(value, _dt.date | _dt.datetime):
        return value.isoformat()
    return value


def _json_key(key: Any) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    return key if isinstance(key, str) else str(key)


# ---------------------------------------------------------------------------------------------- Terraform


def _validate_terraform(text: str, context: tuple[str, ...] = ()) -> ValidationResult:
    from security_verifiers.engines.configs import ConfigParseError, evaluated_terraform, hcl_document

    try:
        raw = hcl_document(text)  # shared with the engines' parse of the same text; read only here
    except ConfigParseError as err:
        return _result([Issue(("parse",), str(err))], parsed=False)
    structural: list[str] = []
    errors: list[Issue] = []
    seen: dict[str, int] = {}
    for block in ("resource", "data"):
        for group in raw.get(block) or []:
            if not isinstance(group, dict) or not group:
                structural.append(f"a {block} block has no type label")
                continue
            for type_, named in group.items():
                if not isinstance(named, dict) or not named or "__start_line__" in named:
                    structural.append(f'{block} "{type_}" has no name label (it needs a type and a name)')
                    continue
                for name, body in named.items():
                    if not isinstance(body, dict):
                        structural.append(f'{block} "{type_}" has no name label (it needs a type and a name)')
                        continue
                    address = f"{'data.' if block == 'data' else ''}{type_}.{name}"
                    line = int(body.get("__start_line__", 0))
                    if any(isinstance(v, dict) for k, v in body.items() if not k.startswith("__")):
                        structural.append(f"{address} (line {line}): a {block} block takes exactly two labels")
                        continue
                    if not _TF_IDENTIFIER.match(type_) or not _TF_IDENTIFIER.match(name):
                        errors.append(Issue(("identifier", address), f"{address} (line {line}): type and name must "
                                            "be identifiers"))
                    if address in seen:
                        errors.append(Issue(("declared-twice", address),
                                            f"{address}: declared twice (lines {seen[address]} and {line})"))
                    seen.setdefault(address, line)
    if structural:
        return _result([Issue(("structure",), message) for message in structural] + errors, parsed=False)
    try:
        evaluated = evaluated_terraform(text, context)
    except ConfigParseError as err:  # a context file does not parse
        return _result([Issue(("context",), str(err))], parsed=False)
    errors.extend(Issue(problem.key, problem.message) for problem in evaluated.problems)
    return _result(errors)
