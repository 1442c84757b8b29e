"""Turn a directory of a user's own Kubernetes manifests and Terraform files into E2 items.

Every ``*.yaml`` / ``*.yml`` file holding Kubernetes objects and every ``*.tf`` file with at least one
``resource`` or ``data`` block under the directory (recursively, in sorted order, so the result is
deterministic) becomes one item labelled by the oracle: ``target.findings`` is the oracle's verdict,
``target.fixed`` is ``None`` (nobody wrote a fix) and ``target.mutations`` is empty. Files that are not
configs to audit are skipped and reported, not guessed at: YAML without ``kind``/``apiVersion`` (Helm
values, CI pipelines, docker-compose), kustomize files, Terraform files with only variables or outputs,
and anything under a hidden directory (``.terraform`` module caches, ``.git``). A file that *is* meant to
be a config but cannot be read (broken YAML/HCL, a Kubernetes document without ``metadata.name``, a file
mixing Kubernetes and other documents) raises :class:`DatasetError` naming the file: nothing is dropped
silently.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from security_verifiers.core.datasets import item_id
from security_verifiers.core.errors import DatasetError
from security_verifiers.core.types import Item
from security_verifiers.engines.configs import FAST_LOADER, ConfigParseError, parse_kubernetes, parse_terraform
from security_verifiers.envs.config_audit.generation.generator import GENERATOR_VERSION, findings_records, scan_all

log = logging.getLogger(__name__)

PLATFORM_BY_SUFFIX = {".yaml": "kubernetes", ".yml": "kubernetes", ".tf": "terraform"}
#: apiVersion groups of tooling files that look like Kubernetes objects but are not cluster objects.
NON_OBJECT_API_GROUPS = ("kustomize.config.k8s.io/", "config.kubernetes.io/")


@dataclass
class LoadedDirectory:
    """The items of a directory and the files that were skipped, each with the reason."""

    items: list[Item] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)


def _candidates(root: Path) -> list[Path]:
    files = [p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in PLATFORM_BY_SUFFIX]
    return sorted(files, key=lambda p: p.relative_to(root).as_posix())


def _hidden(rel: Path) -> bool:
    return any(part.startswith(".") for part in rel.parts[:-1])


def _kubernetes_skip_reason(text: str, where: str) -> str | None:
    """Why a YAML file is not a manifest to audit, or ``None`` when it is; raises on a broken one."""
    try:
        docs = [d for d in yaml.load_all(text, Loader=FAST_LOADER) if d is not None]
    except yaml.YAMLError as err:
        raise DatasetError(f"{where}: YAML does not parse: {err}") from err
    objects = [d for d in docs if isinstance(d, dict) and "kind" in d and "apiVersion" in d]
    if not objects:
        return "no Kubernetes object (no document with kind and apiVersion)"
    if len(objects) != len(docs):
        raise DatasetError(f"{where}: mixes Kubernetes objects with {len(docs) - len(objects)} other document(s)")
    if all(str(d["apiVersion"]).startswith(NON_OBJECT_API_GROUPS) for d in objects):
        return f"tooling file ({objects[0]['kind']}), not a cluster object"
    try:
        parse_kubernetes(text)
    except ConfigParseError as err:
        raise DatasetError(f"{where}: not a valid Kubernetes manifest: {err}") from err
    return None


def _terraform_skip_reason(text: str, where: str) -> str | None:
    try:
        parsed = parse_terraform(text)
    except ConfigParseError as err:
        raise DatasetError(f"{where}: {err}") from err
    if not parsed.blocks:
        return "no resource or data block (variables, outputs or provider settings only)"
    return None


def _read(path: Path, where: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise DatasetError(f"{where}: cannot be read as UTF-8 text: {err}") from err


def _item(split: str, platform: str, rel: str, text: str, result: Any) -> Item:
    inp = {"platform": platform, "filename": Path(rel).name, "text": text}
    target = {"findings": findings_records(result.findings), "fixed": None, "mutations": []}
    meta: dict[str, Any] = {"source": rel, "valid": result.valid, "loader_version": GENERATOR_VERSION}
    if not result.valid:
        meta["validation_errors"] = list(result.validation_errors[:5])
    return Item(id=item_id("ca", {"input": inp, "target": target, "source": rel}), split=split, input=inp,
                target=target, meta=meta)


def load_directory_report(path: Path | str, split: str = "local", oracle: Any | None = None) -> LoadedDirectory:
    """Items for every config file under ``path`` plus the list of skipped files with reasons."""
    root = Path(path)
    if not root.is_dir():
        raise DatasetError(f"not a directory: {root}")
    out = LoadedDirectory()
    pending: list[tuple[str, str, str]] = []  # (platform, relative path, text)
    for file in _candidates(root):
        rel = file.relative_to(root).as_posix()
        if _hidden(file.relative_to(root)):
            out.skipped.append((rel, "under a hidden directory"))
            continue
        platform = PLATFORM_BY_SUFFIX[file.suffix.lower()]
        text = _read(file, rel)
        check = _kubernetes_skip_reason if platform == "kubernetes" else _terraform_skip_reason
        reason = check(text, str(file))
        if reason is not None:
            out.skipped.append((rel, reason))
            continue
        pending.append((platform, rel, text))
    results = scan_all([(p, t) for p, _, t in pending], oracle)
    for (platform, rel, text), result in zip(pending, results, strict=True):
        if result.parse_error:  # an engine's parser is stricter than ours
            raise DatasetError(f"{root / rel}: {result.parse_error}")
        out.items.append(_item(split, platform, rel, text, result))
    for rel, reason in out.skipped:
        log.warning("config-audit loader skipped %s: %s", rel, reason)
    return out


def load_directory(path: Path | str, split: str = "local", oracle: Any | None = None) -> list[Item]:
    """Items for every Kubernetes manifest and Terraform file under ``path`` (see the module docstring);
    skipped files are logged (use :func:`load_directory_report` to get them)."""
    return load_directory_report(path, split, oracle).items
