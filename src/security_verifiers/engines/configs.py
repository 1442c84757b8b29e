"""Parsing Kubernetes manifests and Terraform files into resources with stable identities.

Every engine, the scorer's inventory check and the data generator name resources the same way:
``Kind/name`` for a Kubernetes object and the address ``type.name`` (``data.type.name`` for data
sources) for a Terraform block. Parsing failures raise :class:`ConfigParseError`, which the scorer
turns into "the patched file is invalid", never into a crash.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime
import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import yaml

if TYPE_CHECKING:
    from security_verifiers.engines.terraform_eval import EvaluatedFile

try:  # libyaml is several times faster; the pure-Python loader gives identical results
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

#: The fastest safe YAML loader available (libyaml's, when PyYAML was built with it).
FAST_LOADER = _Loader

#: Kinds whose objects run containers, and where their pod spec lives: the one table every part reads (the Rego
#: input, the autofix, the inventory, the mutation operators), through :func:`pod_spec_of`.
POD_SPEC_PATHS: dict[str, tuple[str, ...]] = {
    "Pod": ("spec",),
    "Deployment": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "ReplicaSet": ("spec", "template", "spec"),
    "ReplicationController": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
    "PodTemplate": ("template", "spec"),
}


def pod_spec_of(body: Any) -> dict[str, Any] | None:
    """The pod spec of a workload document (any kind of :data:`POD_SPEC_PATHS`), or None for other kinds and for
    a workload whose spec is missing or not a mapping.

    >>> pod_spec_of({"kind": "PodTemplate", "template": {"spec": {"containers": []}}})
    {'containers': []}
    """
    path = POD_SPEC_PATHS.get(str(body.get("kind"))) if isinstance(body, dict) else None
    if path is None:
        return None
    node: Any = body
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else None


def pod_metadata_of(body: Any) -> dict[str, Any] | None:
    """The metadata that carries a workload's pod labels and annotations: the object's own for a Pod, its
    template's for the other kinds (None when absent)."""
    path = POD_SPEC_PATHS.get(str(body.get("kind"))) if isinstance(body, dict) else None
    if path is None:
        return None
    node: Any = body
    for key in path[:-1]:
        node = node.get(key) if isinstance(node, dict) else None
    found = node.get("metadata") if isinstance(node, dict) else None
    return found if isinstance(found, dict) else None


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
    #: Paths of mapping keys written twice (YAML keeps the last; the API server's strict decoding rejects them).
    duplicate_keys: tuple[str, ...] = ()

    @property
    def resource(self) -> str:
        return f"{self.kind}/{self.name}"

    @property
    def pod_spec(self) -> dict[str, Any] | None:
        return pod_spec_of(self.body)

    def containers(self) -> list[dict[str, Any]]:
        """Regular and init containers of a workload (empty for other kinds)."""
        spec = self.pod_spec or {}
        return [c for key in ("initContainers", "containers") for c in _container_list(spec, key)]


def _container_list(spec: dict[str, Any], key: str) -> list[dict[str, Any]]:
    value = spec.get(key)
    return [c for c in value if isinstance(c, dict)] if isinstance(value, list) else []


#: A YAML document may not expand (aliases counted as often as they are used) to more nodes than this, nor nest
#: deeper: no real manifest comes close, and an alias bomb of a few KB would otherwise cost every engine minutes
#: and gigabytes before any of them could refuse it.
MAX_EXPANDED_NODES = 200_000
MAX_NESTING = 100


def _tree_within_limits(node: yaml.Node) -> bool:
    """Whether a document without aliases (a tree: its expansion is itself) is within both limits; a cheap walk
    with no bookkeeping per node. False also when it is not: :func:`_check_expansion` then says why."""
    count = 0
    stack: list[tuple[yaml.Node, int]] = [(node, 1)]
    while stack:
        current, depth = stack.pop()
        count += 1
        if count > MAX_EXPANDED_NODES or depth > MAX_NESTING:
            return False
        if isinstance(current, yaml.MappingNode):
            for key, value in current.value:
                stack.append((key, depth + 1))
                stack.append((value, depth + 1))
        elif isinstance(current, yaml.SequenceNode):
            stack.extend((child, depth + 1) for child in current.value)
    return True


