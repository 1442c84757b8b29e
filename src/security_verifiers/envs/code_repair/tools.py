"""The tools a model may call during a code-repair episode (``mode="tools"``), on the budgeted-toolbox kit.

- ``run_tests``: apply a draft patch (or none) and run the program's functional probes, judged from outside as in
  scoring; it answers how many passed and, for each that failed (numbered), what the program did: the exception it
  raised with its own message (cut at 200 characters), that it hung or ended, or that its value differed. Never a
  test's code, inputs or expectation, and never the exploits: they are not run, and the judge's files are not on the
  program's filesystem view, so a draft that reads or raises whatever it can find reads nothing of them.
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


#: Characters of the program's own error message a failed test reports.
MESSAGE_CHARS = 200


def _what_happened(observation: dict[str, Any] | None) -> str:
    """A failed functional test, told from the program's side only: what it raised (its own message), that it hung or
    ended, or that its value was not the expected one. Never the test's inputs, expectation or code."""
    if observation is None:
        return "not run"
    if observation.get("hung"):
        return "the program did not answer in time"
    if "gone" in observation or "diverged" in observation:
        return "the program ended before answering"
    if "raised" in observation:
        if observation.get("program"):
            return f"the program raised {observation['raised']}: {str(observation.get('message', ''))[:MESSAGE_CHARS]}"
        return "the test could not use what the program returned"
    if "setup_failed" in observation:
        return "the program could not be set up (see setup_error)"
    return "the program returned a different value than the intended behaviour gives"


def _run_tests(_state: None, target: dict[str, Any], files: dict[str, str], description: str,
               patch: str | None) -> dict[str, Any]:
    from security_verifiers.envs.code_repair.execution import execute
    from security_verifiers.envs.code_repair.items import is_program, program_of

    if not is_program(target):
        return {"error": "this item is an imported record: it has no tests to run"}
    patched = _patched(files, patch)
    if "error" in patched:
        return patched
    full = program_of({"files": files, "description": description}, target)
    functional = full.functional()
    run = execute(full, patched, phases=("serve",), only="functional")  # type: ignore[arg-type]
    failed = []
    for number, probe in enumerate(functional, start=1):
        runs = run.serve.get(probe.id)
        observation = runs[0].observation if runs else None
        if observation is not None and "value" in observation and observation["value"] == probe.expect:
            continue
        failed.append({"test": number, "what": _what_happened(observation)})
    out: dict[str, Any] = {"tests": len(functional), "passed": len(functional) - len(failed), "failed": failed}
    setup = run.setup_error
    if setup is not None:
        out["setup_error"] = (f"{setup.get('raised')}: {str(setup.get('message', ''))[:MESSAGE_CHARS]}"
                              if setup.get("program") else "the program could not be imported or set up")
    return out


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
