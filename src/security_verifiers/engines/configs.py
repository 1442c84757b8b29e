"""Parsing Kubernetes manifests and Terraform files into resources with stable identities.

Every engine, the scorer's inventory check and the data generator name resources the same way:
``Kind/name`` for a Kubernetes object and the address ``type.name`` (``data.type.name`` for data
sources) for a Terraform block. Parsing failures raise :class:`ConfigParseError`, which the scorer
turns into "the patched file is invalid", never into a crash.
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass, field
from typing import Any

import yaml

try:  # libyaml is several times faster; the pure-Python loader gives identical results
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

#: The fastest safe YAML loader available (libyaml's, when PyYAML was built with it).
FAST_LOADER = _Loader

#: Kinds whose objects run containers, and where their pod spec lives.
POD_SPEC_PATHS: dict[str, tuple[str, ...]] = {
    "Pod": ("spec",),
    "Deployment": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "ReplicaSet": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
}


class ConfigParseError(ValueError):
    """The text is not a well-formed manifest / Terraform file."""


@dataclass(frozen=True)
class K8sObject:
    kind: str
    name: str
    namespace: str | None
    body: dict[str, Any]
    start_line: int  # 1-based, inclusive
    end_line: int

    @property
    def resource(self) -> str:
        return f"{self.kind}/{self.name}"

    @property
    def pod_spec(self) -> dict[str, Any] | None:
        path = POD_SPEC_PATHS.get(self.kind)
        if path is None:
            return None
        node: Any = self.body
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        return node if isinstance(node, dict) else None

    def containers(self) -> list[dict[str, Any]]:
        """Regular and init containers of a workload (empty for other kinds)."""
        spec = self.pod_spec or {}
        out = []
        for key in ("initContainers", "containers"):
            out.extend(c for c in spec.get(key) or [] if isinstance(c, dict))
        return out


def parse_kubernetes(text: str) -> list[K8sObject]:
    """Every non-empty YAML document of ``text`` as a Kubernetes object (``kind`` and ``metadata.name`` required)."""
    try:
        nodes = list(yaml.compose_all(text, Loader=_Loader))
    except yaml.YAMLError as err:
        raise ConfigParseError(f"YAML does not parse: {err}") from err
    objects: list[K8sObject] = []
    for index, node in enumerate(nodes):
        if node is None:
            continue
        loader = _Loader("")
        try:
            body = loader.construct_document(node)
        except yaml.YAMLError as err:
            raise ConfigParseError(f"document {index + 1}: {err}") from err
        finally:
            loader.dispose()
        if body is None:
            continue
        if not isinstance(body, dict):
            raise ConfigParseError(f"document {index + 1} is not a mapping")
        kind = body.get("kind")
        meta = body.get("metadata")
        name = meta.get("name") if isinstance(meta, dict) else None
        if not isinstance(kind, str) or not isinstance(name, str):
            raise ConfigParseError(f"document {index + 1} lacks kind or metadata.name")
        namespace = meta.get("namespace") if isinstance(meta, dict) else None
        objects.append(K8sObject(kind=kind, name=name, namespace=namespace if isinstance(namespace, str) else None,
                                 body=body, start_line=node.start_mark.line + 1, end_line=node.end_mark.line + 1))
    return objects


@dataclass(frozen=True)
class TFBlock:
    block: str  # "resource" or "data"
    type: str
    name: str
    attributes: dict[str, Any]
    start_line: int
    end_line: int

    @property
    def address(self) -> str:
        prefix = "data." if self.block == "data" else ""
        return f"{prefix}{self.type}.{self.name}"


@dataclass(frozen=True)
class TerraformFile:
    blocks: list[TFBlock]
    providers: list[dict[str, Any]] = field(default_factory=list)

    def resources(self) -> list[TFBlock]:
        return [b for b in self.blocks if b.block == "resource"]


def _is_block_list(value: list[Any]) -> bool:
    """hcl2 wraps attributes in one-element lists; nested blocks are lists of dicts of wrapped values."""
    return bool(value) and all(isinstance(v, dict) for v in value) and all(
        isinstance(x, list) for v in value for k, x in v.items() if not k.startswith("__"))


def unwrap_hcl(body: dict[str, Any]) -> dict[str, Any]:
    """Plain values from hcl2's wrapping: ``{"a": ["x"], "blk": [{"b": [1]}]}`` -> ``{"a": "x", "blk": [{"b": 1}]}``.

    >>> unwrap_hcl({"a": ["x"], "l": [["0.0.0.0/0"]], "blk": [{"b": [1]}], "tags": [{"k": "v"}]})
    {'a': 'x', 'l': ['0.0.0.0/0'], 'blk': [{'b': 1}], 'tags': {'k': 'v'}}
    """
    out: dict[str, Any] = {}
    for key, value in body.items():
        if key.startswith("__"):
            continue
        if isinstance(value, list) and _is_block_list(value):
            out[key] = [unwrap_hcl(v) for v in value]
        elif isinstance(value, list) and len(value) == 1:
            out[key] = value[0]
        else:
            out[key] = value
    return out


@functools.lru_cache(maxsize=512)
def _hcl_loads(text: str) -> dict[str, Any] | ConfigParseError:
    """hcl2's parse of ``text``, memoised: the HCL parser costs ~15 ms a file and the same text is read by
    the policy engine, Checkov's resource naming, the autofixer and the inventory check."""
    import hcl2  # heavy import, only when Terraform is parsed

    try:
        return hcl2.loads(text)  # type: ignore[no-any-return]
    except Exception as err:  # noqa: BLE001 - the parser raises lark's many error types
        return ConfigParseError(f"HCL does not parse: {type(err).__name__}: {str(err)[:300]}")


