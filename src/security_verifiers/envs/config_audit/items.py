"""The item contract of E2 ``config-audit``: what ``item.input`` and ``item.target`` hold, as pydantic models.

Every path that brings items in (the committed public split, ``sv data build``, ``sv eval --data``,
``sv data import``, the directory loader) validates against these models before anything runs, so that the
prompt and the scorer can index the item without checking it. The same models give ``sv envs --json`` its
JSON Schemas, for users who write their own items.

Strict where the scorer relies on a key: the platform, the file's name and text, and the oracle's findings
(rule ids of the catalog, severities). Optional where real items legitimately differ: ``context`` and
``module_resources`` exist only for a Terraform file read as part of a module, and ``target.fixed`` and
``target.mutations`` only for generated items (an imported file has no known fix).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from security_verifiers.engines.findings import Engine, Platform


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class ContextFile(_Strict):
    """Another file of a Terraform file's module that declares variables or locals (read-only context)."""

    filename: str = Field(min_length=1, description="Its path relative to the imported directory.")
    text: str


class ConfigAuditInput(_Strict):
    """``item.input``: one Kubernetes manifest or Terraform file, with its module's context for Terraform."""

    platform: Platform
    filename: str = Field(min_length=1, max_length=255, description="The file's name (patches are diffs "
                          "against it), e.g. manifest.yaml or main.tf.")
    text: str = Field(description="The file's content.")
    context: list[ContextFile] | None = Field(None, description="Terraform: the module's other files declaring "
                                              "variable or locals blocks.")
    module_resources: list[str] | None = Field(None, description="Terraform: addresses the module's other files "
                                               "declare (type.name, data.type.name, module.name).")

    @field_validator("filename")
    @classmethod
    def _bare_name(cls, value: str) -> str:
        if "/" in value or "\\" in value or value in (".", ".."):
            raise ValueError(f"filename must be a bare file name, not a path: {value!r}")
        return value


class FindingRecord(_Strict):
    """One finding of the oracle (our Rego library, Checkov, semgrep), as stored in ``target.findings``."""

    rule_id: str = Field(min_length=1, description="A rule id of the catalog (`sv rules config-audit`).")
    resource: str = Field(min_length=1, description="Kind/name (Kubernetes) or a Terraform address.")
    path: str | None = None
    severity: Literal["low", "medium", "high", "critical"]
    engines: list[Engine] = Field(default_factory=list)

    @field_validator("rule_id")
    @classmethod
    def _known_rule(cls, value: str) -> str:
        from security_verifiers.engines.findings import catalog

        if value not in catalog():
            raise ValueError(f"unknown rule id {value!r} (not in the rule catalog; see `sv rules config-audit`)")
        return value


class Mutation(_Strict):
    rule_id: str
    resource: str


class ConfigAuditTarget(_Strict):
    """``item.target``: the oracle's findings on the file; for generated items, the fix and the mutations."""

    findings: list[FindingRecord] = Field(description="Every violation the oracle finds (empty: a clean file).")
    fixed: str | None = Field(None, description="A fixed version of the file, when known (generated items).")
    mutations: list[Mutation] = Field(default_factory=list, description="The violations the generator injected.")
