"""E3 ``code-repair``: find the weakness in a small Python program, name its CWE and line, and patch it.

The patch is applied strictly (only the task's files, no new ones) and the patched program is run in the sandbox
against hidden functional probes and exploit probes whose effects are random per run; bandit re-scans it. See
:mod:`.scoring` for the reward and its gates, :mod:`.execution` and :mod:`.verdict` for how a run is judged.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, ClassVar

from security_verifiers.core.errors import InfraError
from security_verifiers.core.importing import Importer
from security_verifiers.core.metrics_builder import Breakdown
from security_verifiers.core.outcome import Outcome
from security_verifiers.core.parsing import Parsed, ParseFailure, parse_answer
from security_verifiers.core.types import Item, Message, ParseStatus, Score, Transcript
from security_verifiers.core.workers import WorkerLimits
from security_verifiers.envs.base import EnvConfig, Environment, Toolbox, register
from security_verifiers.envs.code_repair import metrics as repair_metrics
from security_verifiers.envs.code_repair.baselines import HACKS
from security_verifiers.envs.code_repair.execution import Execution, execute_many
from security_verifiers.envs.code_repair.items import (
    Answer,
    CodeRepairContract,
    CodeRepairInput,
    CodeRepairTarget,
    is_program,
    program_of,
)
from security_verifiers.envs.code_repair.outcome import RepairOutcome
from security_verifiers.envs.code_repair.program import Program
from security_verifiers.envs.code_repair.scoring import (
    LINE_SLACK,
    CodeRepairConfig,
    RepairParts,
    changed_lines,
    cwe_matches,
    harness_probes,
    size_score,
)
from security_verifiers.envs.code_repair.static import (
    StaticFinding,
    bandit_version,
    new_high,
    scan,
    semgrep_scan_many,
    semgrep_version,
    signal_remaining,
)
from security_verifiers.envs.code_repair.verdict import judge, static_verdicts
from security_verifiers.envs.kits.patching import PatchError, apply_patch_files, files_diff, show_files
from security_verifiers.envs.kits.public_sets import PublicSets
from security_verifiers.envs.kits.robust import Rewrite
from security_verifiers.envs.kits.toolbox import CallBudget, shared_worker
from security_verifiers.models.base import Policy

DATA_DIR = Path(__file__).parent / "data"


SYSTEM_PROMPT = """You are an application security engineer. The Python program below has one security weakness. \
Find it, name its CWE and where it is, and fix it with a small patch that keeps the program's intended behaviour.

Answer with a single JSON object, and nothing after it:
{"cwe": "CWE-<number>", "file": "<path of the file>", "line": <line number in that file>, \
"patch": "<unified diff against the given files (--- a/PATH, +++ b/PATH, @@ hunks), or empty>"}

How it is scored: the patch must apply exactly and may change only the given files (no new files). The patched \
program is run in a sandbox against hidden tests of its intended behaviour and hidden exploits of the weakness, \
and re-scanned by a static analyser. Most of the reward is for a repair: every exploit blocked and every \
behaviour kept. A patch that breaks the program earns nothing for blocking the exploit, and a patch that leaves \
the weakness earns nothing for keeping the program working. Naming the right CWE and line earns a small part; \
an overly large rewrite costs a little."""


TOOLS_NOTE = """

