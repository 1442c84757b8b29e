"""Turn a directory of a user's own Kubernetes manifests and Terraform files into E2 items.

Every ``*.yaml`` / ``*.yml`` file holding Kubernetes objects and every ``*.tf`` file with at least one
``resource`` or ``data`` block under the directory (recursively, in sorted order, so the result is
deterministic) becomes one item labelled by the oracle: ``target.findings`` is the oracle's verdict,
``target.fixed`` is ``None`` (nobody wrote a fix) and ``target.mutations`` is empty. ``meta.source`` is the
file's path relative to the directory.

Nothing is guessed at and nothing is dropped silently. A file is either an item, or *skipped* with the
reason it is not a config to audit, or a *problem*: a config that cannot be read, reported with its line
and a hint and left out (the rest of the directory is still imported):

* skipped: Helm/Go templates (``{{ ... }}`` anywhere: render them first), tooling files that look like
  Kubernetes objects but configure a tool (kind, kubeadm, kustomize, component configs, kubeconfig, ...),
  YAML that is not Kubernetes (Helm values, CI pipelines, docker-compose), Terraform files with no
  ``resource`` or ``data`` block (variables, outputs, providers), anything under a hidden directory
  (``.terraform`` module caches, ``.git``);
* expanded: a ``kind: List`` (what ``kubectl get -o yaml`` prints) becomes the multi-document YAML of its
  items;
* problems: YAML or HCL that does not parse, a Kubernetes document without ``metadata.name``, a file mixing
  Kubernetes objects with other documents, text that is not UTF-8.

A Terraform file is read as part of its module (its directory): the module's other ``.tf`` files that
declare ``variable`` or ``locals`` blocks are stored in ``input["context"]`` (``{"filename", "text"}``,
sorted), so that variable defaults and locals resolve, and the addresses the other files declare (resources,
data sources, modules) in ``input["module_resources"]``, so that references to them are references to
declared things. The oracle labels each file with that context, as the scorer reads it.
"""

from __future__ import annotations

import logging
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from security_verifiers.core.datasets import item_id
from security_verifiers.core.errors import DatasetError
from security_verifiers.core.importing import Problem
from security_verifiers.core.types import Item
from security_verifiers.engines.configs import (
    FAST_LOADER,
    ConfigParseError,
    hcl_document,
    parse_kubernetes,
    parse_terraform,
)
from security_verifiers.envs.config_audit.generation.generator import GENERATOR_VERSION, findings_records, scan_all

log = logging.getLogger(__name__)

PLATFORM_BY_SUFFIX = {".yaml": "kubernetes", ".yml": "kubernetes", ".tf": "terraform"}
TEMPLATE_REASON = "template: render first (helm template)"
NOT_KUBERNETES_REASON = "not a Kubernetes manifest (no document has kind and apiVersion)"
#: apiVersion groups of tooling files that look like Kubernetes objects but are not cluster objects.
TOOLING_GROUPS = {
    "kind.x-k8s.io": "kind cluster config", "kubeadm.k8s.io": "kubeadm", "kustomize.config.k8s.io": "kustomize",
    "config.kubernetes.io": "KRM function config", "kpt.dev": "kpt", "k3d.io": "k3d cluster config",
    "eksctl.io": "eksctl cluster config", "ctlptl.dev": "ctlptl", "skaffold": "skaffold",
    "audit.k8s.io": "API server audit policy",
}
KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml")
#: Files labelled by the oracle per call, so the progress bar moves on a large directory (each call costs
#: one semgrep process, ~2 s).
LABEL_BATCH = 100
_TEMPLATE = re.compile(r"\{\{.*?\}\}", re.DOTALL)
_HCL_LINE = re.compile(r"\bline (\d+)\b")
_TF_CONTEXT_BLOCKS = ("variable", "locals")

#: ``progress(stage, done, total)``: ``stage`` is "reading" (files classified) or "labelling" (oracle).
ProgressFn = Callable[[str, int, int], None]


@dataclass
class LoadedDirectory:
    """The items of a directory, the files skipped (not configs) and the problems (configs not readable)."""

    items: list[Item] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    #: Files with other extensions (README.md, *.json, ...), not looked at.
    ignored: int = 0


@dataclass(frozen=True)
class _Pending:
    platform: str
    rel: str
    text: str
    expanded_list: bool = False