def hcl_document(text: str) -> dict[str, Any]:
    """hcl2's raw parse of ``text`` (memoised and shared: treat it as read-only); ConfigParseError if invalid."""
    cached = _hcl_loads(text)
    if isinstance(cached, ConfigParseError):
        raise ConfigParseError(str(cached))
    return cached


def parse_terraform(text: str) -> TerraformFile:
    """The resource and data blocks of one Terraform file, with plain attribute values and line ranges."""
    raw = copy.deepcopy(hcl_document(text))  # callers may edit what they get; the memo must stay pristine
    try:
        return _terraform_file(raw)
    except (AttributeError, TypeError, ValueError) as err:  # e.g. a resource with one label
        raise ConfigParseError(f"malformed Terraform block: {type(err).__name__}: {err}") from err


def _terraform_file(raw: dict[str, Any]) -> TerraformFile:
    blocks: list[TFBlock] = []
    for kind in ("resource", "data"):
        for group in raw.get(kind, []) or []:
            for type_, named in group.items():
                for name, body in named.items():
                    blocks.append(TFBlock(block=kind, type=type_, name=name, attributes=unwrap_hcl(body),
                                          start_line=int(body.get("__start_line__", 0)),
                                          end_line=int(body.get("__end_line__", 0))))
    providers = [unwrap_hcl(body) | {"name": name} for group in raw.get("provider", []) or []
                 for name, body in group.items()]
    return TerraformFile(blocks=blocks, providers=providers)


def image_repository(image: str) -> str:
    """The image without tag or digest: a fix may pin the tag, but must not swap the image.

    >>> image_repository("registry:5000/team/app:1.2@sha256:ab"), image_repository("nginx")
    ('registry:5000/team/app', 'nginx')
    """
    image = image.split("@", 1)[0]
    last = image.rsplit("/", 1)[-1]
    if ":" in last:
        image = image[: len(image) - len(last)] + last.split(":", 1)[0]
    return image


def inventory(platform: str, text: str) -> dict[str, Any]:
    """What a patch must preserve: Kubernetes kinds/names with their containers and image repositories,
    or Terraform addresses. Raises :class:`ConfigParseError` on unparseable text."""
    if platform == "kubernetes":
        objects = {}
        for obj in parse_kubernetes(text):
            containers = sorted((str(c.get("name")), image_repository(str(c.get("image", ""))))
                                for c in obj.containers())
            objects[obj.resource] = containers
        return {"platform": platform, "objects": objects}
    if platform == "terraform":
        return {"platform": platform, "objects": {b.address: [] for b in parse_terraform(text).blocks}}
    raise ValueError(f"unknown platform {platform!r}")


def resource_at_line(platform: str, text: str, line: int) -> str | None:
    """The resource whose text contains 1-based ``line`` (used to place line-based findings, e.g. semgrep's)."""
    if platform == "kubernetes":
        spans = [(o.start_line, o.end_line, o.resource) for o in parse_kubernetes(text)]
    else:
        spans = [(b.start_line, b.end_line, b.address) for b in parse_terraform(text).blocks]
    for start, end, resource in spans:
        if start <= line <= end:
            return resource
    return None
