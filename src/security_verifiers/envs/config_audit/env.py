"""E2 ``config-audit``: audit a Kubernetes manifest or a Terraform file, list violations, patch them.

Reward = ``detection_weight`` * severity-weighted F1 of the findings + ``patch_weight`` * the patch
score, minus a small cost per tool call over budget. Both parts are computed from the policy engines
(our Rego library, Checkov, semgrep) re-run on the original and on the patched file, in batches
(semgrep costs seconds per process, whatever the number of files).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from security_verifiers.core.errors import ErrorKind, InfraError
from security_verifiers.core.importing import Importer
from security_verifiers.core.metrics_builder import Breakdown, Statistic
from security_verifiers.core.metrics_report import ConstantPolicy
from security_verifiers.core.outcome import Outcome
from security_verifiers.core.parsing import Parsed, ParseFailure, parse_answer
from security_verifiers.core.types import Item, Message, ParseStatus, Score, Transcript
from security_verifiers.core.workers import WorkerLimits
from security_verifiers.engines.configs import ConfigParseError, inventory, resource_types
from security_verifiers.engines.findings import Finding, Severity, catalog, rules_for
from security_verifiers.envs.base import EnvConfig, Environment, ItemContract, Toolbox, register
from security_verifiers.envs.config_audit import metrics as audit_metrics
from security_verifiers.envs.config_audit.baselines import HACKS, context_of
from security_verifiers.envs.config_audit.items import ConfigAuditInput, ConfigAuditTarget
from security_verifiers.envs.config_audit.metrics import WORST_RULES_MIN_FINDINGS
from security_verifiers.envs.config_audit.outcome import AuditOutcome
from security_verifiers.envs.config_audit.scoring import (
    Detection,
    PatchOutcome,
    inventory_preserved,
    score_detection,
    score_fix,
)
from security_verifiers.envs.kits.patching import PatchError, apply_patch, show_file
from security_verifiers.envs.kits.public_sets import PublicSets
from security_verifiers.envs.kits.robust import Rewrite
from security_verifiers.envs.kits.toolbox import CallBudget, shared_worker
from security_verifiers.models.base import Policy

DATA_DIR = Path(__file__).parent / "data"


class ClaimedFinding(BaseModel):
    model_config = ConfigDict(extra="ignore")

    rule_id: str = Field(max_length=100)
    resource: str = Field(max_length=300)
    path: str | None = Field(None, max_length=300)


class Answer(BaseModel):
    """The answer grammar stated in the system prompt."""

    model_config = ConfigDict(extra="ignore")

    findings: list[ClaimedFinding] = Field(max_length=2000)
    patch: str = Field("", max_length=200_000)
    confidence: float | None = Field(None, ge=0.0, le=1.0, allow_inf_nan=False)


class ConfigAuditConfig(EnvConfig):
    mode: Literal["no_tools", "tools"] = Field("no_tools", description="Whether the model may call the scanners.")
    detection_weight: float = Field(0.5, ge=0, le=1, description="Weight of the detection part.")
    patch_weight: float = Field(0.5, ge=0, le=1, description="Weight of the patch part.")
    max_tool_calls: int = Field(6, ge=0, le=100, description="Tool calls allowed per episode.")
    tool_timeout_s: float = Field(20.0, gt=0, description="Seconds allowed per tool call.")
    over_budget_cost: float = Field(0.02, ge=0, le=1, description="Reward lost per tool call over budget.")
    max_turns: int = Field(8, ge=1, le=50, description="Assistant turns per episode in tools mode.")
    score_time_limit_s: float = Field(
        30.0, gt=0, description="Seconds allowed to score one rollout in a scoring worker (a typical item takes "
        "~20 ms, a patch at the size limit ~2 s); a patch past it is invalid, the findings still count.")
    memory_limit_mb: int = Field(
        2048, ge=256, description="Resident memory (MiB) of a scoring or tool worker process (~300 MB in use); a "
        "patch past it is invalid, a tool call past it answers an error.")

    @model_validator(mode="after")
    def _weights_sum_to_one(self) -> ConfigAuditConfig:
        if abs(self.detection_weight + self.patch_weight - 1.0) > 1e-9:
            raise ValueError("detection_weight + patch_weight must equal 1 so the reward stays in [0, 1]")
        return self


SYSTEM_PROMPT = """You are a cloud security engineer auditing one {platform_name} file against this rule catalog \
(id — title [severity]):

