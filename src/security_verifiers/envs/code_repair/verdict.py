"""The host's verdict on one run: which functional probes passed and whether any exploit still works.

Fail-closed everywhere: a functional probe passes only with an observation equal to its expectation; an
exploit probe is *blocked* only with an observation that shows no effect (a missing one means the run ended
before it: exploited). The canary is compared case-insensitively in the observation's JSON text, so an
observation that re-cases or escapes nothing still shows it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from security_verifiers.envs.code_repair.execution import Execution
from security_verifiers.envs.code_repair.program import Probe, Program


@dataclass(frozen=True)
class Verdict:
    functional_passed: list[str]
    functional_failed: list[str]
    exploited: list[str]
    blocked: list[str]
    notes: list[str] = field(default_factory=list)

    @property
    def functional_fraction(self) -> float:
        total = len(self.functional_passed) + len(self.functional_failed)
        return len(self.functional_passed) / total if total else 0.0

    @property
    def functional_ok(self) -> bool:
        return not self.functional_failed

    @property
    def exploit_blocked(self) -> bool:
        return not self.exploited

    @property
    def repaired(self) -> bool:
        return self.functional_ok and self.exploit_blocked


def _exploited(probe: Probe, observation: dict[str, Any] | None, execution: Execution) -> bool:
    detect = probe.detect
    assert detect is not None
    if detect.kind == "marker":
        return execution.marker_created or observation is None
    if observation is None:
        return True
    if detect.kind == "hang":
        return bool(observation.get("hung"))
    if detect.kind == "equals":
        return "value" in observation and observation["value"] == detect.value
    assert detect.text is not None
    needle = detect.text.replace("{canary}", execution.canary).lower()
    return needle in json.dumps(observation, ensure_ascii=False).lower()


def judge(program: Program, execution: Execution) -> Verdict:
    """Compare what one run observed with what ``program`` expects."""
    passed, failed, exploited, blocked, notes = [], [], [], [], []
    for probe in program.probes:
        observation = execution.observations.get(probe.id)
        if probe.kind == "functional":
            ok = observation is not None and "value" in observation and observation["value"] == probe.expect
            (passed if ok else failed).append(probe.id)
            if observation is None:
                notes.append(f"{probe.id}: no observation")
            elif not ok:
                got = observation.get("value", observation)
                notes.append(f"{probe.id}: expected {json.dumps(probe.expect)[:120]}, got {json.dumps(got)[:120]}")
        else:
            (exploited if _exploited(probe, observation, execution) else blocked).append(probe.id)
    if execution.import_error:
        notes.insert(0, f"import failed: {execution.import_error}")
    if execution.timed_out:
        notes.insert(0, f"timed out after {program.timeout_s:g} s")
    return Verdict(passed, failed, exploited, blocked, notes)
