"""The host's verdict on one judged run: which functional probes passed and whether any exploit still works.

Fail-closed everywhere: a functional probe passes only when its live observation equals its expectation; an exploit
probe is *blocked* only when every run the judge made of it (live, and replayed as a plain script) shows no effect.
A missing observation (the program hung, died, or answered the script differently than the live caller) counts as
exploited, and so does a run in which the program changed the fixtures holding the canary. The canary is found by
value in every form an observation can carry it (as it is in any case, hex, base64 at any alignment, URL-encoded).
"""

from __future__ import annotations

import ast
import base64
import json
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

from security_verifiers.envs.code_repair.execution import Execution, ProbeRun
from security_verifiers.envs.code_repair.program import Probe, Program

#: Observations a program gets without doing its job: returning a constant, or refusing.
_CHEAP: tuple[object, ...] = (None, True, False, 0, "", [], {})


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


def canary_forms(canary: str) -> tuple[list[str], list[str]]:
    """The texts that show ``canary``: (case-insensitive ones, lower-cased; case-sensitive ones). Base64 is taken at
    each of its three alignments, without the symbols that depend on the neighbouring bytes."""
    raw = canary.encode()
    folded = [canary.lower(), raw.hex(), urllib.parse.quote(canary).lower()]
    exact = []
    for pad in range(3):
        for encoder in (base64.b64encode, base64.urlsafe_b64encode):
            text = encoder(b"\0" * pad + raw).decode().rstrip("=")
            start = (4 * pad + 2) // 3  # the symbols that hold only padding bits are dropped...
            end = len(text) - (1 if (pad + len(raw)) % 3 else 0)  # ...and a last symbol shared with what follows
            if end - start >= 8:
                exact.append(text[start:end])
    return folded, exact


def shows_canary(observation: Any, canary: str) -> bool:
    """Whether an observation holds ``canary`` in any of its forms (strings inside it and its JSON text)."""
    texts = [json.dumps(observation, ensure_ascii=False), json.dumps(observation), *_strings(observation)]
    folded, exact = canary_forms(canary)
    return any(form in text.lower() for text in texts for form in folded) or \
        any(form in text for text in texts for form in exact)


def _tokens(value: Any) -> list[str]:
    return [s for s in _strings(value) if s] if not isinstance(value, (int, float)) else [str(value)]


def _entropy_exploited(runs: list[ProbeRun]) -> bool:
    """A fresh-entropy probe's three runs: the same bytes must give the same tokens, other bytes other tokens."""
    if len(runs) != 3 or any("value" not in r.observation for r in runs):
        return True
    first, same, other = (r.observation["value"] for r in runs)
    tokens, again = _tokens(first), _tokens(other)
    if not tokens or first != same or len(again) != len(tokens):
        return True
    return any(a == b for a, b in zip(tokens, again, strict=True))


def _run_exploited(probe: Probe, run: ProbeRun, canary: str) -> bool:
    detect = probe.detect
    assert detect is not None
    observation, effects = run.observation, run.effects
    if effects.get("tampered"):
        return True
    nothing = {"setup_failed", "gone", "diverged", "truncated"} & set(observation) or \
        ("hung" in observation and detect.kind != "hang") or not {"value", "raised", "hung"} & set(observation)
    if nothing:
        return True  # the setup failed, the program was gone or hung, answered the two callers differently: no proof
    if detect.kind == "marker":
        return bool(effects.get("markers"))
    if detect.kind == "hang":
        return bool(observation.get("hung"))
    if detect.kind == "equals":
        return "value" in observation and observation["value"] == detect.value
    assert detect.text is not None and detect.kind == "contains"
    if effects.get("secrets_read"):  # the program opened a fixture holding the canary: it reached the secret
        return True
    if detect.text == "{canary}":
        return shows_canary(observation, canary)
    needle = detect.text.replace("{canary}", canary).lower()  # more than the canary (``<script>{canary}``)
    return needle in json.dumps(observation).lower() or any(needle in s.lower() for s in _strings(observation))


def exploited(probe: Probe, execution: Execution, has_world: bool = False) -> bool:
    """Whether any run of an exploit probe shows its effect (or shows nothing where something was due). Effects a
    program deferred count too: its marker created at any time of a phase, and, for a program with a world, a
    connection to an internal address after the last probe (whose probe cannot be told: every world exploit counts)."""
    live = execution.serve.get(probe.id)
    if not live:
        return True
    kind = probe.detect.kind if probe.detect is not None else None
    for late in execution.late:
        if kind == "marker" and probe.id in late.get("markers", []):
            return True
        if has_world and kind == "equals" and late.get("internal"):
            return True
    phases = [live, *([execution.script[probe.id]] if probe.id in execution.script else [])]
    if probe.detect is not None and probe.detect.kind == "entropy":
        return any(_entropy_exploited(runs) for runs in phases) or \
            any(r.effects.get("tampered") for runs in phases for r in runs)
    return any(_run_exploited(probe, run, execution.canary) for runs in phases for run in runs)


def _strings(value: Any) -> list[str]:
    """Every string in an observation, keys included (a needle with a quote is escaped in its JSON text)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def static_verdicts(program: Program, files: dict[str, str]) -> dict[str, bool]:
    """Per static probe (a weakness no test can observe, see :mod:`.taint`), whether ``files`` still have it."""
    if not any(p.detect is not None and p.detect.kind == "static" for p in program.exploits()):
        return {}
    from security_verifiers.envs.code_repair.taint import static_exploited

    return static_exploited(program, files)


def judge(program: Program, execution: Execution, static_exploited: dict[str, bool] | None = None) -> Verdict:
    """Compare what one judged run observed with what ``program`` expects. ``static_exploited`` holds the verdicts of
    the static probes (:mod:`.taint`), which the judge does not run."""
    passed: list[str] = []
    failed: list[str] = []
    exploited_ids: list[str] = []
    blocked: list[str] = []
    notes: list[str] = []
    for probe in program.probes:
        runs = execution.serve.get(probe.id)
        observation = runs[0].observation if runs else None
        if probe.kind == "functional":
            ok = observation is not None and "value" in observation and observation["value"] == probe.expect
            (passed if ok else failed).append(probe.id)
            if observation is None:
                notes.append(f"{probe.id}: no observation")
            elif not ok:
                got = observation.get("value", observation)
                notes.append(f"{probe.id}: expected {json.dumps(probe.expect)[:120]}, got {json.dumps(got)[:120]}")
        elif probe.detect is not None and probe.detect.kind == "static":
            hit = True if static_exploited is None else static_exploited.get(probe.id, True)
            (exploited_ids if hit else blocked).append(probe.id)
        else:
            (exploited_ids if exploited(probe, execution, program.world is not None) else blocked).append(probe.id)
            script = execution.script.get(probe.id)
            if script and any(k in r.observation for r in script for k in ("diverged", "gone", "hung")) \
                    and probe.id in exploited_ids:
                first = next(r.observation for r in script if {"diverged", "gone", "hung"} & set(r.observation))
                notes.append(f"{probe.id}: replayed as a plain script: {json.dumps(first)[:160]}")
    if execution.import_error:
        notes.insert(0, f"setup failed: {execution.import_error}")
    tampered = sorted({p for runs in execution.serve.values() for r in runs for p in r.effects.get("tampered", [])})
    if tampered:
        notes.insert(0, f"the program changed the test's canary fixtures {tampered}: every exploit counts")
    return Verdict(passed, failed, exploited_ids, blocked, notes, substantive(program))