{catalog}

Resources are named {resource_style}. Report every violation of the catalog in the file, and fix them with a \
patch that keeps every resource (same kinds, names and namespaces, the same init and main containers with the same \
image repositories; you may change tags and digests, move an object out of the default namespace into one the file \
uses or declares, and add resources such as a NetworkPolicy or a companion Terraform resource, never remove or \
rename one).

Answer with a single JSON object, and nothing after it:
{{"findings": [{{"rule_id": "<catalog id>", "resource": "<resource>", "path": "<optional: container or \
attribute>"}}], "patch": "<unified diff against {filename} (--- a/{filename} +++ b/{filename}), or empty>", \
"confidence": <0..1>}}

Findings are scored by severity-weighted precision and recall: report only real violations (a file may have \
none; then answer with an empty list). The patch is applied and re-scanned: it earns the severity-weighted share \
of findings it fixes, loses what any new finding weighs, and earns nothing if it does not apply, does not parse \
or validate, or removes or renames a resource.{tools_note}"""

TOOLS_NOTE = """

You may call the tools scan_policies, scan_checkov and validate_schema (at most {n} calls; more cost reward)."""


@register
class ConfigAudit(Environment):
    name: ClassVar[str] = "config-audit"
    version: ClassVar[str] = "2.1.0"
    config_class: ClassVar[type[EnvConfig]] = ConfigAuditConfig
    headline_metrics: ClassVar[tuple[tuple[str, bool], ...]] = (
        ("reward_mean", True), ("f1_weighted", True), ("fix_rate", True), ("patch_valid_rate", True),
        ("false_positive_rate_clean", False), ("tool_calls_mean", False),
    )
    metric_definitions: ClassVar[Mapping[str, str]] = {
        "reward_mean": "Mean reward over every scored rollout (rollouts that ended in an infrastructure or scorer "
                       "error are left out of every metric); an unparseable answer earns 0. A parsed answer earns "
                       "max(0, detection_weight x detection + patch_weight x patch - over_budget_cost x tool calls "
                       "over budget), detection being the severity-weighted F1 of its deduplicated (rule id, "
                       "resource) claims (on a clean file 1 for no claim, else 0) and patch (fixed weight - weight "
                       "of new findings) / oracle weight clipped to [0, 1] (on a clean file 1 if it adds no "
                       "finding, else 0) for a patch that applies, validates and keeps every resource, 0 for any "
                       "other patch, and for no patch 1 on a clean file, 0 on one with findings.",
        "f1_weighted": "2 TP_w / (2 TP_w + FP_w + FN_w) with the weights summed over every scored rollout "
                       "(micro-averaged) on deduplicated (rule id, resource) pairs: a found or missed oracle finding "
                       "weighs its severity (low 1, medium 2, high 3, critical 5), a false claim its rule's catalog "
                       "severity (5 for an id outside the catalog). An unparseable answer claims nothing, so every "
                       "oracle finding of its item counts in FN_w; 0 when there were findings and none was found, "
                       "undefined (None) only when the run has no oracle finding and no claim.",
        "fix_rate": "Severity weight of the oracle findings fixed / severity weight of all oracle findings, both "
                    "summed over the scored rollouts of items with findings (clean items are left out). A finding is "
                    "fixed when it is gone from the re-scan of the patched file (Terraform: and, unless it is a "
                    "hard-coded secret, from its fail-closed variant), counted only for a patch that applies, "
                    "validates and keeps every resource; no patch, an invalid patch or an unparseable answer fixes "
                    "0, and new findings are not subtracted here (the reward's patch part subtracts them). "
                    "Undefined (None) when no item has findings.",
        "patch_valid_rate": "Patches that applied, validated and kept every resource / patches sent, over the scored "
                            "rollouts (clean items included) whose answer parsed and held a non-empty patch; answers "
                            "without a patch and unparseable ones are outside the denominator. Valid: the diff "
                            "applies, the patched file parses, the engines can judge it, it has no validation "
                            "problem its original lacked (Terraform: no new type issue), and every original resource "
                            "survives (same kind, name and namespace, same containers and image repositories; only a "
                            "move out of default allowed); a patch whose scoring ran past the scorer's limits counts "
                            "as invalid. Undefined (None) when no patch was sent.",
        "false_positive_rate_clean": "Rollouts on clean items (the oracle finds nothing in the file) whose answer "
                                     "parsed and claimed at least one finding / all scored rollouts on clean items. "
                                     "An unparseable answer on a clean item stays in the denominator but is not a "
                                     "false positive; undefined (None) when the run has no clean item. Lower is "
                                     "better.",
        "tool_calls_mean": "Mean number of tool calls per rollout over every scored rollout, counting every call the "
                           "model made, the refused calls over the budget included (each of those also costs "
                           "over_budget_cost of reward); always 0 in no_tools mode. Undefined (None) without "
                           "rollouts. Lower is better.",
    }
    headline_breakdowns: ClassVar[tuple[tuple[str, str], ...]] = (
        ("severity", "Detection by severity"),
        ("worst_rules", f"Worst rules: the lowest recall among rules with at least {WORST_RULES_MIN_FINDINGS} oracle "
                        "findings"),
    )
    example_fields: ClassVar[tuple[str, ...]] = ("platform", "clean", "detection", "patch_score", "fn_rules",
                                                 "fp_rules", "patch_error")
    splits: ClassVar[tuple[str, ...]] = ("train", "dev", "test")
    data_dir: ClassVar[Path] = DATA_DIR
    default_generated_size: ClassVar[int] = 100
    public_splits: ClassVar[tuple[str, ...]] = ("test",)
    honest_baselines: ClassVar[tuple[str, ...]] = ("tools", "autofix")
    hack_baselines: ClassVar[tuple[str, ...]] = HACKS  # named once, where they are written
    parity_hacks: ClassVar[tuple[str, ...]] = ("equivalent-rewrite", "undeclared-reference")
    #: The bench shows the strongest hack (a rewrite the engines must see through, tying tools) and two cheap ones.
    bench_hacks: ClassVar[tuple[str, ...] | None] = ("equivalent-rewrite", "delete-everything", "claim-everything")
    score_batch_size: ClassVar[int] = 64
    #: A batch runs semgrep once (~0.17 s whatever its size): it waits for 32 rollouts while episodes are played.
    score_batch_min: ClassVar[int] = 32
    #: Two workers: the scanning baselines answer in them too (``runs_in_workers``), so on two cores both are busy
    #: (measured on the public test set with autofix: 14.3 s whole with one worker and the baseline in the driver,
    #: 12.0 s with two and the baseline in them).
    score_workers: ClassVar[int] = 2
    item_contract: ClassVar[ItemContract] = ItemContract(ConfigAuditInput, ConfigAuditTarget, Answer)
    outcome_model: ClassVar[type[Outcome]] = AuditOutcome
    breakdowns: ClassVar[Mapping[str, Breakdown]] = audit_metrics.BREAKDOWNS
    config: ConfigAuditConfig

    @classmethod
    def importer(cls) -> Importer:
        from security_verifiers.envs.config_audit.importer import IMPORTER

        return IMPORTER

    @property
    def max_turns(self) -> int:
        return self.config.max_turns if self.config.mode == "tools" else 1

    def component_weights(self) -> dict[str, float]:
        return {"detection": self.config.detection_weight, "patch": self.config.patch_weight}

    def tool_versions(self) -> dict[str, str]:
        from security_verifiers.engines.oracle import get_oracle

        return get_oracle().versions()

    def load_checkers(self) -> dict[str, str]:
        """Every engine loaded now (Checkov's import included, which a scan otherwise defers), then the versions."""
        from security_verifiers.engines.oracle import get_oracle

        get_oracle().load()
        return self.tool_versions()

    # -- data ---------------------------------------------------------------------------------
    def generate(self, split: str, n: int, seed: int) -> list[Item]:
        from security_verifiers.envs.config_audit.generation.generator import generate

        return generate(split, n, seed)

    def public_sets(self) -> PublicSets:
        from security_verifiers.envs.config_audit.generation.public import PUBLIC_SETS

        return PUBLIC_SETS

    def rewrites(self) -> tuple[Rewrite, ...]:
        from security_verifiers.envs.config_audit.rewrites import REWRITES

        return REWRITES

    def rewrite_problem(self, original: Item, rewritten: Item) -> str | None:
        return self.rewrite_problems([(original, rewritten)])[0]

    def rewrite_problems(self, pairs: Sequence[tuple[Item, Item]]) -> list[str | None]:
        from security_verifiers.envs.config_audit.rewrites import rewrite_problems

        return rewrite_problems(self, pairs)

    # -- episode ------------------------------------------------------------------------------
    def prompt(self, item: Item) -> list[Message]:
        platform = item.input["platform"]
        rules = rules_for(platform, resource_types(platform, item.input["text"]))
        catalog = "\n".join(f"- {r.id} — {r.title} [{r.severity.value}]" for r in rules)
        style = ("Kind/name (e.g. Deployment/web)" if platform == "kubernetes"
                 else "by Terraform address (e.g. aws_s3_bucket.logs)")
        tools_note = TOOLS_NOTE.format(n=self.config.max_tool_calls) if self.config.mode == "tools" else ""
        system = SYSTEM_PROMPT.format(platform_name="Kubernetes manifest" if platform == "kubernetes"
                                      else "Terraform", catalog=catalog, resource_style=style,
                                      filename=item.input["filename"], tools_note=tools_note)
        shown = [show_file(item.input["filename"], item.input["text"])]
        shown += [show_file(other["filename"], other["text"], note="same module; read-only context, do not patch")
                  for other in item.input.get("context") or []]
        user = "\n\n".join(shown)
        return [Message(role="system", content=system), Message(role="user", content=user)]

    def tools(self, item: Item) -> Toolbox | None:
        if self.config.mode != "tools":
            return None
        from security_verifiers.envs.config_audit.tools import AuditToolbox, load_engines

        worker = shared_worker(self, load_engines)  # one warm worker process per environment (per run)
        limits = WorkerLimits(time_s=self.config.tool_timeout_s, memory_mb=self.config.memory_limit_mb)
        return AuditToolbox(item.input["platform"], item.input["text"], self.config.max_tool_calls, limits, worker,
                            context_of(item))

    # -- the one scorer ------------------------------------------------------------------------
    def scoring_limits(self) -> WorkerLimits:
        return WorkerLimits(time_s=self.config.score_time_limit_s, memory_mb=self.config.memory_limit_mb)

    def score_over_limit(self, item: Item, transcript: Transcript, reason: str) -> Score:
        """The reply's findings scored as usual; its patch, whose scoring ran past the limits, not applied: an
        invalid patch (only the original is scanned)."""
        result = self._score_batch([item], [transcript], over_limit=reason)[0]
        if isinstance(result, InfraError):
            raise result
        return result

    def score(self, item: Item, transcript: Transcript) -> Score:
        result = self.score_many([item], [transcript])[0]
        if isinstance(result, InfraError):
            raise result
        return result

    def score_many(self, items: Sequence[Item], transcripts: Sequence[Transcript]) -> list[Score | InfraError]:
        """Parse every answer, apply every patch, scan originals, patched files and their fail-closed variants
        (:mod:`fail_closed`) in two oracle batches."""
        return self._score_batch(items, transcripts)

    def _score_batch(self, items: Sequence[Item], transcripts: Sequence[Transcript],
                     over_limit: str | None = None) -> list[Score | InfraError]:
        """``score_many``; with ``over_limit``, every patch is left unapplied and invalid for that reason."""
        from security_verifiers.engines.oracle import get_oracle

        oracle = get_oracle()
        parsed = [parse_answer(t.final_text, Answer) for t in transcripts]
        patched: list[str | PatchError | None] = []
        for item, answer in zip(items, parsed, strict=True):
            patch = answer.value.patch if isinstance(answer, Parsed) else ""
            if not patch.strip():
                patched.append(None)
                continue
            if over_limit is not None:
                patched.append(PatchError(f"the patch was not judged: {over_limit}"))
                continue
            try:
                patched.append(apply_patch(item.input["text"], patch, item.input["filename"]))
            except PatchError as err:
                patched.append(err)
        requests = [scan_request(i) for i in items]
        requests += [scan_request(i, p) for i, p in zip(items, patched, strict=True) if isinstance(p, str)]
        results = iter(oracle.scan_many(requests))
        originals = [next(results) for _ in items]
        patched_results = [next(results) if isinstance(p, str) else None for p in patched]
        variants: list[str | None] = []
        for index, (item, text, result) in enumerate(zip(items, patched, patched_results, strict=True)):
            try:
                variants.append(self._variant(item, text, result))
            except InfraError:
                raise
            except Exception as err:  # noqa: BLE001 - caused by the patched text (its original passed): the patch's
                patched[index] = PatchError(f"the patched file cannot be judged: {type(err).__name__}: {err}")
                variants.append(None)
        variant_results = iter(oracle.scan_many([scan_request(i, v) for i, v in zip(items, variants, strict=True)
                                                 if v is not None]))
        scores: list[Score | InfraError] = []
        for index, (item, transcript, answer, patch) in enumerate(zip(items, transcripts, parsed, patched,
                                                                         strict=True)):
            variant = next(variant_results) if variants[index] is not None else None
            try:
                scores.append(self._score_one(item, transcript, answer, originals[index], patch,
                                              patched_results[index], variant))
            except InfraError as err:  # this rollout only; the rest of the batch is still scored
                scores.append(err)
        return scores

    @staticmethod
    def _variant(item: Item, patched: str | PatchError | None, result: Any) -> str | None:
        """The fail-closed variant of a patched Terraform file that parses, or None (see :mod:`fail_closed`)."""
        if item.input["platform"] != "terraform" or not isinstance(patched, str) or result is None \
                or result.parse_error is not None:
            return None
        from security_verifiers.envs.config_audit.fail_closed import fail_closed_variant

        try:
            return fail_closed_variant(item.input["text"], patched, context_of(item))
        except ConfigParseError:
            return None

    def _score_one(self, item: Item, transcript: Transcript, answer: Parsed[Answer] | ParseFailure,
                   original: Any, patched_text: str | PatchError | None, patched_result: Any,
                   variant_result: Any) -> Score:
        target = [Finding.model_validate(f) for f in item.target["findings"]]
        if original.engine_error is not None:  # independent of the model's reply: the scorer's failure
            raise InfraError(ErrorKind.SCORER, f"a policy engine failed on the original of {item.id}: "
                             f"{original.engine_error}")
        if {f.key for f in original.findings} != {f.key for f in target}:
            raise InfraError(ErrorKind.SCORER, f"the oracle's findings on {item.id} differ from the dataset's; "
                             "the engines or rules changed since the dataset was built")
        over_budget = CallBudget(self.config.max_tool_calls).over(transcript.tool_calls) \
            if self.config.mode == "tools" else 0
        base = {"platform": item.input["platform"], "clean": not target, "n_oracle": len(target),
                "oracle_rules": sorted({f.rule_id for f in target}),
                "oracle_weight": sum(f.severity.weight for f in target),
                "tool_calls": transcript.tool_calls, "tool_seconds": transcript.tool_seconds,
                "over_budget": over_budget, "cloud": item.meta.get("cloud")}
        if isinstance(answer, ParseFailure):
            outcome = AuditOutcome(**base, valid=False, reward=0.0, patch_present=False).stored()
            return Score(reward=0.0, components={"detection": 0.0, "patch": 0.0}, outcome=outcome,
                         parse_status=answer.status, parse_error=answer.message)
        claims = [(f.rule_id, f.resource) for f in answer.value.findings]
        detection = score_detection(claims, target)
        try:
            outcome_patch = self._patch_outcome(item, target, original, patched_text, patched_result, variant_result)
        except InfraError:
            raise
        except Exception as err:  # noqa: BLE001 - the original was judged already: the patched text caused it
            outcome_patch = PatchOutcome(present=True, applied=True,
                                         error=f"the patched file cannot be judged: {type(err).__name__}: {err}")
        cfg = self.config
        reward = cfg.detection_weight * detection.score + cfg.patch_weight * outcome_patch.score
        reward = max(0.0, reward - cfg.over_budget_cost * over_budget)
        outcome = AuditOutcome(**base, valid=True, reward=reward, **_detection_outcome(detection),
                               **{f"patch_{k}": v for k, v in vars(outcome_patch).items()}).stored()
        return Score(reward=reward, components={"detection": detection.score, "patch": outcome_patch.score},
                     outcome=outcome, parse_status=ParseStatus.OK)

    def _patch_outcome(self, item: Item, target: list[Finding], original: Any, patched_text: str | PatchError | None,
                       patched_result: Any, variant_result: Any) -> PatchOutcome:
        if patched_text is None:  # no patch: nothing fixed; on a clean file that is the right answer
            return PatchOutcome(present=False, score=0.0 if target else 1.0,
                                original_w=sum(f.severity.weight for f in target))
        if isinstance(patched_text, PatchError):
            return PatchOutcome(present=True, error=str(patched_text))
        problems = self._new_problems(item, original, patched_text, patched_result)
        if problems:
            return PatchOutcome(present=True, applied=True, error=f"the patched file is invalid: {problems}")
        platform = item.input["platform"]
        try:
            problem = inventory_preserved(inventory(platform, item.input["text"]), inventory(platform, patched_text))
        except ConfigParseError as err:
            return PatchOutcome(present=True, applied=True, error=f"the patched file is invalid: {err}")
        if problem is not None:
            return PatchOutcome(present=True, applied=True, valid=True, error=f"inventory changed: {problem}")
        judged = list(patched_result.findings)
        undetermined = 0
        if variant_result is not None:  # fail-closed: findings that an undetermined value may still hide
            seen = {f.key for f in judged}
            rules = catalog()
            target_keys = {f.key for f in target}
            kept_open = [f for f in variant_result.findings if f.key in target_keys and f.key not in seen
                         and not rules[f.rule_id].hardcoded]  # a secret replaced by an outside value is fixed
            undetermined = len(kept_open)
            judged += kept_open
        fixed_w, original_w, new_w, n_fixed, n_new, score = score_fix(target, judged)
        return PatchOutcome(present=True, applied=True, valid=True, inventory_ok=True, fixed_w=fixed_w,
                            original_w=original_w, new_w=new_w, n_fixed=n_fixed, n_new=n_new,
                            n_undetermined=undetermined, score=score)

    @staticmethod
    def _new_problems(item: Item, original: Any, patched_text: str, patched_result: Any) -> str | None:
        """Why the patched file is invalid where its original was not (a file is judged against its own
        original: a problem the original already had does not make the patch invalid); None when it is valid."""
        from security_verifiers.engines.validate import new_issues

        if patched_result.engine_error is not None:  # caused by the model's text: its failure, scored
            return f"the policy engines cannot process it ({patched_result.engine_error})"
        if patched_result.parse_error is not None:
            return patched_result.parse_error
        issues = new_issues(original.validation, patched_result.validation)
        if not issues and item.input["platform"] == "terraform":
            from security_verifiers.envs.config_audit.fail_closed import terraform_type_issues

            issues = terraform_type_issues(item.input["text"], patched_text, context_of(item))
        if not issues:
            return None
        return "; ".join(issue.message for issue in issues[:3])

    def flat_metrics(self, outcomes: Sequence[Any]) -> dict[str, Any]:
        return audit_metrics.flat_metrics(outcomes)

    def interval_statistics(self, outcomes: Sequence[Any]) -> Mapping[str, Statistic]:
        return audit_metrics.statistics(outcomes)

    def constant_policy(self, outcomes: Sequence[Any]) -> ConstantPolicy | None:
        return audit_metrics.empty_answer_policy(outcomes)

    def plots(self, outcomes: Sequence[dict[str, Any]], out_dir: Path) -> list[Path]:
        from security_verifiers.envs.config_audit.plots import config_audit_plots

        return config_audit_plots(outcomes, out_dir)

    def rules(self) -> Sequence[BaseModel]:
        from security_verifiers.engines.findings import catalog

        return list(catalog().values())

    def baselines(self) -> dict[str, Callable[[], Policy]]:
        from security_verifiers.envs.config_audit import baselines as b

        return {"reference": b.ReferenceBaseline, "autofix": b.AutofixBaseline, "tools": b.ToolsBaseline,
                **{name: (lambda name=name: b.HackBaseline(name)) for name in b.HACKS}}


def scan_request(item: Item, text: str | None = None) -> tuple[str, str, tuple[str, ...]]:
    """The oracle request for ``item``'s file (or for ``text``, a patched version of it), with its module."""
    return (item.input["platform"], item.input["text"] if text is None else text, context_of(item))


def _detection_outcome(d: Detection) -> dict[str, Any]:
    return {"tp": d.tp, "fp": d.fp, "fn": d.fn, "tp_w": d.tp_w, "fp_w": d.fp_w, "fn_w": d.fn_w,
            "detection": d.score, "tp_rules": [r for r, _ in d.true_positives],
            "fp_rules": [r for r, _ in d.false_positives], "fn_rules": [r for r, _ in d.missed],
            "claimed": d.tp + d.fp}


__all__ = ["Answer", "ConfigAudit", "ConfigAuditConfig", "Severity"]
