"""The generator's self-check: every task must be a real task before it is written.

For each program: the vulnerable version passes its functional probes and every exploit works; the reference
fix passes the functional probes and blocks every exploit; bandit flags the weakness at its location (where
the family names a bandit test that knows it) and no longer flags it once fixed. The degenerate versions
(:mod:`.degenerate`: every function emptied, or raising what the tests catch) are run too: the functional probes
any of them passes are the program's ``trivial`` ones, which earn no partial credit, so disabling the program
earns none; a program where every probe is trivial measures nothing and fails the check. A program that fails any of
these is a bug in its family, reported with the probes' notes, never shipped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from security_verifiers.core.errors import InfraError
from security_verifiers.envs.code_repair.degenerate import versions
from security_verifiers.envs.code_repair.execution import execute_many
from security_verifiers.envs.code_repair.program import Program
from security_verifiers.envs.code_repair.scoring import cwe_matches
from security_verifiers.envs.code_repair.static import (
    StaticFinding,
    flagged,
    scan,
    semgrep_scan_many,
    semgrep_signal,
    signal_remaining,
)
from security_verifiers.envs.code_repair.verdict import judge, static_verdicts, substantive

#: Lines around the stated location within which the analyser's finding must fall.
LOCATION_SLACK = 2


@dataclass
class CheckResult:
    problems: list[str] = field(default_factory=list)
    #: Functional probes a degenerate version passed: stored as the program's ``trivial`` (no partial credit).
    trivial: set[str] = field(default_factory=set)
    #: The semgrep rules that signal this program's weakness: added to its ``static_ids``.
    semgrep_rules: list[str] = field(default_factory=list)
    vulnerable_wall_s: float = 0.0
    fixed_wall_s: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.problems


def semgrep_rules_for(program: Program, original: list[StaticFinding], fixed: list[StaticFinding]) -> list[str]:
    """The semgrep rules that are a program's static signal: of its CWE, flagging the weakness's location in the
    original, and flagging fewer places in the reference fix (a rule that cannot see the fix, say a value escaped on
    the line before an f-string, is no signal for that program)."""
    loc = program.location
    rules = semgrep_signal(original, lambda cwe: cwe_matches(cwe, program.cwe), loc.file, loc.start, loc.end)
    still = set(signal_remaining(original, fixed, [], rules))
    return [rule for rule in rules if rule not in still]


def _static_problems(program: Program) -> list[str]:
    """bandit flags the weakness at its location and not in the fix (for the bandit tests the family names)."""
    bandit_ids = [test for test in program.static_ids if test.startswith("B")]
    if not bandit_ids:
        return []
    problems = []
    loc = program.location
    hits = [f for f in flagged(scan(program.files), bandit_ids) if f.file == loc.file
            and loc.start - LOCATION_SLACK <= f.line <= loc.end + LOCATION_SLACK]
    if not hits:
        problems.append(f"bandit does not flag {bandit_ids} at {loc.file}:{loc.start}")
    still = flagged(scan(program.fixed), bandit_ids)
    if still:
        problems.append(f"bandit still flags the fix: {[(f.test_id, f.file, f.line) for f in still]}")
    return problems


def self_check(programs: Sequence[Program], parallel: int = 8) -> list[CheckResult]:
    """Check every program: its two versions (live and replayed as scripts) and its degenerate ones (live, functional
    probes only) run in the judged sandbox, ``parallel`` at a time."""
    jobs: list[tuple[Program, dict[str, str]]] = []
    degenerate_jobs: list[tuple[Program, dict[str, str]]] = []
    labels: list[list[str]] = []
    for p in programs:
        degenerate = versions(p)
        jobs += [(p, p.files), (p, p.fixed)]
        degenerate_jobs += [(p, files) for _, files in degenerate]
        labels.append([label for label, _ in degenerate])
    runs = iter(execute_many(jobs, parallel=parallel))
    degenerate_runs_all = iter(execute_many(degenerate_jobs, parallel=parallel, phases=("serve",), only="functional"))
    scanned = semgrep_scan_many([files for p in programs for files in (p.files, p.fixed)])
    results = []
    for index, (program, degenerate_labels) in enumerate(zip(programs, labels, strict=True)):
        vulnerable_run, fixed_run = next(runs), next(runs)
        degenerate_runs = [next(degenerate_runs_all) for _ in degenerate_labels]
        for run in (vulnerable_run, fixed_run, *degenerate_runs):
            if isinstance(run, InfraError):  # the sandbox, not the program: nothing was checked
                raise run
        vulnerable = judge(program, vulnerable_run, static_verdicts(program, program.files))  # type: ignore[arg-type]
        fixed = judge(program, fixed_run, static_verdicts(program, program.fixed))  # type: ignore[arg-type]
        result = CheckResult(vulnerable_wall_s=vulnerable_run.wall_s, fixed_wall_s=fixed_run.wall_s)  # type: ignore[union-attr]
        if not vulnerable.functional_ok:
            result.problems.append(f"vulnerable version fails functional probes {vulnerable.functional_failed}: "
                                   f"{vulnerable.notes}")
        if vulnerable.blocked:
            result.problems.append(f"vulnerable version is not exploited by {vulnerable.blocked}")
        if not fixed.functional_ok:
            result.problems.append(f"reference fix fails functional probes {fixed.functional_failed}: {fixed.notes}")
        if fixed.exploited:
            result.problems.append(f"reference fix is still exploited by {fixed.exploited}: {fixed.notes}")
        result.problems += _static_problems(program)
        result.semgrep_rules = semgrep_rules_for(program, scanned[2 * index], scanned[2 * index + 1])
        for run in degenerate_runs:
            earned = judge(program.model_copy(update={"probes": program.functional()}), run)  # type: ignore[arg-type]
            result.trivial.update(p for p in earned.substantive if p in earned.functional_passed)
        if set(result.trivial) >= set(substantive(program)):
            result.problems.append(f"every substantive functional probe passes in a degenerate version "
                                   f"({', '.join(degenerate_labels)}): nothing measures kept behaviour")
        results.append(result)
    return results
