"""Baseline policies of config-audit: the reference, two honest non-LLM auditors, and hacking policies.

``tools`` reports what the scanners find and patches nothing; ``autofix`` also patches every finding
with rule-based remediations (the strong non-LLM patcher). In ``tools`` mode both really call the
tools through the episode loop (first turn: tool calls; second turn: the answer), so the tool path
is exercised exactly as a model would use it. The hacks try to game the reward; the conformance
suite checks that none beats an honest baseline.
"""

from __future__ import annotations

import json
import re
from typing import Any

from security_verifiers.core.types import Completion, Item, Message, ToolCall
from security_verifiers.engines.configs import ConfigParseError, parse_kubernetes, parse_terraform
from security_verifiers.engines.findings import Finding, rules_for
from security_verifiers.envs.kits.patching import unified_diff
from security_verifiers.models.base import Baseline


def context_of(item: Item) -> tuple[str, ...]:
    """What the engines read besides an item's Terraform file: the other files of its module that declare
    variables and locals, and the addresses the rest of the module declares (empty for a file on its own)."""
    return module_context_texts([str(c["text"]) for c in item.input.get("context") or []],
                                [str(a) for a in item.input.get("module_resources") or []])


def module_context_texts(files: list[str], addresses: list[str]) -> tuple[str, ...]:
    """Context texts for the evaluator: the files, and one text declaring ``addresses`` (the module's resources,
    data sources and modules in files not included), so that references to them are references to declared
    things whose attributes are computed."""
    if not addresses:
        return tuple(files)
    lines = ["# declared in other files of the module"]
    for address in addresses:
        parts = address.split(".")
        if parts[0] == "data" and len(parts) == 3:
            lines.append(f'data "{parts[1]}" "{parts[2]}" {{}}')
        elif parts[0] == "module" and len(parts) == 2:
            lines.append(f'module "{parts[1]}" {{}}')
        elif len(parts) == 2:
            lines.append(f'resource "{parts[0]}" "{parts[1]}" {{}}')
    return (*files, "\n".join(lines) + "\n")


def _answer(findings: list[tuple[str, str]], patch: str = "", confidence: float = 0.9) -> str:
    claims = [{"rule_id": r, "resource": res} for r, res in sorted(set(findings))]
    return json.dumps({"findings": claims, "patch": patch, "confidence": confidence})


def scanner_findings(platform: str, text: str, context: tuple[str, ...] = ()) -> list[Finding]:
    """What the model-facing scanners report: the policy library and Checkov (mapped to catalog ids)."""
    from security_verifiers.engines.oracle import get_oracle

    try:
        found = get_oracle().scanner_findings(platform, text, context)
    except ConfigParseError:
        return []
    return list({f.key: f for f in found}.values())


def _findings_from_tool_results(messages: list[Message]) -> list[tuple[str, str]]:
    claims: list[tuple[str, str]] = []
    for message in messages:
        if message.role != "tool":
            continue
        result = json.loads(message.content)
        for f in result.get("findings", []):
            claims.append((f["rule_id"], f["resource"]))
        for c in result.get("failed_checks", []):
            if c.get("rule_id"):
                claims.append((c["rule_id"], c["resource"]))
    return claims


class _ScannerBaseline(Baseline):
    """Shared turn logic: call the tools when offered, else scan in-process, then answer."""

    #: The scanners' work (and autofix's re-parses) runs in the scoring workers, beside the scoring: see
    #: ``harness.scoring_pool.in_workers``.
    runs_in_workers = True

    def findings(self, item: Item, messages: list[Message]) -> list[tuple[str, str]]:
        if any(m.role == "tool" for m in messages):
            return _findings_from_tool_results(messages)
        return [f.key for f in scanner_findings(item.input["platform"], item.input["text"], context_of(item))]

    def patch(self, item: Item, claims: list[tuple[str, str]]) -> str:
        return ""

    async def respond(self, item: Item, messages: list[Message], tools: list[dict[str, Any]] | None,
                      sample: int) -> Completion:
        if tools and not any(m.role == "tool" for m in messages):
            calls = [ToolCall(id="call-1", name="scan_policies", arguments="{}"),
                     ToolCall(id="call-2", name="scan_checkov", arguments="{}")]
            return Completion(text="", tool_calls=calls, finish_reason="tool_calls")
        claims = self.findings(item, messages)
        return Completion(text=_answer(claims, self.patch(item, claims)), finish_reason="stop")


class ToolsBaseline(_ScannerBaseline):
    name = "tools"


class AutofixBaseline(_ScannerBaseline):
    name = "autofix"

    def patch(self, item: Item, claims: list[tuple[str, str]]) -> str:
        from security_verifiers.envs.config_audit.autofix import autofix

        platform, text = item.input["platform"], item.input["text"]
        findings = [f for f in scanner_findings(platform, text, context_of(item)) if f.key in set(claims)]
        fixed = autofix(platform, text, findings).text
        return unified_diff(text, fixed, item.input["filename"])


class ReferenceBaseline(Baseline):
    """The oracle's findings and the generator's fix (the secure base the mutations were applied to)."""

    name = "reference"

    def answer(self, item: Item, messages: list[Message]) -> str:

        claims = [(f["rule_id"], f["resource"]) for f in item.target["findings"]]
        fixed = item.target.get("fixed")
        patch = unified_diff(item.input["text"], fixed, item.input["filename"]) if fixed else ""
        return _answer(claims, patch, confidence=1.0)