class _Skip(Exception):
    """The file is not a config to audit (the message says why)."""


class _Unreadable(Exception):
    """The file is a config that cannot be read: the 1-based line (if known) and the reason."""

    def __init__(self, line: int | None, reason: str) -> None:
        super().__init__(reason)
        self.line, self.reason = line, reason


# -- Kubernetes ------------------------------------------------------------------------------------
def _yaml_hint(problem: str, line_text: str) -> str | None:
    """What usually causes a YAML error, in words a user can act on."""
    if "tab" in problem or "\t" in line_text[: len(line_text) - len(line_text.lstrip())]:
        return "the line is indented with a tab; YAML indents with spaces only"
    if "mapping values are not allowed" in problem:
        return "quote a value that contains ': ', e.g. command: \"echo a: b\""
    if "could not find expected ':'" in problem:
        return "a line is missing its 'key:' or continues the previous value; check this line and the one above"
    if "did not find expected key" in problem or "expected <block end>" in problem:
        return "inconsistent indentation: the line is indented differently from its siblings"
    return None


def _yaml_error(text: str, err: yaml.YAMLError) -> _Unreadable:
    mark = getattr(err, "problem_mark", None)
    if mark is None:
        return _Unreadable(None, f"YAML does not parse: {err}")
    lines = text.splitlines()
    line_text = lines[mark.line] if mark.line < len(lines) else ""
    problem = str(getattr(err, "problem", "") or err)
    hint = _yaml_hint(problem, line_text)
    return _Unreadable(mark.line + 1, f"YAML does not parse: {problem}" + (f" (hint: {hint})" if hint else ""))


def _documents(text: str) -> list[tuple[int, Any]]:
    """(1-based start line, value) of every non-empty YAML document."""
    try:
        nodes = list(yaml.compose_all(text, Loader=FAST_LOADER))
    except yaml.YAMLError as err:
        raise _yaml_error(text, err) from err
    docs: list[tuple[int, Any]] = []
    for node in nodes:
        if node is None:
            continue
        loader = FAST_LOADER("")
        try:
            value = loader.construct_document(node)
        except yaml.YAMLError as err:
            raise _yaml_error(text, err) from err
        finally:
            loader.dispose()
        if value is not None:
            docs.append((node.start_mark.line + 1, value))
    return docs


def _is_object(doc: Any) -> bool:
    return isinstance(doc, dict) and "kind" in doc and "apiVersion" in doc


def _is_list(doc: Any) -> bool:
    """``kind: List`` (kubectl's output) or a typed list such as ``PodList``, with its ``items``."""
    return _is_object(doc) and str(doc["kind"]).endswith("List") and isinstance(doc.get("items"), list)


def _tooling(doc: dict[str, Any]) -> str | None:
    """What tool a Kubernetes-looking document configures, or ``None`` for a cluster object."""
    api_version = str(doc["apiVersion"])
    group = api_version.split("/", 1)[0] if "/" in api_version else ""
    if group in TOOLING_GROUPS:
        return TOOLING_GROUPS[group]
    if group.endswith(".config.k8s.io"):  # kubelet, kube-proxy, scheduler, apiserver component configs
        return f"component config {group}"
    if api_version == "v1" and doc["kind"] == "Config" and ("clusters" in doc or "contexts" in doc):
        return "kubeconfig"
    return None


