"""The scanners a model may call during a config-audit episode, declared on the budgeted-toolbox kit.

Every tool acts on the config text passed to it (default: the file under audit), never on a host path. The kit
(``envs/kits/toolbox``) counts the calls against the budget, answers bad arguments and exceeded budgets as JSON
errors the model can read, and runs each call in the environment's warm worker process under the time limit
``tool_timeout_s`` and the memory limit ``memory_limit_mb``. A draft that makes a scanner crash or run past a
limit is the model's doing: the call answers a JSON error and counts against the budget. Only what does not
depend on the model's text is an infrastructure error: a worker that cannot start, or a scanner failing on the
file under audit itself.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from security_verifiers.core.workers import LimitedWorker, WorkerLimits
from security_verifiers.engines.configs import ConfigParseError
from security_verifiers.envs.kits.toolbox import BudgetedToolbox, CallBudget, Tool


class ConfigArguments(BaseModel):
    """Every tool's one argument: the config to check."""

    model_config = ConfigDict(extra="forbid")

    config: str | None = Field(None, description="Full text of the config to check (default: the file under audit). "
                               "Pass a draft to check a fix before answering.")


def _scan_policies(_state: None, platform: str, config: str, context: tuple[str, ...]) -> dict[str, Any]:
    from security_verifiers.engines.oracle import get_oracle

    try:
        findings = get_oracle().rego.scan(platform, config, context)
    except ConfigParseError as err:
        return {"error": f"the config does not parse: {err}"}
    return {"findings": [f.model_dump(mode="json", exclude={"engines"}) for f in findings]}


def _scan_checkov(_state: None, platform: str, config: str, context: tuple[str, ...]) -> dict[str, Any]:
    from security_verifiers.engines.oracle import get_oracle

    try:
        return {"failed_checks": get_oracle().checkov.scan_raw(platform, config, context)}
    except ConfigParseError as err:
        return {"error": f"the config does not parse: {err}"}


def _validate(_state: None, platform: str, config: str, context: tuple[str, ...]) -> dict[str, Any]:
    from security_verifiers.engines.validate import validate

    result = validate(platform, config, context)
    return {"ok": result.ok, "errors": result.errors[:20]}


def load_engines() -> None:
    """The tool worker's start-up: the oracle's engines, loaded once per worker process."""
    from security_verifiers.engines.oracle import get_oracle

    get_oracle().load()


class AuditToolbox(BudgetedToolbox):
    """One episode's scanners, on the file under audit (``text``) of ``platform`` and its module's ``context``."""

    tools: ClassVar[tuple[Tool, ...]] = (
        Tool("scan_policies", "Run the policy library (the rule catalog in the system prompt) on a config; returns "
             "findings with rule_id, resource, path, severity.", ConfigArguments, _scan_policies),
        Tool("scan_checkov", "Run Checkov on a config; returns its failed checks, each mapped to a catalog rule_id "
             "where one tests the same property.", ConfigArguments, _scan_checkov),
        Tool("validate_schema", "Check that a config parses and (Kubernetes) validates against the API schema.",
             ConfigArguments, _validate),
    )
    own_input: ClassVar[str] = "the file under audit"
    draft: ClassVar[str] = "this config"

    def __init__(self, platform: str, text: str, max_calls: int, limits: WorkerLimits, worker: LimitedWorker,
                 context: tuple[str, ...] = ()) -> None:
        super().__init__(CallBudget(max_calls), limits, worker)
        self.platform = platform
        self.text = text
        self.context = context  # the other files of a Terraform module: variables and locals resolve from them

    def bind(self, tool: Tool, arguments: Any) -> tuple[tuple[Any, ...], bool]:
        config = self.text if arguments.config is None else arguments.config
        return (self.platform, config, self.context), config == self.text