def _check_expansion(node: yaml.Node, index: int, aliases_possible: bool = True) -> None:
    """Raise ConfigParseError when the document under ``node`` expands past the limits (computed on the node
    graph, where an alias is a shared node, in time linear in the graph: nothing is expanded).

    ``aliases_possible=False`` (the text has no ``&``, so no anchor and no alias) allows the cheap tree walk;
    a document it cannot pass is walked again here, so the error is the same either way."""
    if not aliases_possible and _tree_within_limits(node):
        return
    size: dict[int, int] = {}
    depth: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(node, False)]
    while stack:
        current, done = stack.pop()
        key = id(current)
        if key in size:
            continue
        children: list[yaml.Node] = []
        if isinstance(current, yaml.MappingNode):
            children = [n for pair in current.value for n in pair]
        elif isinstance(current, yaml.SequenceNode):
            children = list(current.value)
        if not done:
            stack.append((current, True))
            stack.extend((child, False) for child in children if id(child) not in size)
            continue
        size[key] = 1 + sum(size.get(id(c), 0) for c in children)
        depth[key] = 1 + max((depth.get(id(c), 0) for c in children), default=0)
        if size[key] > MAX_EXPANDED_NODES:
            raise ConfigParseError(f"document {index + 1} expands to more than {MAX_EXPANDED_NODES:,} YAML nodes "
                                   "(aliases repeat what they point to)")
        if depth[key] > MAX_NESTING:
            raise ConfigParseError(f"document {index + 1} nests deeper than {MAX_NESTING} levels")


def parse_kubernetes(text: str) -> list[K8sObject]:
    """Every non-empty YAML document of ``text`` as a Kubernetes object (``kind`` and ``metadata.name`` required).

    Memoised: validation, the inventory, Rego, Checkov and the secret-values engine all read the same text, so it
    is parsed once. Each call gets its own copy of the bodies (a caller may edit them; the memo stays pristine)."""
    cached = _kubernetes_parsed(text)
    if isinstance(cached, ConfigParseError):
        raise ConfigParseError(str(cached))
    return [dataclasses.replace(obj, body=_copied(obj.body, {})) for obj in cached]


#: Values a YAML loader produces that cannot be edited in place (shared between copies as they are).
_ATOMS = (str, int, float, bool, type(None), bytes, datetime.date)


def _copied(value: Any, memo: dict[int, Any]) -> Any:
    """A deep copy of a loaded YAML value (what ``copy.deepcopy`` gives, aliases still shared), faster for the
    plain dicts, lists and scalars that manifests are made of."""
    if isinstance(value, _ATOMS):
        return value
    found = memo.get(id(value))
    if found is not None:
        return found
    if type(value) is dict:
        out: dict[Any, Any] = {}
        memo[id(value)] = out
        for key, item in value.items():
            out[key] = item if isinstance(item, _ATOMS) else _copied(item, memo)
        return out
    if type(value) is list:
        items: list[Any] = []
        memo[id(value)] = items
        items.extend(item if isinstance(item, _ATOMS) else _copied(item, memo) for item in value)
        return items
    return copy.deepcopy(value, memo)  # e.g. a !!set, !!pairs: rare, the generic copy


@functools.lru_cache(maxsize=256)
def _kubernetes_parsed(text: str) -> tuple[K8sObject, ...] | ConfigParseError:
    def parse() -> tuple[K8sObject, ...] | ConfigParseError:
        try:
            return tuple(_parse_kubernetes(text))
        except ConfigParseError as err:
            return err

    return _through_store("kubernetes", text, (), parse)  # type: ignore[no-any-return]


def _through_store(kind: str, text: str, context: tuple[str, ...], compute: Callable[[], Any]) -> Any:
    """``compute()``, or what another process of the machine stored for (kind, text, context) in the parse store
    (:mod:`.parse_store`); a result is stored unless it is a ConfigParseError (errors are computed every time)."""
    from security_verifiers.engines.parse_store import parse_store

    store = parse_store()
    if store is None:
        return compute()
    key = store.key(kind, text, context)
    stored = store.get(key)
    if stored is not None:
        return stored
    result = compute()
    if not isinstance(result, ConfigParseError):
        store.put(key, result)
    return result