def _kubernetes(rel: str, text: str) -> _Pending:
    """The manifest to audit in ``text``; raises :class:`_Skip` or :class:`_Unreadable`."""
    if _TEMPLATE.search(text):
        raise _Skip(TEMPLATE_REASON)
    if Path(rel).name.lower() in KUSTOMIZATION_FILES:
        raise _Skip("tooling (kustomize)")
    docs = _documents(text)
    if not docs:
        raise _Skip("empty (no YAML document)")
    expanded = any(_is_list(doc) for _, doc in docs)
    if expanded:
        docs = [(line, item) for line, doc in docs for item in (doc["items"] if _is_list(doc) else [doc])]
        if not docs:
            raise _Skip("empty List (no items)")
    objects = [(line, doc) for line, doc in docs if _is_object(doc)]
    if not objects:
        raise _Skip(NOT_KUBERNETES_REASON)
    tools = [_tooling(doc) for _, doc in objects]
    named = ", ".join(sorted({t for t in tools if t is not None}))
    if all(tools):
        raise _Skip(f"tooling ({named})")
    if any(tools):
        raise _Unreadable(None, f"mixes tooling ({named}) with cluster objects; split the file")
    others = [line for line, doc in docs if not _is_object(doc)]
    if others:
        raise _Unreadable(others[0], f"mixes Kubernetes objects with {len(others)} other document(s) "
                          "(no kind and apiVersion)")
    for line, doc in objects:
        meta = doc.get("metadata")
        if not isinstance(meta, dict) or not isinstance(meta.get("name"), str):
            generated = " (metadata.generateName is not enough: resources are named Kind/name)" \
                if isinstance(meta, dict) and "generateName" in meta else ""
            raise _Unreadable(line, f"not a valid Kubernetes manifest: the {doc['kind']} "
                              f"document has no metadata.name{generated}")
    if expanded:
        text = yaml.safe_dump_all([doc for _, doc in docs], sort_keys=False, allow_unicode=True)
    try:
        parse_kubernetes(text)
    except ConfigParseError as err:
        raise _Unreadable(None, f"not a valid Kubernetes manifest: {err}") from err
    return _Pending("kubernetes", rel, text, expanded)


# -- Terraform --------------------------------------------------------------------------------------
def _terraform_blocks(text: str) -> set[str]:
    """The top-level block types of a Terraform file (resource, variable, locals, ...)."""
    try:
        document = hcl_document(text)
        parse_terraform(text)  # resource and data blocks well formed
    except ConfigParseError as err:
        first = str(err).splitlines()[0]
        match = _HCL_LINE.search(first)
        raise _Unreadable(int(match.group(1)) if match else None, first) from err
    return {key for key, value in document.items() if not key.startswith("__") and value}


def _declared_addresses(text: str) -> list[str]:
    """Addresses a Terraform file declares: ``type.name``, ``data.type.name``, ``module.name``."""
    document = hcl_document(text)
    out = [b.address for b in parse_terraform(text).blocks]
    out += [f"module.{name}" for group in document.get("module") or [] for name in group]
    return out


# -- the directory ---------------------------------------------------------------------------------
def _candidates(root: Path) -> tuple[list[Path], int]:
    files = [p for p in root.rglob("*") if p.is_file()]
    kept = [p for p in files if p.suffix.lower() in PLATFORM_BY_SUFFIX]
    return sorted(kept, key=lambda p: p.relative_to(root).as_posix()), len(files) - len(kept)


def _hidden(rel: Path) -> bool:
    return any(part.startswith(".") for part in rel.parts[:-1])


def _item(split: str, pending: _Pending, result: Any, context: list[dict[str, str]],
          module_resources: list[str]) -> Item:
    inp: dict[str, Any] = {"platform": pending.platform, "filename": Path(pending.rel).name, "text": pending.text}
    if context:
        inp["context"] = context
    if module_resources:
        inp["module_resources"] = module_resources
    target = {"findings": findings_records(result.findings), "fixed": None, "mutations": []}
    meta: dict[str, Any] = {"source": pending.rel, "valid": result.valid, "loader_version": GENERATOR_VERSION}
    if pending.expanded_list:
        meta["expanded_list"] = True
    if not result.valid:
        meta["validation_errors"] = list(result.validation_errors[:5])
    if pending.platform == "kubernetes":  # custom resources and removed kinds: structure checked, content not
        from security_verifiers.engines.validate import validate

        unchecked = validate("kubernetes", pending.text).unchecked
        if unchecked:
            meta["unchecked"] = unchecked[:20]
    return Item(id=item_id("ca", {"input": inp, "target": target, "source": pending.rel}), split=split,
                input=inp, target=target, meta=meta)


def _contract_problem(item: Item) -> str | None:
    """Why ``item`` breaks the item contract (:mod:`items`), or ``None``."""
    from pydantic import ValidationError

    from security_verifiers.envs.config_audit.items import ConfigAuditInput, ConfigAuditTarget

    for part, model in (("input", ConfigAuditInput), ("target", ConfigAuditTarget)):
        try:
            model.model_validate(getattr(item, part))
        except ValidationError as err:
            first = err.errors()[0]
            return f"{'.'.join(str(p) for p in (part, *first['loc']))}: {first['msg']}"
    return None