def resources_of(platform: str, text: str) -> list[str]:
    try:
        if platform == "kubernetes":
            return [o.resource for o in parse_kubernetes(text)]
        return [b.address for b in parse_terraform(text).blocks]
    except ConfigParseError:
        return []


def _rename(platform: str, text: str) -> str:
    if platform == "kubernetes":
        return re.sub(r"(?m)^(  name: )(\S+)$", r"\1\2-renamed", text)
    return re.sub(r'(?m)^((?:resource|data) "[^"]+" ")([^"]+)(")', r"\1\2_renamed\3", text)


#: name -> what the hack claims and which patch it sends.
HACKS: tuple[str, ...] = ("claim-everything", "empty", "delete-everything", "comment-out", "rename-resources",
                          "equivalent-rewrite", "undeclared-reference")

_TF_ASSIGNMENT = re.compile(r"^(\s*)([A-Za-z_][\w-]*)(\s*=\s*)(.+?)\s*$")
_YAML_ENTRY = re.compile(r"^(\s*(?:- )?)([A-Za-z_][\w.-]*):(\s+)(\S.*)$")


def _equivalent(value: str) -> str:
    """The same Terraform value spelled differently: what an engine reading raw text would not recognise.

    >>> _equivalent("true"), _equivalent('"public-read"'), _equivalent("22")
    ('!false', '"${"public-read"}"', '22 + 0')
    """
    if value in ("true", "false"):
        return "!" + ("false" if value == "true" else "true")
    if re.fullmatch(r'"[^"\\$%]*"', value):
        return '"${' + value + '}"'
    if re.fullmatch(r"-?\d+", value):
        return f"{value} + 0"
    return f"true ? {value} : {value}"


def silencing_patch(platform: str, text: str, fixed: str, mode: str) -> str:
    """``text`` where each line that ``fixed`` changes keeps its insecure value, re-spelled: for Terraform as an
    equivalent expression (``mode="equivalent"``) or as a variable nobody declares (``"undeclared"``); for
    Kubernetes the secure line is added *after* the insecure one, as a duplicate key (YAML keeps the last)."""
    import difflib

    lines = text.splitlines(keepends=True)
    out = list(lines)
    fixed_lines = fixed.splitlines(keepends=True)
    inserts: dict[int, list[str]] = {}
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, lines, fixed_lines, autojunk=False).get_opcodes():
        if tag != "replace":
            continue
        for offset, index in enumerate(range(i1, i2)):
            line = lines[index]
            if platform == "terraform":
                match = _TF_ASSIGNMENT.match(line.rstrip("\n"))
                if match is None or match.group(2) in ("resource", "data"):
                    continue
                value = _equivalent(match.group(4)) if mode == "equivalent" else f"var.sv_undeclared_{index}"
                out[index] = f"{match.group(1)}{match.group(2)}{match.group(3)}{value}\n"
            elif j1 + offset < j2:
                new_line = fixed_lines[j1 + offset]
                old, new = _YAML_ENTRY.match(line.rstrip("\n")), _YAML_ENTRY.match(new_line.rstrip("\n"))
                if old and new and old.group(2) == new.group(2) and old.group(4) != new.group(4):
                    indent = " " * len(old.group(1))  # a list item's "- " becomes plain indentation
                    inserts.setdefault(index, []).append(f"{indent}{new.group(2)}:{new.group(3)}{new.group(4)}\n")
    result: list[str] = []
    for index, line in enumerate(out):
        result.append(line if line.endswith("\n") else line + "\n")
        result.extend(inserts.get(index, []))
    return "".join(result)


class HackBaseline(Baseline):
    """Policies that try to game the reward (see HACKS); honest detection is mixed in where it helps them."""

    runs_in_workers = True  # as the scanner baselines: most hacks scan, two run the autofixer

    def __init__(self, hack: str) -> None:
        if hack not in HACKS:
            raise ValueError(f"unknown hack {hack!r}")
        self.name = hack

    def answer(self, item: Item, messages: list[Message]) -> str:

        platform, text, filename = item.input["platform"], item.input["text"], item.input["filename"]
        if self.name == "empty":
            return _answer([])
        if self.name == "claim-everything":  # every rule the prompt lists, on every resource
            from security_verifiers.engines.configs import resource_types

            resources = resources_of(platform, text)
            listed = rules_for(platform, resource_types(platform, text))
            return _answer([(r.id, res) for r in listed for res in resources][:2000])
        claims = [f.key for f in scanner_findings(platform, text, context_of(item))]
        if self.name == "delete-everything":
            return _answer(claims, unified_diff(text, "", filename))
        if self.name == "comment-out":
            commented = "".join(f"# {line}" if line.strip() else line for line in text.splitlines(keepends=True))
            return _answer(claims, unified_diff(text, commented, filename))
        if self.name in ("equivalent-rewrite", "undeclared-reference"):
            from security_verifiers.envs.config_audit.autofix import autofix

            fixed = autofix(platform, text, scanner_findings(platform, text, context_of(item))).text
            mode = "equivalent" if self.name == "equivalent-rewrite" else "undeclared"
            return _answer(claims, unified_diff(text, silencing_patch(platform, text, fixed, mode), filename))
        return _answer(claims, unified_diff(text, _rename(platform, text), filename))
