"""The host's verdict on one run: which functional probes passed and whether any exploit still works.

Fail-closed everywhere: a functional probe passes only with an observation equal to its expectation; an
exploit probe is *blocked* only with an observation that shows no effect (a missing one means the run ended
before it: exploited). The canary is compared case-insensitively in the observation's JSON text, so an
observation that re-cases or escapes nothing still shows it.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from typing import Any

from security_verifiers.envs.code_repair.execution import Execution
from security_verifiers.envs.code_repair.program import Probe, Program

#: Observations a program gets without doing its job: returning a constant, or refusing.
_CHEAP = (None, True, False, 0, "", [], {})


def _refusals(tests: str) -> dict[str, list[object]]:
    """Per probe function of the test module, the constants in what it returns from an ``except`` clause (what a
    program that raises everywhere gets: ``"refused"``, or ``["refused", len(LOG)]``)."""
    out: dict[str, list[object]] = {}
    try:
        tree = ast.parse(tests)
    except SyntaxError:
        return out
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("probe_"):
            values = out.setdefault(node.name[len("probe_"):], [])
            for handler in (n for n in ast.walk(node) if isinstance(n, ast.ExceptHandler)):
                for ret in (n for n in ast.walk(handler) if isinstance(n, ast.Return) and n.value is not None):
                    values += [c.value for c in ast.walk(ret.value) if isinstance(c, ast.Constant)
                               and isinstance(c.value, str) and len(c.value) >= 2]
    return out


def _scalars(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _scalars(v)]
    if isinstance(value, list):
        return [s for v in value for s in _scalars(v)]
    return [value]


def substantive(program: Program) -> list[str]:
    """The functional probes that measure kept behaviour: those a program cannot pass by returning a constant
    (an expectation made only of None, booleans, 0, empty strings, lists or dicts), by refusing (a value the probe
    returns when the call raises), by raising at all (an exception's name), or in any way a degenerate version of
    it was seen to (``program.trivial``, found by the self-check). Partial functional credit counts only these, so that
    emptying or disabling the program earns none; a full repair still needs every probe. When a program has no
    such probe, all of its functional probes count."""
    refusals = _refusals(program.tests)
    out = []
    for probe in program.functional():
        expect = probe.expect
        scalars = _scalars(expect)
        cheap = all(any(type(x) is type(c) and x == c for c in _CHEAP) for x in scalars) \
            or probe.id in program.trivial
        refused = any(isinstance(x, str) and x in refusals.get(probe.id, []) for x in scalars)
        named = any(isinstance(x, str) and x.endswith(("Error", "Exception", "Exit")) for x in scalars)
        if not (cheap or refused or named):
            out.append(probe.id)
    return out or [p.id for p in program.functional()]


@dataclass(frozen=True)
class Verdict:
    functional_passed: list[str]
    functional_failed: list[str]
    exploited: list[str]
    blocked: list[str]
    notes: list[str] = field(default_factory=list)
    substantive: list[str] = field(default_factory=list)

    @property
    def functional_fraction(self) -> float:
        """The share of the substantive functional probes that passed (see :func:`substantive`)."""
        counted = self.substantive or self.functional_passed + self.functional_failed
        passed = sum(1 for p in counted if p in self.functional_passed)
        return passed / len(counted) if counted else 0.0

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
    if execution.tampered:  # the test's own secret was moved out of the exploit's way: nothing was shown blocked
        return True
    if detect.kind == "marker":
        return probe.id in execution.markers_created or observation is None
    if observation is None:
        return True
    if detect.kind == "hang":
        return bool(observation.get("hung"))
    if detect.kind == "equals":
        return "value" in observation and observation["value"] == detect.value
    assert detect.text is not None
    needle = detect.text.replace("{canary}", execution.canary).lower()
    return needle in json.dumps(observation, ensure_ascii=False).lower() \
        or any(needle in text.lower() for text in _strings(observation))


def _strings(value: Any) -> list[str]:
    """Every string in an observation, keys included (a needle with a quote is escaped in its JSON text)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


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
    if execution.tampered:
        notes.insert(0, f"the program changed the test's canary fixtures {execution.tampered}: every exploit counts")
    if execution.timed_out:
        notes.insert(0, f"timed out after {program.timeout_s:g} s")
    return Verdict(passed, failed, exploited, blocked, notes, substantive(program))
