"""The evidence part of E4's reward: how much of what the answer quotes is true, and, on phishing, how much of
what was planted it found.

- A piece of evidence is *grounded* when its quote lies inside one segment of the rendering, and *confirmed*
  when it is grounded and its indicator's verifier confirms it there (:func:`.verifiers.confirm`).
- *Precision* is the share of the scored evidence that is confirmed (evidence under a language indicator is not
  scored on imported mail). Repeats of one (indicator, quote) count once, so repeating a true quote buys
  nothing.
- *Recall*, on phishing only, is the share of the planted indicators (imported mail: those :func:`.verifiers.detect`
  finds) that some confirmed evidence names, out of at most :data:`MAX_EVIDENCE`.
- The part is ``F1(precision, recall)`` on phishing with something to find, and ``precision`` elsewhere, where
  saying nothing scores 1: on a legitimate email, evidence the verifiers reject costs, true evidence is neutral
  (a legitimate newsletter really has tracking links), and there is nothing to find.

The environment credits this score only under a committed, correct label (:func:`.env.committed_and_correct`).

So quoting the whole email (no segment holds it), fabricating quotes (not grounded), and one quote under every
indicator (most of them rejected) all lower the part, and nothing is gained by quoting on a legitimate email.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from security_verifiers.envs.phishing.indicators import MAX_EVIDENCE
from security_verifiers.envs.phishing.message import collapse
from security_verifiers.envs.phishing.verifiers import Context, confirm, scored


class EvidenceItem(BaseModel):
    """One piece of evidence as the answer gives it."""

    model_config = ConfigDict(extra="ignore")

    quote: str = Field(max_length=2000, strict=True)
    indicator: str = Field(max_length=100, strict=True)


@dataclass(frozen=True)
class EvidenceResult:
    given: int
    grounded: int
    scored: int
    confirmed: int
    #: Planted (or, on imported mail, detected) indicators the recall counts, and how many of them were named.
    to_find: int
    found: int
    score: float

    @property
    def precision(self) -> float | None:
        return self.confirmed / self.scored if self.scored else None

    @property
    def recall(self) -> float | None:
        return self.found / self.to_find if self.to_find else None


def to_find(ctx: Context) -> list[str]:
    """The indicators the recall counts on a phishing email: planted ones, or on imported mail the structural ones
    code finds; at most :data:`MAX_EVIDENCE`, in the taxonomy's order for imported mail."""
    ids = [indicator for indicator, _ in ctx.detected] if ctx.imported else [p.indicator for p in ctx.planted]
    return list(dict.fromkeys(ids))


def score_evidence(evidence: Sequence[EvidenceItem], ctx: Context, phishing: bool) -> EvidenceResult:
    unique = list(dict.fromkeys((e.indicator, collapse(e.quote)) for e in evidence))
    grounded = [(i, q) for i, q in unique if any(c.isalnum() for c in q) and ctx.rendering.locate(q)]
    judged = [(i, q) for i, q in unique if scored(i, ctx)]
    confirmed = [(i, q) for i, q in judged if confirm(i, q, ctx)]
    targets = to_find(ctx) if phishing else []
    denominator = min(len(targets), MAX_EVIDENCE)
    found = len({i for i, _ in confirmed} & set(targets))
    precision = len(confirmed) / len(judged) if judged else 1.0
    if denominator:
        recall = min(found, denominator) / denominator
        precision = precision if judged else 0.0
        score = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
    else:
        score = precision
    return EvidenceResult(given=len(unique), grounded=len(grounded), scored=len(judged), confirmed=len(confirmed),
                          to_find=denominator, found=min(found, denominator), score=score)
