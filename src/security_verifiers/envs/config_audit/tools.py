"""The scanners a model may call during a config-audit episode, with their budgets.

Every tool acts on the config text passed to it (default: the file under audit), never on a host
path. Bad arguments and exceeded budgets are answered as JSON errors, so the model can read them.

Tools run in a warm worker process (:class:`~security_verifiers.core.workers.LimitedWorker`, one per
environment) under the time limit ``tool_timeout_s`` and the memory limit ``memory_limit_mb``, enforced by
killing the worker: a thread could not be stopped while an engine holds the GIL. A draft that makes a scanner
crash or run past a limit is the model's doing: the call answers a JSON error and counts against the budget.
Only what does not depend on the model's text is an infrastructure error: a worker that cannot start, or a
scanner failing on the file under audit itself.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from security_verifiers.core.errors import ErrorKind, InfraError
from security_verifiers.core.workers import (
    LimitedWorker,
    LimitExceeded,
    WorkerLimits,
    WorkerRaised,
    WorkerStartFailed,
)
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
    """One episode's tools. ``max_calls`` bounds the calls; ``limits`` bound each call, run in ``worker``."""

    def __init__(self, platform: str, text: str, max_calls: int, limits: WorkerLimits, worker: LimitedWorker,
                 context: tuple[str, ...] = ()) -> None:
        self.platform = platform
        self.text = text
        self.context = context  # the other files of a Terraform module: variables and locals resolve from them
        self.max_calls = max_calls
        self.limits = limits
        self.worker = worker
        self.calls = 0
        self.over_budget = 0

    def schemas(self) -> list[dict[str, Any]]:
        return TOOL_SCHEMAS

    async def call(self, name: str, arguments: str) -> str:
        self.calls += 1
        if self.calls > self.max_calls:
            self.over_budget += 1
            return _error(f"tool budget exceeded: at most {self.max_calls} calls per episode; answer now")
        if name not in _HANDLERS:
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
        own_file = config == self.text  # a failure on the file under audit is not the model's doing
        try:
            result = await asyncio.to_thread(self.worker.call, _run_tool,
                                             (name, self.platform, config, self.context), self.limits)
        except WorkerStartFailed as err:
            raise InfraError(ErrorKind.TOOL, f"the tool worker could not start: {err}") from err
        except LimitExceeded as err:
            if own_file:
                raise InfraError(ErrorKind.TOOL, f"{name} on the file under audit: {err.reason}") from err
            return _error(f"{name} was stopped on this config: {err.reason}")
        except WorkerRaised as err:
            if own_file:
                raise err.error from err
            return _error(f"{name} failed on this config: {err.error.message}")
        return json.dumps(result, sort_keys=True)


def tool_worker() -> LimitedWorker:
    """A worker process for the tools (started on the first call; its engines load once)."""
    return LimitedWorker(_load_engines, (), ErrorKind.TOOL)


def _load_engines() -> None:
    from security_verifiers.engines.oracle import get_oracle

    get_oracle()


def _run_tool(_state: None, name: str, platform: str, config: str, context: tuple[str, ...]) -> dict[str, Any]:
    """One tool call, in the worker process."""
    return _HANDLERS[name](platform, config, context)


def _scan_policies(platform: str, config: str, context: tuple[str, ...]) -> dict[str, Any]:
    from security_verifiers.engines.oracle import get_oracle

    try:
        findings = get_oracle().rego.scan(platform, config, context)
    except ConfigParseError as err:
        return {"error": f"the config does not parse: {err}"}
    return {"findings": [f.model_dump(mode="json", exclude={"engines"}) for f in findings]}


def _scan_checkov(platform: str, config: str, context: tuple[str, ...]) -> dict[str, Any]:
    from security_verifiers.engines.oracle import get_oracle

    try:
        return {"failed_checks": get_oracle().checkov.scan_raw(platform, config, context)}
    except ConfigParseError as err:
        return {"error": f"the config does not parse: {err}"}


def _validate(platform: str, config: str, context: tuple[str, ...]) -> dict[str, Any]:
    from security_verifiers.engines.validate import validate

    result = validate(platform, config, context)
    return {"ok": result.ok, "errors": result.errors[:20]}


_HANDLERS = {"scan_policies": _scan_policies, "scan_checkov": _scan_checkov, "validate_schema": _validate}


def _error(message: str) -> str:
    return json.dumps({"error": message})