def _parse_kubernetes(text: str) -> list[K8sObject]:
    aliases_possible = "&" in text
    try:
        nodes = list(yaml.compose_all(text, Loader=_Loader))
    except yaml.YAMLError as err:
        raise ConfigParseError(f"YAML does not parse: {err}") from err
    except RecursionError as err:
        raise ConfigParseError(f"YAML nests deeper than the parser can follow (over {MAX_NESTING} levels)") from err
    objects: list[K8sObject] = []
    for index, node in enumerate(nodes):
        if node is None:
            continue
        _check_expansion(node, index, aliases_possible)
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
                                 body=body, start_line=node.start_mark.line + 1, end_line=node.end_mark.line + 1,
                                 duplicate_keys=tuple(duplicate_keys(node))))
    return objects


def duplicate_keys(node: yaml.Node, path: str = "") -> list[str]:
    """Paths of keys that a YAML mapping under ``node`` holds twice (merge keys ``<<`` aside).

    PyYAML keeps the last value; Kubernetes' strict decoding rejects the object. Every engine reads the
    last value, so a patch that appends ``privileged: false`` after ``privileged: true`` would look fixed
    to all of them: it is a validation error instead.

    >>> duplicate_keys(yaml.compose("a: 1\\nb: {c: 1, c: 2}\\na: 3"))
    ['b.c', 'a']
    """
    found: list[str] = []
    seen_nodes: set[int] = set()

    def walk(current: yaml.Node, where: str) -> None:
        if id(current) in seen_nodes:  # an alias: its content was walked where it was defined
            return
        seen_nodes.add(id(current))
        if isinstance(current, yaml.MappingNode):
            keys: set[str] = set()
            for key, value in current.value:
                name = str(key.value) if isinstance(key, yaml.ScalarNode) else None
                if name is not None and key.tag != "tag:yaml.org,2002:merge":
                    if name in keys:
                        found.append(f"{where}.{name}" if where else name)
                    keys.add(name)
                walk(value, f"{where}.{name}" if where else str(name))
        elif isinstance(current, yaml.SequenceNode):
            for index, item in enumerate(current.value):
                walk(item, f"{where}[{index}]")

    walk(node, path)
    return found


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


