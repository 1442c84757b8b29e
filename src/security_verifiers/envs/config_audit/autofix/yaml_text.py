"""The Kubernetes side of the autofixer that is not about any one rule: the loaded manifest under edit
(:class:`K8sContext`), accessors that tolerate the odd shapes a manifest may have (null sections, missing
keys), and the round trip from documents back to text.

Why a round trip that keeps text: documents a fix touched are re-emitted with ``yaml.safe_dump(sort_keys=False)``
(their comments are lost), but untouched documents keep their original text whenever the file splits cleanly
on ``---`` lines, so that a patch only shows what was fixed. Otherwise every document is re-emitted.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml

from security_verifiers.engines.configs import FAST_LOADER, pod_metadata_of, pod_spec_of
from security_verifiers.engines.findings import Finding

SEPARATOR_RE = re.compile(r"^---[ \t]*(#.*)?$")


@dataclass
class K8sContext:
    """The loaded documents of one manifest, plus the documents a fix appends (NetworkPolicies, Roles)."""

    docs: list[Any]
    added: list[dict[str, Any]] = field(default_factory=list)

    def all_docs(self) -> Iterator[dict[str, Any]]:
        yield from (d for d in self.docs + self.added if isinstance(d, dict))

    def objects(self, resource: str, kinds: tuple[str, ...] = ()) -> list[dict[str, Any]]:
        """The documents named by a finding's ``Kind/name`` (several when the name repeats across namespaces),
        restricted to ``kinds`` when given (a fixer for Services must not touch a ConfigMap)."""
        kind, _, name = resource.partition("/")
        return [d for d in self.all_docs() if d.get("kind") == kind and meta(d).get("name") == name
                and (not kinds or kind in kinds)]

    def names(self, kind: str, namespace: str | None) -> set[str]:
        return {str(meta(d).get("name")) for d in self.all_docs()
                if d.get("kind") == kind and meta(d).get("namespace") == namespace}


K8sFixer = Callable[[K8sContext, Finding], bool]


# --- accessors ---------------------------------------------------------------------------------------


def meta(doc: dict[str, Any]) -> dict[str, Any]:
    """``metadata`` as a dict (empty when absent or malformed)."""
    value = doc.get("metadata")
    return value if isinstance(value, dict) else {}


def child(parent: dict[str, Any], key: str) -> dict[str, Any]:
    """``parent[key]`` as a dict, created (or replacing a null / non-mapping value) when needed."""
    value = parent.get(key)
    if not isinstance(value, dict):
        value = {}
        parent[key] = value
    return value


def pod_spec(doc: dict[str, Any]) -> dict[str, Any] | None:
    """The pod spec of a workload of any kind (:func:`~security_verifiers.engines.configs.pod_spec_of`)."""
    return pod_spec_of(doc)


def pod_metadata(doc: dict[str, Any]) -> dict[str, Any] | None:
    """The metadata that carries pod annotations: the object's own for a Pod, the template's otherwise."""
    return pod_metadata_of(doc)


def pod_containers(spec: dict[str, Any], init: bool = True) -> list[dict[str, Any]]:
    keys = ("initContainers", "containers") if init else ("containers",)
    return [c for key in keys for c in spec.get(key) or [] if isinstance(c, dict)]


def workload_containers(ctx: K8sContext, finding: Finding, init: bool = True) -> list[dict[str, Any]]:
    return [c for doc in ctx.objects(finding.resource) if (spec := pod_spec(doc)) is not None
            for c in pod_containers(spec, init)]


def pod_specs(ctx: K8sContext, finding: Finding) -> list[dict[str, Any]]:
    return [spec for doc in ctx.objects(finding.resource) if (spec := pod_spec(doc)) is not None]


def set_key(node: dict[str, Any], key: str, value: Any) -> bool:
    """Set ``node[key] = value``; whether that changed anything."""
    if key in node and node[key] == value:
        return False
    node[key] = value
    return True


def pop_key(node: dict[str, Any], key: str) -> bool:
    """Remove ``node[key]``; whether it was there."""
    if key not in node:
        return False
    del node[key]
    return True



#: Where a Secret is mounted as files: ``<SECRETS_DIR>/<secret>/<key>``.
SECRETS_DIR = "/var/run/secrets"


def mount_secret(spec: dict[str, Any], container: dict[str, Any], secret: str) -> str:
    """Mount the Secret ``secret`` read-only into ``container`` (a volume of the pod spec, reused when one already
    holds it); the directory where its keys appear as files.

    A file is what the remediations ask for instead of an environment variable: it is not inherited by child
    processes, not printed with the environment, and follows the Secret when it rotates."""
    volumes = spec.get("volumes")
    if not isinstance(volumes, list):
        volumes = spec["volumes"] = []
    volume = next((v for v in volumes if isinstance(v, dict) and isinstance(v.get("secret"), dict)
                   and v["secret"].get("secretName") == secret), None)
    if volume is None:
        taken = {v.get("name") for v in volumes if isinstance(v, dict)}
        name = base = f"secret-{secret}"[:63].rstrip("-")
        suffix = 2
        while name in taken:
            name = f"{base[:60].rstrip('-')}-{suffix}"
            suffix += 1
        volume = {"name": name, "secret": {"secretName": secret}}
        volumes.append(volume)
    mounts = container.get("volumeMounts")
    if not isinstance(mounts, list):
        mounts = container["volumeMounts"] = []
    existing = next((m for m in mounts if isinstance(m, dict) and m.get("name") == volume["name"]), None)
    if existing is not None:
        return str(existing.get("mountPath"))
    taken_paths = {m.get("mountPath") for m in mounts if isinstance(m, dict)}
    path = base_path = f"{SECRETS_DIR}/{secret}"
    suffix = 2
    while path in taken_paths:
        path = f"{base_path}-{suffix}"
        suffix += 1
    mounts.append({"name": volume["name"], "mountPath": path, "readOnly": True})
    return path


def any_changed(changes: list[bool]) -> bool:
    """``any`` over an already-evaluated list: every fix in it must run, not just the first that changes."""
    return any(changes)


# --- the document round trip -------------------------------------------------------------------------------


def dump_document(doc: Any) -> str:
    """One document as block-style YAML in its original key order (never ends without a newline)."""
    return yaml.safe_dump(doc, sort_keys=False, default_flow_style=False, allow_unicode=True, width=4096)


def split_documents(text: str, docs: list[Any]) -> list[str] | None:
    """The text of each document of ``docs`` (as ``yaml.safe_load_all`` returned them), cut at bare ``---`` lines,
    or None when the file does not split that way (directives, ``--- value`` lines, ``...`` markers)."""
    lines = text.splitlines(keepends=True)
    if any(line.startswith(("%", "...")) or (line.startswith("---") and not SEPARATOR_RE.match(line.rstrip("\r\n")))
           for line in lines):
        return None
    segments: list[list[str]] = [[]]
    for line in lines:
        if SEPARATOR_RE.match(line.rstrip("\r\n")):
            segments[-1].append(line)  # the separator closes the previous segment's text
            segments.append([])
        else:
            segments[-1].append(line)
    texts = ["".join(s) for s in segments]
    first_is_empty = yaml.load(_strip_separator(texts[0]), Loader=FAST_LOADER) is None
    if len(texts) > 1 and first_is_empty and len(texts) - 1 == len(docs):
        texts = [texts[0] + texts[1]] + texts[2:]  # a leading comment block / bare separator is no document
    if len(texts) != len(docs):
        return None
    try:
        if any(yaml.load(_strip_separator(t), Loader=FAST_LOADER) != d for t, d in zip(texts, docs, strict=True)):
            return None
    except yaml.YAMLError:
        return None
    return texts


def _strip_separator(segment: str) -> str:
    lines = segment.splitlines(keepends=True)
    return "".join(line for line in lines if not SEPARATOR_RE.match(line.rstrip("\r\n")))


def _replace_body(segment: str, body: str) -> str:
    """Swap a segment's document text for ``body``, keeping its leading and trailing ``---`` lines."""
    lines = segment.splitlines(keepends=True)
    head = []
    while lines and SEPARATOR_RE.match(lines[0].rstrip("\r\n")):
        head.append(lines.pop(0))
    tail = lines[-1] if lines and SEPARATOR_RE.match(lines[-1].rstrip("\r\n")) else ""
    return "".join(head) + body + (tail if tail.endswith("\n") else tail + "\n" if tail else "")


def render(text: str, original: list[Any], ctx: K8sContext) -> str:
    """The fixed manifest: changed documents re-dumped in place, untouched ones verbatim, added ones at the end."""
    segments = split_documents(text, original)
    if segments is None:
        parts = [dump_document(d) for d in ctx.docs if d is not None]
        out = "---\n".join(parts)
    else:
        out = "".join(seg if new == old else _replace_body(seg, dump_document(new) if new is not None else "")
                      for seg, old, new in zip(segments, original, ctx.docs, strict=True))
    for doc in ctx.added:
        if out and not out.endswith("\n"):
            out += "\n"
        if out and not SEPARATOR_RE.match(out.rstrip("\n").rsplit("\n", 1)[-1]):
            out += "---\n"
        out += dump_document(doc)
    return out
