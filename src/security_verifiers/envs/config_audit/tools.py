"""The scanners a model may call during a config-audit episode, with their budgets.

Every tool acts on the config text passed to it (default: the file under audit), never on a host
path. Bad arguments and exceeded budgets are answered as JSON errors, so the model can read them;
only a crash of the scanner itself is an infrastructure error.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from security_verifiers.engines.configs import ConfigParseError
from security_verifiers.envs.base import Toolbox

MAX_CONFIG_CHARS = 100_000

_CONFIG_ARG = {"config": {"type": "string",
                          "description": "Full text of the config to check (default: the file under audit). "
                          "Pass a draft to check a fix before answering."}}

TOOL_SCHEMAS: list[dict[str, Any]] = [
    {"type": "function", "function": {
        "name": "scan_policies",
        "description": "Run the policy library (the rule catalog in the system prompt) on a config; returns "
                       "findings with rule_id, resource, path, severity.",
        "parameters": {"type": "object", "properties": _CONFIG_ARG, "additionalProperties": False}}},
    {"type": "function", "function": {
        "name": "scan_checkov",
        "description": "Run Checkov on a config; returns its failed checks, each mapped to a catalog rule_id "
                       "where one tests the same property.",
        "parameters": {"type": "object", "properties": _CONFIG_ARG, "additionalProperties": False}}},
    {"type": "function", "function": {
        "name": "validate_schema",
        "description": "Check that a config parses and (Kubernetes) validates against the API schema.",
        "parameters": {"type": "object", "properties": _CONFIG_ARG, "additionalProperties": False}}},
]


class AuditToolbox(Toolbox):
    """One episode's tools. ``max_calls`` bounds the calls; ``timeout_s`` bounds each call."""

    def __init__(self, platform: str, text: str, max_calls: int, timeout_s: float,
                 context: tuple[str, ...] = ()) -> None:
        self.platform = platform
        self.text = text
        self.context = context  # the other files of a Terraform module: variables and locals resolve from them
        self.max_calls = max_calls
        self.timeout_s = timeout_s
        self.calls = 0
        self.over_budget = 0

    def schemas(self) -> list[dict[str, Any]]:
        return TOOL_SCHEMAS

    async def call(self, name: str, arguments: str) -> str:
        self.calls += 1
        if self.calls > self.max_calls:
            self.over_budget += 1
            return _error(f"tool budget exceeded: at most {self.max_calls} calls per episode; answer now")
        handler = {"scan_policies": self._scan_policies, "scan_checkov": self._scan_checkov,
                   "validate_schema": self._validate}.get(name)
        if handler is None:
            return _error(f"unknown tool {name!r}; available: scan_policies, scan_checkov, validate_schema")
        try:
            args = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as err:
            return _error(f"arguments are not valid JSON: {err.msg}")
        if not isinstance(args, dict) or set(args) - {"config"}:
            return _error("arguments must be an object with at most the key 'config'")
        config = args.get("config", self.text)
        if not isinstance(config, str) or len(config) > MAX_CONFIG_CHARS:
            return _error(f"config must be a string of at most {MAX_CONFIG_CHARS} characters")
        try:
            result = await asyncio.wait_for(asyncio.to_thread(handler, config), self.timeout_s)
        except TimeoutError:
            return _error(f"the tool took longer than {self.timeout_s}s and was stopped")
        return json.dumps(result, sort_keys=True)

    def _scan_policies(self, config: str) -> dict[str, Any]:
        from security_verifiers.engines.oracle import get_oracle

        try:
            findings = get_oracle().rego.scan(self.platform, config, self.context)
        except ConfigParseError as err:
            return {"error": f"the config does not parse: {err}"}
        return {"findings": [f.model_dump(mode="json", exclude={"engines"}) for f in findings]}

    def _scan_checkov(self, config: str) -> dict[str, Any]:
        from security_verifiers.engines.oracle import get_oracle

        try:
            return {"failed_checks": get_oracle().checkov.scan_raw(self.platform, config, self.context)}
        except ConfigParseError as err:
            return {"error": f"the config does not parse: {err}"}

    def _validate(self, config: str) -> dict[str, Any]:
        from security_verifiers.engines.validate import validate

        result = validate(self.platform, config, self.context)
        return {"ok": result.ok, "errors": result.errors[:20]}


def _error(message: str) -> str:
    return json.dumps({"error": message})
