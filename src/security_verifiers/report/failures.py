"""Example failures: the few scored rollouts a reader should look at first, chosen from ``results.jsonl`` alone.

A mean reward says how often a model fails, not how. Five of its worst answers, with the outcome fields that say
what went wrong and the start of the answer itself, usually tell more than a page of rates: the answers that did
not parse (the format was the problem) and the lowest-reward parsed ones (the judgement was). The summary keeps
them so ``report.md`` can show them; every rollout stays in ``results.jsonl`` and ``view.html``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from security_verifiers.core.types import ParseStatus, RolloutRecord

#: Examples per report, and how many of them may be unparsed answers (the rest show wrong judgements).
MAX_EXAMPLES = 5
MAX_PARSE_FAILURES = 2
#: The answer is cut to this many characters: enough to see what the model did, small enough for a report.
ANSWER_CHARS = 300
#: An outcome list longer than this (a claim-everything policy's thousands of false-positive rules) is stored as
#: its distinct values with counts, cut to :data:`ANSWER_CHARS`: the summary stays small.
MAX_LIST = 10


class FailureExample(BaseModel):
    """One example failure as ``summary.json`` stores it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    item_id: str
    sample: int
    reward: float
    parse_status: str
    #: The environment's ``example_fields`` of the outcome, those it has (a long list summarised: :func:`compact`).
    outcome: dict[str, Any]
    #: The start of the final assistant message (``ANSWER_CHARS`` at most), and its full length.
    answer: str
    answer_chars: int
    #: Other failed rollouts (of other items) with the same outcome fields, parse status, reward and answer start:
    #: the same mistake, counted here rather than shown again.
    alike: int = 0


def compact(value: Any) -> Any:
    """``value`` as an example shows it: a list of more than :data:`MAX_LIST` values becomes one line of its
    distinct values, most frequent first, with their counts; anything else is kept.

    >>> compact(["a", "b"]), compact(["x"] * 12 + ["y"])
    (['a', 'b'], '13 values: x ×12, y')
    """
    if not isinstance(value, list) or len(value) <= MAX_LIST:
        return value
    counts = Counter(json.dumps(v) if not isinstance(v, str) else v for v in value)
    parts = ", ".join(f"{v} ×{n}" if n > 1 else v for v, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    text = f"{len(value)} values: {parts}"
    return text if len(text) <= ANSWER_CHARS else text[:ANSWER_CHARS - 1] + "…"


def _example(record: RolloutRecord, fields: Sequence[str]) -> FailureExample:
    text = record.transcript.final_text if record.transcript is not None else ""
    return FailureExample(item_id=record.item_id, sample=record.sample, reward=float(record.reward or 0.0),
                          parse_status=str(record.parse_status or ParseStatus.OK),
                          outcome={k: compact(record.outcome[k]) for k in fields if k in record.outcome},
                          answer=text[:ANSWER_CHARS], answer_chars=len(text))


def _same_mistake(example: FailureExample) -> str:
    return json.dumps([example.parse_status, example.reward, example.outcome, example.answer], sort_keys=True)


def failure_examples(records: Sequence[RolloutRecord], fields: Sequence[str]) -> list[FailureExample]:
    """Up to :data:`MAX_EXAMPLES` scored rollouts that did not parse or earned less than the run's best reward (the
    environments' rewards have different ranges, so "failed" is relative to the run), one per item and one per
    mistake (the others alike are counted in ``alike``): unparsed answers first (at most :data:`MAX_PARSE_FAILURES`,
    unless too few others failed), then the lowest-reward parsed ones; ties by item id, so the choice is the same on
    every rebuild.

    Errored rollouts are not failures of the model and are never chosen. A run whose every rollout parsed and earned
    the same reward (the reference; a constant policy) has no failures to show.
    """
    scored = [r for r in records if r.error is None and r.reward is not None]
    if not scored:
        return []
    best = max(r.reward for r in scored if r.reward is not None)
    failed = sorted((r for r in scored if r.reward is not None
                     and (r.reward < best or r.parse_status not in (None, ParseStatus.OK))),
                    key=lambda r: (r.reward, r.item_id, r.sample))
    # One example per mistake, in order of reward; the first rollout of each stands for the others.
    mistakes: dict[str, tuple[FailureExample, set[str]]] = {}
    for record in failed:
        example = _example(record, fields)
        first, items = mistakes.setdefault(_same_mistake(example), (example, set()))
        items.add(record.item_id)
    unique = [first.model_copy(update={"alike": len(items) - 1}) for first, items in mistakes.values()]
    unparsed = [e for e in unique if e.parse_status != ParseStatus.OK]
    parsed = [e for e in unique if e.parse_status == ParseStatus.OK]
    chosen: list[FailureExample] = []
    seen: set[str] = set()

    def take(pool: list[FailureExample], limit: int) -> None:
        for example in pool:
            if len(chosen) >= limit:
                return
            if example.item_id not in seen:
                seen.add(example.item_id)
                chosen.append(example)

    take(unparsed, MAX_PARSE_FAILURES)
    take(parsed, MAX_EXAMPLES)
    take(unparsed, MAX_EXAMPLES)  # too few parsed failures: more unparsed ones fill the list
    return chosen
