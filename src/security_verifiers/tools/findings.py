"""The rule taxonomy and the finding every policy engine reports in it.

All engines (our Rego library, Checkov, semgrep) report :class:`Finding` objects keyed by the same
rule ids and resource identities, so their union can be deduplicated into one oracle. Severity
always comes from the catalog (the oracle's), never from a model's claim.
"""

from __future__ import annotations

from enum import StrEnum
from functools import cache
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

CATALOG_PATH = Path(__file__).parent / "policies" / "catalog.yaml"
Platform = Literal["kubernetes", "terraform"]
Engine = Literal["rego", "checkov", "semgrep"]


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
    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    title: str
    severity: Severity
    engine: Engine
    platforms: tuple[Platform, ...]
    reference: str = Field(description="The hardening guide the rule comes from (CIS, NSA/CISA, PSS).")
    remediation: str
    checkov: tuple[str, ...] = ()


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


@cache
def catalog() -> dict[str, Rule]:
    """All rules by id, loaded once from ``policies/catalog.yaml``."""
    raw = yaml.safe_load(CATALOG_PATH.read_text(encoding="utf-8"))
    rules: dict[str, Rule] = {}
    for section, entries in raw.items():
        platforms = ("kubernetes", "terraform") if section == "any" else (section,)
        for entry in entries:
            rule = Rule(platforms=platforms, **entry)
            if rule.id in rules:
                raise ValueError(f"rule id {rule.id} appears twice in {CATALOG_PATH}")
            rules[rule.id] = rule
    return rules


def rules_for(platform: Platform) -> list[Rule]:
    return [r for r in catalog().values() if platform in r.platforms]


@cache
def checkov_map() -> dict[str, str]:
    """Checkov check id -> our rule id, for the checks that test the same property as one of our rules."""
    out: dict[str, str] = {}
    for rule in catalog().values():
        for check in rule.checkov:
            out[check] = rule.id
    return out