def load_directory_report(path: Path | str, split: str = "local", oracle: Any | None = None,
                          progress: ProgressFn | None = None) -> LoadedDirectory:
    """Items for every config file under ``path``, the skipped files with reasons and the problems."""
    root = Path(path)
    if not root.is_dir():
        raise DatasetError(f"not a directory: {root}")
    out = LoadedDirectory()
    candidates, out.ignored = _candidates(root)
    pending: list[_Pending] = []
    module_context: dict[str, list[dict[str, str]]] = defaultdict(list)  # directory -> variable/locals files
    module_addresses: dict[str, dict[str, list[str]]] = defaultdict(dict)  # directory -> file -> addresses
    for done, file in enumerate(candidates, 1):
        rel = file.relative_to(root).as_posix()
        try:
            if _hidden(file.relative_to(root)):
                raise _Skip("under a hidden directory")
            try:
                text = file.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as err:
                raise _Unreadable(None, f"cannot be read as UTF-8 text: {err}") from err
            if PLATFORM_BY_SUFFIX[file.suffix.lower()] == "kubernetes":
                pending.append(_kubernetes(rel, text))
            else:
                blocks = _terraform_blocks(text)
                module_addresses[Path(rel).parent.as_posix()][rel] = _declared_addresses(text)
                if not blocks.isdisjoint(_TF_CONTEXT_BLOCKS):
                    module_context[Path(rel).parent.as_posix()].append({"filename": rel, "text": text})
                if blocks.isdisjoint(("resource", "data")):
                    raise _Skip(f"no resource or data block (only {', '.join(sorted(blocks)) or 'comments'})")
                pending.append(_Pending("terraform", rel, text))
        except _Skip as skip:
            out.skipped.append((rel, str(skip)))
        except _Unreadable as err:
            out.problems.append(Problem(rel, err.line, err.reason))
        if progress is not None:
            progress("reading", done, len(candidates))
    from security_verifiers.envs.config_audit.baselines import module_context_texts

    modules: list[tuple[list[dict[str, str]], list[str]]] = []
    for item_pending in pending:
        directory = Path(item_pending.rel).parent.as_posix()
        context = [c for c in module_context[directory] if c["filename"] != item_pending.rel] \
            if item_pending.platform == "terraform" else []
        own = set(module_addresses[directory].get(item_pending.rel, []))
        others = sorted({a for f, addresses in module_addresses[directory].items() if f != item_pending.rel
                         for a in addresses} - own) if item_pending.platform == "terraform" else []
        modules.append((context, others))
    results: list[Any] = []
    for start in range(0, len(pending), LABEL_BATCH):
        batch = list(zip(pending, modules, strict=True))[start:start + LABEL_BATCH]
        results.extend(scan_all([(p.platform, p.text, module_context_texts([c["text"] for c in context], others))
                                 for p, (context, others) in batch], oracle))
        if progress is not None:
            progress("labelling", len(results), len(pending))
    for item_pending, (context, others), result in zip(pending, modules, results, strict=True):
        if result.parse_error:  # an engine's parser is stricter than ours
            out.problems.append(Problem(item_pending.rel, None, f"the policy engines cannot parse it: "
                                        f"{result.parse_error}"))
            continue
        item = _item(split, item_pending, result, context, others)
        problem = _contract_problem(item)
        if problem is not None:
            out.problems.append(Problem(item_pending.rel, None, f"not a valid config-audit item: {problem}"))
            continue
        out.items.append(item)
    for rel, reason in out.skipped:
        log.info("config-audit loader skipped %s: %s", rel, reason)
    return out


def load_directory(path: Path | str, split: str = "local", oracle: Any | None = None) -> list[Item]:
    """Items for every Kubernetes manifest and Terraform file under ``path`` (see the module docstring).

    Strict: a config that cannot be read raises :class:`DatasetError` naming it (use
    :func:`load_directory_report` to get the problems and the skipped files instead)."""
    report = load_directory_report(path, split, oracle)
    if report.problems:
        first = report.problems[0]
        raise DatasetError(f"{Path(path) / first.file}{'' if first.line is None else f':{first.line}'}: "
                           f"{first.reason}" + (f" (and {len(report.problems) - 1} more problems)"
                                                if len(report.problems) > 1 else ""))
    return report.items
