"""The tools a model may call during a code-repair episode (``mode="tools"``), on the budgeted-toolbox kit.

- ``run_tests``: apply a draft patch (or none) and run the program's functional probes in the sandbox; it answers
  which passed and which failed, never what they expected (the probes stay hidden) and never the exploits.
- ``run_bandit``: bandit's findings on the task's files with a draft patch applied (or as given).

A draft that does not apply answers the applier's message. Calls run in the environment's warm worker process
under ``tool_timeout_s`` and ``memory_limit_mb``; past the budget a call is refused and costs reward.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from security_verifiers.core.workers import LimitedWorker, WorkerLimits
from security_verifiers.envs.kits.patching import PatchError, apply_patch_files
from security_verifiers.envs.kits.toolbox import BudgetedToolbox, CallBudget, Tool


class DraftArguments(BaseModel):
    model_config = ConfigDict(extra="forbid")

    patch: str | None = Field(None, description="A unified diff against the given files to try (default: the files "
                              "as given).")


def _patched(files: dict[str, str], patch: str | None) -> dict[str, str] | dict[str, Any]:
    if patch is None or not patch.strip():
        return files
    try:
        return apply_patch_files(files, patch)
    except PatchError as err:
        return {"error": f"the patch does not apply: {err}"}


def _run_tests(_state: None, target: dict[str, Any], files: dict[str, str], description: str,
               patch: str | None) -> dict[str, Any]:
    from security_verifiers.envs.code_repair.execution import execute
    from security_verifiers.envs.code_repair.items import is_program, program_of
    from security_verifiers.envs.code_repair.verdict import judge

    if not is_program(target):
        return {"error": "this item is an imported record: it has no tests to run"}
    patched = _patched(files, patch)
    if "error" in patched:
        return patched
    full = program_of({"files": files, "description": description}, target)
    functional_only = full.model_copy(update={"probes": full.functional()})  # the exploits stay hidden
    run = execute(functional_only, patched)  # type: ignore[arg-type]
    verdict = judge(functional_only, run)
    return {"passed": len(verdict.functional_passed), "failed": len(verdict.functional_failed),
            "timed_out": run.timed_out, "import_error": run.import_error}


def _run_bandit(_state: None, target: dict[str, Any], files: dict[str, str], description: str,
                patch: str | None) -> dict[str, Any]:
    from security_verifiers.envs.code_repair.static import scan

    patched = _patched(files, patch)
    if "error" in patched:
        return patched
    return {"findings": [{"test_id": f.test_id, "file": f.file, "line": f.line, "severity": f.severity,
                          "confidence": f.confidence, "cwe": f.cwe} for f in scan(patched)]}  # type: ignore[arg-type]


def load_nothing() -> None:
    """The tool worker's start-up: bandit loads on its first scan."""


class RepairToolbox(BudgetedToolbox):
    tools: ClassVar[tuple[Tool, ...]] = (
        Tool("run_tests", "Apply a draft patch (or none) and run the program's hidden functional tests in the "
             "sandbox; returns how many passed and failed.", DraftArguments, _run_tests),
        Tool("run_bandit", "Apply a draft patch (or none) and run the bandit static analyser on the program; "
             "returns its findings (test id, file, line, severity, CWE).", DraftArguments, _run_bandit),
    )
    own_input: ClassVar[str] = "the program as given"
    draft: ClassVar[str] = "this patch"

    def __init__(self, target: dict[str, Any], files: dict[str, str], description: str, max_calls: int,
                 limits: WorkerLimits, worker: LimitedWorker) -> None:
        super().__init__(CallBudget(max_calls), limits, worker)
        self.target, self.files, self.description = target, files, description

    def bind(self, tool: Tool, arguments: Any) -> tuple[tuple[Any, ...], bool]:
        return (self.target, self.files, self.description, arguments.patch), not (arguments.patch or "").strip()
