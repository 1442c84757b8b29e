"""What a training run changed, beyond the paired deltas: read against the constant floor, and with the signs of a
degenerate policy in plain view.

A reward delta alone can hide that the "gain" was bought by collapsing onto one answer: the seed-1 network-logs
run gained +0.054 by moving from 38% to 78% ``Malicious`` answers while its AUC fell 0.633 -> 0.610, and 129 of its
200 answers read ``Malicious, p = 0.02`` (a label its own probability contradicts). So ``sv train`` also records,
from the two held-out run directories ``eval/before`` and ``eval/after`` (:func:`learned`):

* the constant floor: the best answer that ignores the item, and its reward on the same items (the environment's
  own :meth:`~security_verifiers.envs.base.Environment.constant_policy`, as the run's report shows it), and each
  run's paired delta against it with a 95% bootstrap interval over items;
* the ranking and calibration of the stated probabilities before and after: ROC AUC, and the environment's own
  calibration metrics (Brier, ECE, AURC where it defines them);
* how many distinct answers each run gave (texts, and labels where answers carry one), and each label's count;
* how many answers state a label that their own probability contradicts (a positive label with a probability of
  the positive class below 1/2, or a negative label above it): answers of an abstaining classifier only.

Everything is computed on the items both runs scored (as :func:`~security_verifiers.report.compare.compare_runs`
does), from the stored outcomes and the environment's metric code: nothing here scores an answer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from security_verifiers.core.metrics import BOOT_SEED, N_BOOT, bootstrap_ci
from security_verifiers.core.metrics_report import ConstantPolicy
from security_verifiers.core.types import RolloutRecord
from security_verifiers.envs.base import Environment
from security_verifiers.envs.kits.abstaining.environment import AbstainingEnvironment
from security_verifiers.envs.kits.abstaining.reward import ClassifierOutcome
from security_verifiers.report.compare import load_run, run_environment

#: The environment's own metrics that say how well its stated probabilities are calibrated (lower is better).
CALIBRATION_METRICS = ("brier", "ece", "aurc")
#: The label an unparsed answer is counted under.
INVALID = "invalid"


class Answers(BaseModel):
    """One run's answers on the shared items: what they were, and how their probabilities rank and calibrate."""

    model_config = ConfigDict(extra="forbid")

    n: int = Field(description="Scored answers (rollouts) on the shared items.")
    reward_mean: float
    distinct_texts: int = Field(description="Distinct final assistant texts: 1 means one answer to every item.")
    labels: dict[str, int] | None = Field(
        description="Answers by label (``invalid``: unparsed), most frequent first; None where answers carry no label.")
    distinct_labels: int | None = Field(description="Distinct labels among the parsed answers; None without labels.")
    auc: float | None = Field(description="ROC AUC of the stated probability of the positive class against the "
                                          "truth, over the parsed answers; None without probabilities, or when the "
                                          "items hold one class only.")
    calibration: dict[str, float | None] = Field(
        description="The environment's own calibration metrics (of :data:`CALIBRATION_METRICS`, those it defines).")
    contradictions: int | None = Field(
        description="Answers whose label contradicts their own probability: a positive label with p < 0.5, or a "
                    "negative label with p > 0.5 (Abstain never does); None where answers carry no probability.")
    contradiction_share: float | None = Field(description="``contradictions`` / ``n``.")


class VersusFloor(BaseModel):
    """A run's mean reward against the constant floor's on the same items."""

    model_config = ConfigDict(extra="forbid")

    reward_mean: float
    delta: float = Field(description="reward_mean − the floor's reward_mean: ≤ 0 means no better than answering "
                                     "the same thing to every item.")
    ci: tuple[float | None, float | None] = Field(
        description="95% percentile bootstrap interval of the delta over items; the floor is recomputed on each "
                    "resample (the best constant on exactly those items), so the interval holds its uncertainty too "
                    "and leans low by the floor's in-sample choice.")


class Learned(BaseModel):
    """``summary.json["learned"]``: what the training changed (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")

    items: int = Field(description="Items both runs scored; everything below is over them.")
    floor: ConstantPolicy | None = Field(description="The best constant answer on these items, and its reward.")
    no_floor: str | None = Field(None, description="Why there is no floor, where there is none.")
    before_vs_floor: VersusFloor | None
    after_vs_floor: VersusFloor | None
    before: Answers
    after: Answers
    bootstrap: dict[str, Any]

    def line(self) -> str:
        """The run's final printed line: the floor and the delta against it, AUC, the dominant label and the
        contradicting answers, each before -> after."""
        parts: list[str] = []
        if self.floor is not None and self.after_vs_floor is not None:
            v = self.after_vs_floor
            ci = "n/a" if v.ci[0] is None or v.ci[1] is None else f"[{v.ci[0]:+.4f}, {v.ci[1]:+.4f}]"
            parts.append(f"after {v.reward_mean:.4f} vs constant floor {self.floor.reward_mean:.4f} "
                         f"({self.floor.policy}): {v.delta:+.4f} {ci}")
        else:
            parts.append(f"no constant floor ({self.no_floor})")
        b, a = self.before, self.after
        if a.auc is not None or b.auc is not None:
            parts.append(f"AUC {_num(b.auc)} -> {_num(a.auc)}")
        for key in CALIBRATION_METRICS[:2]:
            if a.calibration.get(key) is not None or b.calibration.get(key) is not None:
                parts.append(f"{key.upper() if key == 'ece' else key.capitalize()} {_num(b.calibration.get(key))} -> "
                             f"{_num(a.calibration.get(key))}")
        parts.append(f"distinct answers {b.distinct_texts} -> {a.distinct_texts}")
        if a.labels:
            top = next(iter(a.labels))
            parts.append(f"{top} answers {_share(b.labels, top, b.n)} -> {_share(a.labels, top, a.n)}")
        if a.contradictions is not None and b.contradictions is not None:
            parts.append(f"label contradicts probability {b.contradictions}/{b.n} -> {a.contradictions}/{a.n}")
        return "; ".join(parts)


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _share(labels: dict[str, int] | None, label: str, n: int) -> str:
    return "n/a" if labels is None or not n else f"{labels.get(label, 0) / n:.0%}"


def _final_text(record: RolloutRecord) -> str:
    messages = record.transcript.messages if record.transcript is not None else []
    return next((m.content for m in reversed(messages) if m.role == "assistant"), "")


def _auc(outcomes: Sequence[ClassifierOutcome]) -> float | None:
    """ROC AUC of the parsed answers' probabilities; None with fewer than one item of each class."""
    from sklearn.metrics import roc_auc_score

    pairs = [(o.y, o.p) for o in outcomes if o.valid and o.p is not None]
    if len({y for y, _ in pairs}) < 2:
        return None
    return float(roc_auc_score([y for y, _ in pairs], [p for _, p in pairs]))


