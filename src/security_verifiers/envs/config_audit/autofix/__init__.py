"""Rule-based remediation for config-audit (E2): from a file and its findings, a fixed file and a patch.

``autofix(platform, text, findings)`` dispatches each finding to the fixer of its rule id
(:data:`~.kubernetes.K8S_FIXERS` / :data:`~.terraform.TF_FIXERS`) and reports what it fixed and what it
skipped. It works from the text and the findings only (never a dataset target), so it can fix a user's own
files, serve as a reference policy for the environment, and check that every rule is fixable in a way the
scorer accepts (inventory kept, result valid, finding gone).

The patch a model is expected to send is the diff of ``autofix``'s text against the original, rendered by the
patching kit's ``unified_diff`` (``envs/kits/patching``), which the scorer's applier reads back byte for byte.
"""

from __future__ import annotations

from dataclasses import dataclass

import yaml

from security_verifiers.engines.configs import ConfigParseError
from security_verifiers.engines.findings import Finding
from security_verifiers.envs.config_audit.autofix.common import Skipped
from security_verifiers.envs.config_audit.autofix.kubernetes import K8S_FIXERS, fix_kubernetes
from security_verifiers.envs.config_audit.autofix.terraform import TF_FIXERS, fix_terraform

__all__ = ["AutofixResult", "Skipped", "autofix", "fixable_rules"]

@dataclass(frozen=True)
class AutofixResult:
    """The fixed text, the findings a fixer handled, and the findings left alone (with the reason)."""

    text: str
    fixed: tuple[Finding, ...]
    skipped: tuple[Skipped, ...]

    @property
    def fixed_rules(self) -> tuple[str, ...]:
        return tuple(sorted({f.rule_id for f in self.fixed}))

    @property
    def skipped_rules(self) -> tuple[str, ...]:
        return tuple(sorted({s.rule_id for s in self.skipped}))


def fixable_rules(platform: str) -> frozenset[str]:
    """The rule ids with a fixer on ``platform``."""
    if platform == "kubernetes":
        return frozenset(K8S_FIXERS)
    if platform == "terraform":
        return frozenset(TF_FIXERS)
    raise ValueError(f"unknown platform {platform!r}")


def _unique(findings: list[Finding]) -> list[Finding]:
    """One finding per (rule, resource, path): engines that agree must not apply the same fix twice."""
    seen: dict[tuple[str, str, str | None], Finding] = {}
    for finding in findings:
        seen.setdefault((finding.rule_id, finding.resource, finding.path), finding)
    return list(seen.values())


def autofix(platform: str, text: str, findings: list[Finding]) -> AutofixResult:
    """Fix every finding that has a fixer; an unchanged file comes back byte for byte. A ``text`` that does not
    parse comes back unchanged, every finding skipped (a fixer cannot reason about a broken file).

    >>> from security_verifiers.engines.findings import Finding
    >>> manifest = "kind: Pod\\nmetadata: {name: p}\\nspec:\\n  hostPID: true\\n  containers: []\\n"
    >>> result = autofix("kubernetes", manifest, [Finding(rule_id="k8s-host-pid", resource="Pod/p")])
    >>> "hostPID" in result.text, result.fixed_rules
    (False, ('k8s-host-pid',))
    """
    if platform not in ("kubernetes", "terraform"):
        raise ValueError(f"unknown platform {platform!r}")
    unique = _unique(findings)
    try:
        if platform == "kubernetes":
            fixed_text, fixed, skipped = fix_kubernetes(text, unique)
        else:
            fixed_text, fixed, skipped = fix_terraform(text, unique)
    except (ConfigParseError, yaml.YAMLError) as err:
        reason = f"the input does not parse: {str(err).splitlines()[0] if str(err) else type(err).__name__}"
        return AutofixResult(text=text, fixed=(), skipped=tuple(Skipped(f.rule_id, f.resource, reason) for f in unique))
    return AutofixResult(text=fixed_text, fixed=tuple(fixed), skipped=tuple(skipped))
