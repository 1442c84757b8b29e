"""The rule taxonomy and the finding every policy engine reports in it.

All engines (our Rego library, Checkov, semgrep) report :class:`Finding` objects keyed by the same
rule ids and resource identities, so their union can be deduplicated into one oracle. Severity
always comes from the catalog (the oracle's), never from a model's claim.

The catalog is the folder ``policies/catalog/``. Every YAML file there may hold three sections:

* ``rules``: rules by platform (``kubernetes``, ``terraform``, or ``any`` for both). A rule names the
  engine that implements it (``rego``, ``semgrep``, or ``checkov`` for a rule Checkov alone implements),
  the resource types it can fire on, our severity, title, reference and remediation, and the Checkov
  checks that test the same property (``checkov``; mapped onto the rule on every platform of the rule).
* ``extends``: more Checkov checks (and resource types, and platforms) for a rule defined in another file,
  so the files can be written independently.
* ``excluded``: Checkov checks deliberately left out of the catalog, each with ``platform`` and ``reason``.

A Checkov check of the pinned registry is either mapped onto exactly one rule or excluded with a reason;
``tests/engines/test_catalog.py`` holds the catalog to that.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from functools import cache
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

CATALOG_DIR = Path(__file__).parent / "policies" / "catalog"
Platform = Literal["kubernetes", "terraform"]
PLATFORMS: tuple[Platform, ...] = ("kubernetes", "terraform")
Engine = Literal["rego", "checkov", "semgrep", "values"]


class Severity(StrEnum):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"

    @property
    def weight(self) -> float:
        """Scoring weight: a critical finding counts five times a low one."""
        return {"low": 1.0, "medium": 2.0, "high": 3.0, "critical": 5.0}[self.value]


class Rule(BaseModel):
    """One rule of the catalog: what a model may report and what the oracle checks."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*[a-z0-9]$", max_length=80)
    title: str = Field(min_length=3, max_length=160)
    severity: Severity
    engine: Engine = Field(description="The engine that implements the rule (checkov: Checkov alone).")
    platforms: tuple[Platform, ...]
    resource_types: tuple[str, ...] = Field(
        (), description="Terraform resource/data types or Kubernetes kinds it fires on; empty: any resource.")
    reference: str = Field(min_length=3, description="The hardening guide or check the rule comes from.")
    remediation: str = Field(min_length=3)
    checkov: tuple[str, ...] = Field((), description="Checkov checks mapped onto this rule.")
    hardcoded: bool = Field(
        False, description="The rule is about a literal written in the file (a secret): a value supplied from outside "
        "(a variable without a default) fixes it, where for other rules an unknown value may still be insecure.")
    native_platforms: tuple[Platform, ...] = Field(
        (), description="Where the rule's own engine implements it (the platforms of its defining file); the others "
        "come from Checkov checks mapped onto it by `extends`.")

    def applies_to(self, types: Iterable[str]) -> bool:
        """Whether the rule can fire on a file holding resources of ``types``."""
        return not self.resource_types or not set(self.resource_types).isdisjoint(types)


class Exclusion(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    checkov: str
    platform: Platform
    reason: str = Field(min_length=10)


class _Extension(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    rule: str
    checkov: tuple[str, ...] = ()
    resource_types: tuple[str, ...] = ()
    platforms: tuple[Platform, ...] = ()


class Finding(BaseModel):
    """One violation: ``resource`` is ``Kind/name`` (Kubernetes) or a Terraform address (``type.name``);
    ``path`` narrows it (a container name, an attribute path) and is optional."""

    model_config = ConfigDict(frozen=True)

    rule_id: str
    resource: str
    path: str | None = None
    engines: tuple[Engine, ...] = ()
    severity: Severity = Severity.LOW
    message: str = ""

    @property
    def key(self) -> tuple[str, str]:
        """What detection is scored on: (rule id, resource)."""
        return (self.rule_id, self.resource)


def _load_file(path: Path) -> dict[str, Any]:
    # libyaml's loader: the catalog is ~400 KB of YAML, read by every process (~0.7 s with the pure-Python
    # loader, ~0.1 s with libyaml; the same data, checked by tests/engines/test_catalog.py)
    from security_verifiers.engines.configs import FAST_LOADER

    raw = yaml.load(path.read_text(encoding="utf-8"), Loader=FAST_LOADER) or {}  # noqa: S506 - a safe loader
    unknown = set(raw) - {"rules", "extends", "excluded", "workloads"}
    if unknown:
        raise ValueError(f"{path.name}: unknown catalog section(s) {sorted(unknown)}")
    return raw


@cache
def _catalog() -> tuple[dict[str, Rule], tuple[Exclusion, ...]]:
    files = sorted(CATALOG_DIR.glob("*.yaml"))
    if not files:
        raise ValueError(f"no catalog files in {CATALOG_DIR}")
    rules: dict[str, Rule] = {}
    extensions: list[tuple[str, _Extension]] = []
    excluded: list[Exclusion] = []
    for path in files:
        raw = _load_file(path)
        for section, entries in (raw.get("rules") or {}).items():
            if section not in ("kubernetes", "terraform", "any"):
                raise ValueError(f"{path.name}: unknown platform section {section!r}")
            default = PLATFORMS if section == "any" else (section,)
            for entry in entries or []:
                rule = Rule(**{"platforms": default, **entry})
                rule = rule.model_copy(update={"native_platforms": rule.platforms})
                if rule.id in rules:
                    raise ValueError(f"rule id {rule.id} appears twice in the catalog ({path.name})")
                rules[rule.id] = rule
        extensions.extend((path.name, _Extension(**e)) for e in raw.get("extends") or [])
        excluded.extend(Exclusion(**e) for e in raw.get("excluded") or [])
    for where, ext in extensions:
        if ext.rule not in rules:
            raise ValueError(f"{where}: extends unknown rule {ext.rule!r}")
        base = rules[ext.rule]
        rules[ext.rule] = base.model_copy(update={
            "checkov": tuple(dict.fromkeys((*base.checkov, *ext.checkov))),
            "resource_types": tuple(dict.fromkeys((*base.resource_types, *ext.resource_types)))
            if base.resource_types else (),
            "platforms": tuple(p for p in PLATFORMS if p in base.platforms or p in ext.platforms)})
    return rules, tuple(excluded)


def catalog() -> dict[str, Rule]:
    """All rules by id, loaded once from ``policies/catalog/*.yaml``."""
    return _catalog()[0]


def exclusions() -> tuple[Exclusion, ...]:
    """The Checkov checks deliberately left out of the catalog, with their reasons."""
    return _catalog()[1]


def rules_for(platform: Platform | str, types: Iterable[str] | None = None) -> list[Rule]:
    """The rules of ``platform``; with ``types``, only those that apply to a file holding resources of those types."""
    kept = [r for r in catalog().values() if platform in r.platforms]
    if types is None:
        return kept
    present = set(types)
    return [r for r in kept if r.applies_to(present)]


@cache
def checkov_map(platform: Platform | str) -> dict[str, str]:
    """Checkov check id -> our rule id on ``platform`` (one check id can run on both platforms: the
    ``CKV_K8S_*`` checks also cover Terraform's ``kubernetes_*`` resources)."""
    out: dict[str, str] = {}
    for rule in catalog().values():
        if platform not in rule.platforms:
            continue
        for check in rule.checkov:
            if check in out and out[check] != rule.id:
                raise ValueError(f"Checkov check {check} is mapped onto both {out[check]} and {rule.id} ({platform})")
            out[check] = rule.id
    return out
