"""Completion budgets that fit the task: the token limits of a run (the RL stage's ``max_completion_length`` and the
held-out evaluation's ``max_tokens``) measured against the teacher's answers in the run's own tokenizer.

A budget shorter than the answers it should produce trains and measures truncation, not the task: with
``max_completion_length: 24`` on phishing, whose heuristic answers take 22-119 tokens (median 37), every sampled
answer was cut and unparseable, before and after training (issue 30). So a run whose budget would cut more than
:data:`MAX_CUT_SHARE` of the teacher's answers is refused before any training, with the numbers and the budget
that would fit; the lengths are recorded in the run's manifest.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel

from security_verifiers.core.errors import ConfigError

#: The share of the teacher's answers a budget may cut.
MAX_CUT_SHARE = 0.05


class AnswerLengths(BaseModel):
    """The teacher's answers in tokens (the end-of-sequence token a generation needs to stop counted), and the
    share of them each budget cuts."""

    answers: int
    median: int
    p95: int
    max: int
    cut: dict[str, float]


def answer_tokens(tokenizer_dir: Path, answers: Sequence[str]) -> list[int]:
    """Each answer's length in the tokenizer saved at ``tokenizer_dir``, plus one for the end-of-sequence token
    where the tokenizer has one (a generation stops on it, so the budget must hold it too)."""
    from transformers import AutoTokenizer

    if not answers:
        return []
    tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_dir), local_files_only=Path(tokenizer_dir).is_dir())
    eos = 0 if tokenizer.eos_token_id is None else 1
    return [len(ids) + eos for ids in tokenizer(list(answers), add_special_tokens=False)["input_ids"]]


def _quantile(ordered: Sequence[int], q: float) -> int:
    """The smallest length that at least ``q`` of the answers fit in."""
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def check_budgets(lengths: Sequence[int], budgets: Mapping[str, int], *, where: str, teacher: str) -> AnswerLengths:
    """The lengths' summary; a :class:`ConfigError` naming every budget that cuts more than
    :data:`MAX_CUT_SHARE` of them, and what would fit. ``where``: the preset and environment, for the message."""
    if not lengths:
        raise ConfigError(f"{where}: no teacher answers to measure the completion budgets against")
    ordered = sorted(lengths)
    cut = {name: sum(1 for n in ordered if n > budget) / len(ordered) for name, budget in budgets.items()}
    summary = AnswerLengths(answers=len(ordered), median=_quantile(ordered, 0.5), p95=_quantile(ordered, 0.95),
                            max=ordered[-1], cut=cut)
    over = [name for name, share in cut.items() if share > MAX_CUT_SHARE]
    if over:
        fits = _quantile(ordered, 1 - MAX_CUT_SHARE)
        named = "; ".join(f"{name} = {budgets[name]} tokens cuts {cut[name]:.0%} of them" for name in over)
        raise ConfigError(
            f"{where}: the completion budget is too short for the task: {named}. The {len(ordered)} answers of "
            f"{teacher} take {summary.median} tokens (median), {summary.p95} (95th percentile), {summary.max} at "
            f"most, in this run's tokenizer; a budget of at least {fits} keeps {1 - MAX_CUT_SHARE:.0%} of them "
            f"(set it in the preset, or for this environment in its env_overrides)")
    return summary