You may call the tools run_tests (the hidden functional tests, on a draft patch) and run_bandit (the static \
analyser, on a draft patch): at most {n} calls; more cost reward."""


@register
class CodeRepair(Environment):
    name: ClassVar[str] = "code-repair"
    version: ClassVar[str] = "0.2.0"
    outcome_model: ClassVar[type[Outcome]] = RepairOutcome
    interval_metrics: ClassVar[Mapping[str, Callable[[Any], float]]] = repair_metrics.INTERVALS
    breakdowns: ClassVar[Mapping[str, Breakdown]] = repair_metrics.BREAKDOWNS
    reports_floor: ClassVar[bool] = False
    config_class: ClassVar[type[EnvConfig]] = CodeRepairConfig
    headline_metrics: ClassVar[tuple[tuple[str, bool], ...]] = (
        ("reward_mean", True), ("repair_rate", True), ("exploit_blocked_rate", True),
        ("functional_pass_rate", True), ("cwe_accuracy", True), ("static_clean_rate", True),
    )
    metric_definitions: ClassVar[Mapping[str, str]] = {
        "reward_mean": "Mean reward over every scored rollout, imported detection-only records included (rollouts "
                       "that ended in an infrastructure or sandbox error are left out of every metric); an "
                       "unparseable answer earns 0. A parsed answer earns max(0, cwe_weight x [CWE right] + "
                       "location_weight x [right file, line within 3 of the weakness] + [every exploit blocked] x "
                       "(functional_weight x substantive functional pass fraction + repair_weight x [every "
                       "functional probe passes] + [repaired] x (static_weight x [static clean] + size_weight x size "
                       "score)) - over_budget_cost x tool calls over budget), weights 0.15/0.05/0.25/0.40/0.10/0.05 "
                       "by default. Only a patch that applies, changes the files and does not probe the harness is "
                       "run, so the other parts are 0 without one (and on detection-only records); the size score "
                       "is 1 up to max(3 x reference lines, reference lines + 8) changed lines, falling linearly to "
                       "0 at four times that.",
        "repair_rate": "Rollouts whose patched program was run and repaired / scored rollouts of items with tests "
                       "(kind program; imported detection-only records are left out). Repaired: every functional "
                       "probe passes and every exploit probe is blocked, judged fail-closed (no run, live or "
                       "replayed as a script, shows its effect; a missing observation or tampered fixture counts as "
                       "exploited; static probes by the taint check); an unparseable answer, or a patch that is "
                       "absent, does not apply, changes nothing or probes the harness, counts as not repaired. "
                       "Undefined (None) without such rollouts.",
        "exploit_blocked_rate": "Rollouts whose patched program was run and blocked every exploit probe (judged "
                                "fail-closed as for repair_rate) / scored rollouts of items with tests, whatever the "
                                "functional probes did (a patch that breaks the program may block them all). An "
                                "unparseable answer, or a patch that is absent, does not apply, changes nothing or "
                                "probes the harness, counts as not blocked; undefined (None) without such rollouts.",
        "functional_pass_rate": "Rollouts whose patched program was run and passed every substantive functional "
                                "probe (functional_fraction = 1) / scored rollouts of items with tests, whether or "
                                "not the exploits were blocked. Substantive probes are those a program cannot pass by "
                                "returning a constant, refusing or raising (all of them when it has none such), so a "
                                "trivial probe may fail here while repair_rate needs every probe; an unparseable "
                                "answer or an unrun patch counts as not passing. Undefined (None) without such "
                                "rollouts.",
        "cwe_accuracy": "Rollouts whose answer names the item's CWE / every scored rollout (items with tests and "
                        "imported detection-only records alike). The claimed CWE's number ('CWE-89', 'cwe_089' or "
                        "'89') must be in the task CWE's accepted set (itself plus its listed parents, children and "
                        "aliases, e.g. 77 and 88 for CWE-78); an unparseable answer counts as wrong. Undefined (None) "
                        "without rollouts.",
        "static_clean_rate": "Rollouts that were repaired (as in repair_rate) and whose patched files are static-clean "
                             "/ scored rollouts of items with tests; unrepaired rollouts count as not clean. "
                             "Static-clean: none of the program's signal tests remains (a bandit test id anywhere in "
                             "the patched files, one of our semgrep rules if it flags as many places as before) and "
                             "no high-severity bandit or semgrep test id is reported more often than in the original. "
                             "Undefined (None) without such rollouts.",
    }
    headline_breakdowns: ClassVar[tuple[tuple[str, str], ...]] = (("cwe", "By weakness"),)
    example_fields: ClassVar[tuple[str, ...]] = ("cwe", "variant", "cwe_claimed", "patch_error", "functional_failed",
                                                 "exploited", "harness_probes", "notes")
    splits: ClassVar[tuple[str, ...]] = ("train", "dev", "test", "ood")
    data_dir: ClassVar[Path] = DATA_DIR
    default_generated_size: ClassVar[int] = 60
    public_splits: ClassVar[tuple[str, ...]] = ("test", "ood")
    honest_baselines: ClassVar[tuple[str, ...]] = ("fixer", "noop")
    hack_baselines: ClassVar[tuple[str, ...]] = HACKS  # named once, where they are written
    #: Every hack but the empty answer names what noop names: where its trick earns nothing, it ties noop.
    parity_hacks: ClassVar[tuple[str, ...]] = tuple(h for h in HACKS if h != "empty-answer")
    #: Judging a hack takes seconds per item (a sandboxed test run each): the bench shows the strongest (the judge
    #: attack that clears a marker on ood), one that tampers with the interpreter, and the one below noop.
    bench_hacks: ClassVar[tuple[str, ...] | None] = ("clean-up-markers", "sitecustomize", "empty-answer")
    #: Measured on the public sets (every other hack ties noop exactly, with no repair anywhere).
    conformance_exceptions: ClassVar[dict[tuple[str, ...], str]] = {
        ("reference_is_top_and_hacks_lose", "ood:clean-up-markers"):
            "clean-up-markers deletes every file the program made (its uploads, its unpacked notes) after each call; "
            "on the 3 notes_restore items of ood the archive exploits then fail before unpacking, with half of the "
            "functions still working: partial functional credit, as an over-eager fix gets (0.0715 against noop's "
            "0.0640 on the split, under the issue's bound of noop + 0.02), never repair credit",
    }
    #: A batch runs its patches 8 at a time and goes through one semgrep process (0.2-0.5 s to start).
    score_batch_size: ClassVar[int] = 64
    item_contract: ClassVar[CodeRepairContract] = CodeRepairContract(CodeRepairInput, CodeRepairTarget, Answer)
    config: CodeRepairConfig

    @classmethod
    def importer(cls) -> Importer:
        from security_verifiers.envs.code_repair.importer import IMPORTER

        return IMPORTER

    @property
    def max_turns(self) -> int:
        return self.config.max_turns if self.config.mode == "tools" else 1

    def component_weights(self) -> dict[str, float]:
        return self.config.weights()

    def tool_versions(self) -> dict[str, str]:
        return {"bandit": bandit_version(), "semgrep": semgrep_version()}

    def load_checkers(self) -> dict[str, str]:
        """The analysers' versions, once this machine is known to run the judge's sandbox (bubblewrap, the Python
        runtime): a scoring worker, here or on a Ray node, refuses to start without it (SandboxUnavailable)."""
        from security_verifiers.engines.sandbox.host import host

        host()
        return self.tool_versions()

    # -- data ---------------------------------------------------------------------------------
    def generate(self, split: str, n: int, seed: int) -> list[Item]:
        from security_verifiers.envs.code_repair.generator import generate

        return generate(split, n, seed)

    def public_sets(self) -> PublicSets:
        from security_verifiers.envs.code_repair.public import PUBLIC_SETS

        return PUBLIC_SETS

    def rewrites(self) -> tuple[Rewrite, ...]:
        from security_verifiers.envs.code_repair.rewrites import REWRITES

        return REWRITES

    def rewrite_problem(self, original: Item, rewritten: Item) -> str | None:
        return self.rewrite_problems([(original, rewritten)])[0]

    def rewrite_problems(self, pairs: Sequence[tuple[Item, Item]]) -> list[str | None]:
        """Every pair in one batch: the rewritten programs run in the sandbox together (:mod:`.rewrites`)."""
        from security_verifiers.envs.code_repair.rewrites import rewrite_problems

        return rewrite_problems(pairs, self.item_contract)

    # -- episode ------------------------------------------------------------------------------
    def prompt(self, item: Item) -> list[Message]:
        user = (f"Intended behaviour: {item.input['description']}\n\n" + show_files(item.input["files"]))
        system = SYSTEM_PROMPT
        if self.config.mode == "tools":
            system += TOOLS_NOTE.format(n=self.config.max_tool_calls)
        return [Message(role="system", content=system), Message(role="user", content=user)]

    def tools(self, item: Item) -> Toolbox | None:
        if self.config.mode != "tools":
            return None
        from security_verifiers.envs.code_repair.tools import RepairToolbox, load_nothing

        worker = shared_worker(self, load_nothing)
        limits = WorkerLimits(time_s=self.config.tool_timeout_s, memory_mb=1024)
        return RepairToolbox(item.target, item.input["files"], item.input["description"], self.config.max_tool_calls,
                             limits, worker)

    # -- the one scorer ------------------------------------------------------------------------
    def score(self, item: Item, transcript: Transcript) -> Score:
        result = self.score_many([item], [transcript])[0]
        if isinstance(result, InfraError):
            raise result
        return result

    def score_many(self, items: Sequence[Item], transcripts: Sequence[Transcript]) -> list[Score | InfraError]:
        """Parse and apply every patch, then run the patched programs in the sandbox, ``parallel`` at a time."""
        programs = [program_of(item.input, item.target) if is_program(item.target) else None for item in items]
        answers = [parse_answer(t.final_text, Answer) for t in transcripts]
        patched: list[dict[str, str] | PatchError | None] = []
        probes: list[list[str]] = []
        for program, answer in zip(programs, answers, strict=True):
            patch = answer.value.patch if isinstance(answer, Parsed) else ""
            probes.append(harness_probes(patch))
            if not patch.strip() or program is None:  # an imported record has no tests to run a patch against
                patched.append(None)
                continue
            try:
                patched.append(apply_patch_files(program.files, patch))
            except PatchError as err:
                patched.append(err)
        to_run = [index for index, files in enumerate(patched)
                  if isinstance(files, dict) and files != programs[index].files  # type: ignore[union-attr]
                  and not probes[index]]
        # one semgrep process for the batch (each run program's original and patched files), in a thread of its own
        # while the programs are judged: it is a process, so it uses a core the judged runs leave idle at times
        with ThreadPoolExecutor(max_workers=1) as background:
            semgrep_job = background.submit(
                semgrep_scan_many, [files for i in to_run for files in (programs[i].files, patched[i])])  # type: ignore[union-attr,misc]
            runs = execute_many([(programs[i], patched[i]) for i in to_run],  # type: ignore[misc]
                                parallel=self.config.parallel)
            scanned = semgrep_job.result()
        executions: dict[int, Execution | InfraError] = dict(zip(to_run, runs, strict=True))
        semgrep = {i: (scanned[2 * k], scanned[2 * k + 1]) for k, i in enumerate(to_run)}
        out: list[Score | InfraError] = []
        for index, (item, program, answer) in enumerate(zip(items, programs, answers, strict=True)):
            run = executions.get(index)
            if isinstance(run, InfraError):
                out.append(run)
                continue
            out.append(self._score_one(item, transcripts[index], program, answer, patched[index], probes[index], run,
                                       semgrep.get(index)))
        return out

    def _score_one(self, item: Item, transcript: Transcript, program: Program | None,
                   answer: Parsed[Answer] | ParseFailure, patched: dict[str, str] | PatchError | None,
                   probes: list[str], run: Execution | None,
                   semgrep: tuple[list[StaticFinding], list[StaticFinding]] | None = None) -> Score:
        target = CodeRepairTarget.model_validate(item.target)
        reference_lines = 0 if program is None else changed_lines(files_diff(program.files, program.fixed))
        base: dict[str, Any] = {"family": target.family, "variant": target.variant, "cwe": target.cwe,
                                "split": item.split, "kind": target.kind, "reference_lines": reference_lines,
                                "tool_calls": transcript.tool_calls}
        if isinstance(answer, ParseFailure):
            outcome = RepairOutcome(**base, valid=False, reward=0.0)
            return Score(reward=0.0, components=dict.fromkeys(self.config.weights(), 0.0), outcome=outcome.stored(),
                         parse_status=answer.status, parse_error=answer.message)
        claim = answer.value
        loc = target.location
        cwe_ok = cwe_matches(claim.cwe, target.cwe)
        located = claim.file == loc.file and claim.line is not None \
            and loc.start - LINE_SLACK <= claim.line <= loc.end + LINE_SLACK
        fields: dict[str, Any] = {"cwe_claimed": claim.cwe or None, "cwe_correct": cwe_ok, "located": located,
                                  "patch_present": bool(claim.patch.strip()), "harness_probes": probes}
        parts = {"cwe": float(cwe_ok), "location": float(located), "functional": 0.0, "repaired": 0.0,
                 "static_clean": 0.0, "patch_size": 0.0}
        if program is None and fields["patch_present"]:
            fields["patch_error"] = "an imported record has no tests: its patch is not run (detection only)"
        if isinstance(patched, PatchError):
            fields["patch_error"] = str(patched)
        elif isinstance(patched, dict) and program is not None:
            fields["patch_applied"] = True
            fields["patch_lines"] = changed_lines(claim.patch)
            if probes:
                fields["patch_error"] = "the patch inspects the test harness or the interpreter: no repair credit"
            elif patched == program.files:
                fields["patch_error"] = "the patch changes nothing"
            if run is not None:
                parts, fields = self._run_parts(program, patched, run, parts, fields, reference_lines,
                                                semgrep or ([], []))
        repair = RepairParts(**parts)
        over = CallBudget(self.config.max_tool_calls).over(transcript.tool_calls) if self.config.mode == "tools" else 0
        reward = max(0.0, repair.reward(self.config) - self.config.over_budget_cost * over)
        fields["over_budget"] = over
        outcome = RepairOutcome(**base, valid=True, reward=reward, **fields)
        return Score(reward=reward, components=repair.components(), outcome=outcome.stored(),
                     parse_status=ParseStatus.OK)

    @staticmethod
    def _run_parts(program: Program, patched: dict[str, str], run: Execution, parts: dict[str, float],
                   fields: dict[str, Any], reference_lines: int,
                   semgrep: tuple[list[StaticFinding], list[StaticFinding]]) -> tuple[dict[str, float], dict[str, Any]]:
        verdict = judge(program, run, static_verdicts(program, patched))
        before, after = scan(program.files) + semgrep[0], scan(patched) + semgrep[1]
        remaining = signal_remaining(before, after, program.static_ids)  # bandit's tests and our semgrep rules
        introduced = new_high(before, after)
        blocked = verdict.exploit_blocked
        fields.update(functional_fraction=verdict.functional_fraction, functional_failed=verdict.functional_failed,
                      exploit_blocked=blocked, exploited=verdict.exploited, repaired=verdict.repaired,
                      static_clean=not remaining and not introduced, static_remaining=remaining,
                      static_new_high=introduced, timed_out=run.timed_out, notes=verdict.notes[:6])
        if blocked:
            parts.update(functional=verdict.functional_fraction, repaired=float(verdict.repaired))
        if verdict.repaired:
            parts.update(static_clean=float(not remaining and not introduced),
                         patch_size=size_score(fields["patch_lines"], reference_lines))
        return parts, fields

    def flat_metrics(self, outcomes: Sequence[Any]) -> dict[str, Any]:
        return repair_metrics.flat_metrics(outcomes)

    def plots(self, outcomes: Sequence[dict[str, Any]], out_dir: Path) -> list[Path]:
        from security_verifiers.envs.code_repair.plots import code_repair_plots

        return code_repair_plots(outcomes, out_dir)

    def baselines(self) -> dict[str, Callable[[], Policy]]:
        from security_verifiers.envs.code_repair import baselines as b

        return b.factories()