def _contradicts(o: ClassifierOutcome) -> bool:
    return o.p is not None and ((o.action == "positive" and o.p < 0.5) or (o.action == "negative" and o.p > 0.5))


def _answers(env: Environment, records: Sequence[RolloutRecord], outcomes: Sequence[Any]) -> Answers:
    """One run's :class:`Answers`; ``records`` and their typed ``outcomes`` are aligned."""
    point = env.point_metrics(outcomes)
    labels: dict[str, int] | None = None
    auc = contradictions = None
    if isinstance(env, AbstainingEnvironment) and all(isinstance(o, ClassifierOutcome) for o in outcomes):
        names = Counter(env.labels.label(o.action) if o.valid and o.action else INVALID for o in outcomes)
        labels = dict(names.most_common())
        auc = _auc(outcomes)
        contradictions = sum(_contradicts(o) for o in outcomes)
    n = len(records)
    return Answers(
        n=n, reward_mean=float(np.mean([r.reward or 0.0 for r in records])) if n else 0.0,
        distinct_texts=len({_final_text(r) for r in records}), labels=labels,
        distinct_labels=None if labels is None else len([k for k in labels if k != INVALID]),
        auc=auc, calibration={k: point[k] for k in CALIBRATION_METRICS if k in point},
        contradictions=contradictions, contradiction_share=None if contradictions is None or not n
        else contradictions / n)


def _versus_floor(env: Environment, records: Sequence[RolloutRecord], outcomes: Sequence[Any], floor: ConstantPolicy,
                  n_boot: int, seed: int) -> VersusFloor:
    """The paired delta of one run against the floor: each resample draws items (all their rollouts) and compares
    the run's mean reward with the best constant's on exactly those items."""
    rewards = np.array([r.reward for r in records], dtype=float)

    def delta(idx: np.ndarray) -> float | None:
        constant = env.constant_policy([outcomes[i] for i in idx])
        return None if constant is None else float(rewards[idx].mean()) - constant.reward_mean

    mean = float(rewards.mean())
    ci = bootstrap_ci(len(records), delta, n_boot=n_boot, seed=seed, clusters=[r.item_id for r in records])
    return VersusFloor(reward_mean=mean, delta=mean - floor.reward_mean, ci=ci)


def learned(before_dir: Path, after_dir: Path, n_boot: int = N_BOOT, seed: int = BOOT_SEED) -> Learned:
    """What changed from the run in ``before_dir`` to the one in ``after_dir`` (two runs of one environment on the
    same items, as ``sv compare`` takes them), read against the constant floor."""
    (meta_b, records_b), (meta_a, records_a) = load_run(before_dir), load_run(after_dir)
    env = run_environment(meta_b, meta_a)
    scored_b = [r for r in records_b if r.error is None]
    scored_a = [r for r in records_a if r.error is None]
    shared = {r.item_id for r in scored_b} & {r.item_id for r in scored_a}

    def side(records: list[RolloutRecord]) -> tuple[list[RolloutRecord], list[Any]]:
        # sorted by item, so that both runs' clusters come in one order and a resample draws the same items of both
        kept = sorted((r for r in records if r.item_id in shared), key=lambda r: (r.item_id, r.sample))
        return kept, list(env.typed_outcomes([r.outcome for r in kept]))

    (rec_b, out_b), (rec_a, out_a) = side(scored_b), side(scored_a)
    floor = env.constant_policy(out_a) if env.reports_floor and out_a else None
    no_floor = None
    if floor is None:
        no_floor = (f"{env.name} defines no constant answer" if not env.reports_floor
                    else "no scored item in common" if not out_a
                    else f"{env.name} computes none for these items")
    versus = {} if floor is None else {
        label: _versus_floor(env, recs, outs, floor, n_boot, seed)
        for label, recs, outs in (("before", rec_b, out_b), ("after", rec_a, out_a))}
    return Learned(
        items=len(shared), floor=floor, no_floor=no_floor, before_vs_floor=versus.get("before"),
        after_vs_floor=versus.get("after"), before=_answers(env, rec_b, out_b), after=_answers(env, rec_a, out_a),
        bootstrap={"n": n_boot, "seed": seed, "level": 0.95,
                   "resamples": "items (all rollouts of a drawn item); the floor recomputed on each"})