class _TreeKeepingParser:
    """Takes the place of hcl2's module-level parser inside ``hcl2.loads``: the lark syntax tree kept (per thread)
    for the expression evaluator, and hcl2's dict for any other caller. ``hcl2.loads`` guards the parser against
    unclosed quotes, on which its string regex backtracks for minutes, so we call it, not lark. Our own calls
    (:func:`_hcl_loads`) ask for the tree only: the dict is built from it when someone reads it."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.local = threading.local()

    def parse(self, text: str) -> dict[str, Any]:
        from hcl2.transformer import DictTransformer

        tree = type(self.inner).lark_parser.parse(text)
        self.local.tree = tree
        if getattr(self.local, "tree_only", False):
            return {}  # _hcl_loads builds the dict from the tree on demand (_HclParse.document)
        return DictTransformer().transform(tree)  # type: ignore[no-any-return]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


_PARSER_LOCK = threading.Lock()


def _tree_keeping_parser() -> _TreeKeepingParser:
    import hcl2.api  # heavy import, only when Terraform is parsed

    with _PARSER_LOCK:
        if not isinstance(hcl2.api.hcl2, _TreeKeepingParser):
            hcl2.api.hcl2 = _TreeKeepingParser(hcl2.api.hcl2)
        return hcl2.api.hcl2


def _parse_failure(err: Exception) -> ConfigParseError:
    return ConfigParseError(f"HCL does not parse: {type(err).__name__}: {_parse_error_text(err)}")


class _HclParse:
    """One text's lark syntax tree and hcl2's dict of it, built from the tree on first use (hcl2's
    ``DictTransformer``, a pass over the whole tree): the evaluator reads only the tree and builds its own
    document, so a text that is only evaluated, never validated (the autofix's intermediate texts, the
    prompt's resource types) never pays for the dict. A dict that cannot be built makes the text one that does
    not parse, with the message hcl2's own failure gives."""

    def __init__(self, tree: Any) -> None:
        self.tree = tree
        self._document: dict[str, Any] | ConfigParseError | None = None
        self._lock = threading.Lock()

    def document(self) -> dict[str, Any] | ConfigParseError:
        with self._lock:  # one dict for every caller
            if self._document is None:
                from hcl2.transformer import DictTransformer

                try:
                    self._document = DictTransformer().transform(self.tree)
                except Exception as err:  # noqa: BLE001 - lark wraps a transformer's failure in its VisitError
                    self._document = _parse_failure(err)
            return self._document


@functools.lru_cache(maxsize=512)
def _hcl_loads(text: str) -> _HclParse | ConfigParseError:
    """hcl2's parse of ``text`` (its syntax tree; the dict on demand), memoised: the parser costs ~3-15 ms a file
    and the same text is read by the policy engine, Checkov, the autofixer, validation and the inventory check."""
    import hcl2

    parser = _tree_keeping_parser()
    parser.local.tree_only = True
    try:
        hcl2.loads(text)
    except Exception as err:  # noqa: BLE001 - the parser raises lark's many error types
        return _parse_failure(err)
    finally:
        parser.local.tree_only = False
    return _HclParse(parser.local.tree)


def _parse_error_text(err: Exception) -> str:
    """The parser's message, the same in every process: lark lists the tokens it expected in set order, which
    changes with the hash seed, so they are sorted (a patch's error text is part of its stored outcome)."""
    first, _, _ = str(err).partition("\n")
    expected = getattr(err, "expected", None) or getattr(err, "allowed", None)
    if expected:
        names = sorted(str(e) for e in expected if len(str(e)) <= 24)  # lark's long regex terminals say nothing
        first += f" Expected one of: {', '.join(names)}" if names else ""
    return first[:300]


def _parsed(text: str) -> _HclParse:
    """The syntax tree of ``text``; ConfigParseError if it does not parse (its dict is not built here)."""
    cached = _hcl_loads(text)
    if isinstance(cached, ConfigParseError):
        raise ConfigParseError(str(cached))
    return cached


def hcl_document(text: str) -> dict[str, Any]:
    """hcl2's raw parse of ``text`` (memoised and shared: treat it as read-only); ConfigParseError if invalid."""
    document = _document(text)
    if isinstance(document, ConfigParseError):
        raise ConfigParseError(str(document))
    return document


@functools.lru_cache(maxsize=512)
def _document(text: str) -> dict[str, Any] | ConfigParseError:
    """hcl2's dict of ``text``, from the machine's parse store when another process built it already."""
    def build() -> dict[str, Any] | ConfigParseError:
        cached = _hcl_loads(text)
        return cached if isinstance(cached, ConfigParseError) else cached.document()

    return _through_store("hcl-document", text, (), build)  # type: ignore[no-any-return]


@functools.lru_cache(maxsize=512)
def _evaluated(text: str, context: tuple[str, ...]) -> EvaluatedFile | ConfigParseError:
    """:func:`_evaluate`, from the machine's parse store when another process evaluated the same files already."""
    return _through_store("terraform-evaluated", text, context,  # type: ignore[no-any-return]
                          lambda: _evaluate(text, context))


def _evaluate(text: str, context: tuple[str, ...]) -> EvaluatedFile | ConfigParseError:
    from security_verifiers.engines.terraform_eval import evaluate_file

    try:
        main = _parsed(text)
        if context:  # failures in the order they always came: this file's dict, then each context file's
            hcl_document(text)
        others = []
        for other in context:
            hcl_document(other)  # a context file whose dict cannot be built does not parse
            others.append((other, _parsed(other).tree))
    except ConfigParseError as err:
        return err
    try:
        return evaluate_file(text, main.tree, tuple(others))
    except Exception:
        # The evaluator builds its document with a subclass of hcl2's DictTransformer over the same tree, so a
        # tree whose dict cannot be built fails here too: that is the text not parsing, as it was always judged
        # (the dict used to be built first). Any other failure of the evaluator is raised as it was.
        document = main.document()
        if isinstance(document, ConfigParseError):
            return document
        raise


def evaluated_terraform(text: str, context: tuple[str, ...] = ()) -> EvaluatedFile:
    """``text`` evaluated as a file of the module made of it and the files of ``context`` (memoised, read-only):
    the document every engine reads, each attribute with its value, and the problems Terraform would report."""
    result = _evaluated(text, tuple(context))
    if isinstance(result, ConfigParseError):
        raise ConfigParseError(str(result))
    return result


def parse_terraform(text: str, context: tuple[str, ...] = ()) -> TerraformFile:
    """The resource and data blocks of one Terraform file, with evaluated attribute values and line ranges."""
    raw = copy.deepcopy(evaluated_terraform(text, context).document)  # callers may edit; the memo stays pristine
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


def image_identity(image: str) -> str:
    """The image repository as the container runtime resolves it (Docker Hub's implicit registry and ``library/``
    made explicit), without tag or digest: ``nginx:1.25`` and ``docker.io/library/nginx@sha256:...`` are one image,
    ``mirror.example.net/nginx`` another.

    >>> image_identity("nginx:1.25"), image_identity("bitnami/redis"), image_identity("localhost:5000/app:1")
    ('docker.io/library/nginx', 'docker.io/bitnami/redis', 'localhost:5000/app')
    """
    repository = image_repository(image.strip())
    first, slash, rest = repository.partition("/")
    if not slash or ("." not in first and ":" not in first and first != "localhost"):
        first, rest = "docker.io", repository
    elif first in ("index.docker.io", "registry-1.docker.io"):
        first = "docker.io"
    if first == "docker.io" and "/" not in rest:
        rest = f"library/{rest}"
    return f"{first}/{rest}" if rest else ""


def _containers_of(spec: dict[str, Any], key: str) -> list[list[str]]:
    """``[name, image identity]`` of each container of ``spec[key]``, sorted."""
    return sorted([str(c.get("name")), image_identity(str(c.get("image") or ""))] for c in _container_list(spec, key))


def effective_namespace(namespace: str | None) -> str:
    """An object without a namespace lands in ``default`` (as the policies and validation read it)."""
    return namespace or "default"


def inventory(platform: str, text: str) -> dict[str, Any]:
    """What a patch must preserve (compared by ``config_audit.scoring.inventory_preserved``).

    Kubernetes: for every ``Kind/name``, one entry per object (the name may repeat across namespaces) with its
    namespace, its init containers and its main containers as ``[name, image identity]`` (a tag or digest may
    change, the registry and repository may not), plus the namespaces the file declares (``Namespace`` objects).
    Terraform: the addresses. Raises :class:`ConfigParseError` on unparseable text."""
    if platform == "kubernetes":
        objects: dict[str, list[dict[str, Any]]] = {}
        declared: set[str] = set()
        for obj in parse_kubernetes(text):
            spec = obj.pod_spec or {}
            objects.setdefault(obj.resource, []).append(
                {"namespace": effective_namespace(obj.namespace), "init": _containers_of(spec, "initContainers"),
                 "containers": _containers_of(spec, "containers")})
            if obj.kind == "Namespace":
                declared.add(obj.name)
        for entries in objects.values():
            entries.sort(key=lambda e: (e["namespace"], e["init"], e["containers"]))
        return {"platform": platform, "objects": objects, "declared_namespaces": sorted(declared)}
    if platform == "terraform":
        return {"platform": platform, "objects": {b.address: [] for b in parse_terraform(text).blocks}}
    raise ValueError(f"unknown platform {platform!r}")


def resource_types(platform: str, text: str) -> set[str]:
    """The Kubernetes kinds or Terraform resource/data types (and provider names) in ``text``: what decides which
    catalog rules can apply to it. Empty when the text does not parse."""
    try:
        if platform == "kubernetes":
            return {o.kind for o in parse_kubernetes(text)}
        parsed = parse_terraform(text)
    except ConfigParseError:
        return set()
    return {b.type for b in parsed.blocks} | {str(p["name"]) for p in parsed.providers}


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
