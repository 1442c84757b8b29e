"""``summary.json``: a run's counts, metrics, intervals and breakdowns, rebuilt from ``results.jsonl`` alone.

Errored rollouts (infrastructure failures, ``record.error`` set) are excluded from every metric and
counted instead, so a flaky endpoint can neither lower nor raise a model's score. Parse failures are
the model's own fault: they are scored (at the minimum reward) and also counted.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from security_verifiers.core.metrics import ratio
from security_verifiers.core.metrics_report import MetricsReport
from security_verifiers.core.rundir import latest_by_key, read_records
from security_verifiers.core.types import ParseStatus, RolloutRecord
from security_verifiers.envs.base import Environment
from security_verifiers.report.failures import failure_examples
from security_verifiers.report.status import run_status

#: Version of the ``summary.json`` layout. Bump it when a field changes meaning.
SUMMARY_SCHEMA_VERSION = 1
NO_SCORED_NOTE = ("no scored rollouts: every rollout errored or the results file is empty, "
                  "so there are no metrics")


def read_results(path: Path) -> list[RolloutRecord]:
    """The records of a ``results.jsonl``, one per ``(item_id, sample)``: the last one written wins.

    A run killed mid-write leaves its final line cut short; that line is dropped. A malformed line
    anywhere else means a corrupt file and raises ``ValueError`` naming the line. Repeats come from a
    resumed run redoing a rollout, so the later record is the one that counts. A missing file reads as
    no records (a run killed before its first rollout). The reading itself is
    :mod:`security_verifiers.core.rundir`'s, so the runner and the report agree on what a run holds.
    """
    return latest_by_key(read_records(Path(path)))


def _latency(records: list[RolloutRecord]) -> dict[str, float | None]:
    """Mean and percentiles of the latency of uncached rollouts (a cache hit says nothing of speed)."""
    seconds = np.array([r.latency_s for r in records if not r.cached], dtype=float)
    if seconds.size == 0:
        return {"mean": None, "p50": None, "p95": None}
    p50, p95 = np.percentile(seconds, [50, 95])
    return {"mean": float(seconds.mean()), "p50": float(p50), "p95": float(p95)}


#: An error example longer than this is cut: a provider may put a whole HTML page in its message.
MAX_EXAMPLE_CHARS = 300


def error_examples(records: list[RolloutRecord]) -> dict[str, str]:
    """One message per error kind, the most frequent (the first written on a tie), on one line and cut to
    ``MAX_EXAMPLE_CHARS``.

    The kind alone ("provider") does not say what to fix; a message such as "cannot connect" or "401" does, so
    the summary carries one per kind for the console and ``report.md`` (every message stays in ``results.jsonl``).
    """
    by_kind: dict[str, Counter[str]] = {}
    for record in records:
        if record.error is not None:
            by_kind.setdefault(record.error.kind, Counter())[record.error.message] += 1
    examples = {kind: " ".join(messages.most_common(1)[0][0].split()) for kind, messages in sorted(by_kind.items())}
    return {kind: message if len(message) <= MAX_EXAMPLE_CHARS else message[:MAX_EXAMPLE_CHARS - 1] + "…"
            for kind, message in examples.items()}


def _counts(records: list[RolloutRecord], ok: list[RolloutRecord]) -> dict[str, Any]:
    errors = Counter(r.error.kind for r in records if r.error is not None)
    parse_failures = Counter(
        str(r.parse_status) for r in ok if r.parse_status is not None and r.parse_status != ParseStatus.OK
    )
    return {
        "rollouts": len(records),
        "scored": len(ok),
        "errors": sum(errors.values()),
        "errors_by_kind": dict(sorted(errors.items())),
        "error_examples": error_examples(records),
        "error_rate": ratio(sum(errors.values()), len(records)),
        "parse_failures": sum(parse_failures.values()),
        "parse_failures_by_status": dict(sorted(parse_failures.items())),
        "cached": sum(r.cached for r in records),
    }


def _warnings(env: Environment, records: list[RolloutRecord]) -> list[str]:
    """Records scored by another version of the environment are reported, never mixed in silently."""
    versions = sorted({r.env_version for r in records} - {env.version})
    if not versions:
        return []
    return [f"records were scored by {env.name} version(s) {', '.join(versions)}, but the metrics are "
            f"computed by version {env.version}; their outcomes may not mean the same thing"]


def usage_and_cost(records: list[RolloutRecord], metadata: dict[str, Any]) -> dict[str, Any]:
    """Tokens of every record (errored calls spent them too), those of rollouts answered wholly from the response
    cache apart, and the cost at the run's ``--price-in``/``--price-out`` (USD per million tokens) of the tokens that
    were paid for: a cached answer was not requested again. A rollout only partly answered from the cache counts in
    full (its turns are not told apart), so the cost is an upper bound. No price, no cost (``None``)."""
    endpoint = ((metadata.get("invocation") or {}).get("endpoint") or {})
    price_in, price_out = endpoint.get("price_in"), endpoint.get("price_out")
    cached = [r for r in records if r.cached]
    usage: dict[str, Any] = {
        "prompt_tokens": sum(r.usage.prompt_tokens for r in records),
        "completion_tokens": sum(r.usage.completion_tokens for r in records),
        "cached_prompt_tokens": sum(r.usage.prompt_tokens for r in cached),
        "cached_completion_tokens": sum(r.usage.completion_tokens for r in cached),
        "price_in": price_in, "price_out": price_out, "cost_usd": None,
    }
    if price_in is not None and price_out is not None:  # ``Endpoint`` takes both or neither
        paid_in = usage["prompt_tokens"] - usage["cached_prompt_tokens"]
        paid_out = usage["completion_tokens"] - usage["cached_completion_tokens"]
        usage["cost_usd"] = (paid_in * price_in + paid_out * price_out) / 1e6
    return usage


def usage_line(summary: dict[str, Any]) -> str | None:
    """The console's line about tokens and cost; ``None`` when no token was counted (a baseline)."""
    usage = summary.get("usage") or {}
    prompt, completion = usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)
    if not prompt and not completion:
        return None
    cached = usage.get("cached_prompt_tokens", 0) + usage.get("cached_completion_tokens", 0)
    line = f"tokens: {prompt:,} prompt + {completion:,} completion"
    if cached:
        line += f" ({cached:,} of them from cached answers, not billed)"
    if usage.get("cost_usd") is not None:
        line += (f"; cost ${usage['cost_usd']:,.4f} at ${usage['price_in']:g} in / ${usage['price_out']:g} out "
                 "per million tokens")
    else:
        line += "; give --price-in and --price-out (USD per million tokens) for the cost"
    return line


def build_summary(env: Environment, records: list[RolloutRecord], metadata: dict[str, Any],
                  cut_line: int | None = None) -> dict[str, Any]:
    """The summary of one run: counts over all records, metrics over the records without an error.

    ``env.metrics`` must return ``{"metrics": {...flat...}, "intervals": {...}, "breakdowns": {...}}`` and may add
    ``"constant_policy"`` (checked as a :class:`MetricsReport`). ``failure_examples`` come from the records
    themselves (:mod:`.failures`), so the summary still needs nothing but ``results.jsonl``. Usage counts every
    record (errored calls still spent tokens). ``cut_line``: the number of the final line of ``results.jsonl``
    that was cut short and dropped, if any (see :mod:`.status`).
    """
    foreign = sorted({r.env for r in records} - {env.name})
    if foreign:
        raise ValueError(f"records of environment(s) {', '.join(foreign)} cannot be summarised as {env.name}")
    ok = [r for r in records if r.error is None]
    status = run_status(metadata, records, cut_line)
    report = env.metrics_report([r.outcome for r in ok], [r.item_id for r in ok]) if ok else MetricsReport()
    computed = report.stored()
    summary: dict[str, Any] = {
        "schema_version": SUMMARY_SCHEMA_VERSION,
        "env": {"name": env.name, "version": env.version, "config": env.config.model_dump(mode="json")},
        "model": metadata.get("model"),
        "run_id": metadata.get("run_id"),
        "status": status.status,
        "status_detail": status.detail,
        **status.completeness(),
        # The item ids stay in metadata.json: the summary describes the dataset, it does not list it.
        "dataset": {k: v for k, v in (metadata.get("dataset") or {}).items() if k != "item_ids"},
        "headline_metrics": [{"key": key, "higher_is_better": up} for key, up in env.headline_metrics],
        "headline_breakdowns": [{"key": key, "title": title} for key, title in env.headline_breakdowns],
        "counts": _counts(records, ok),
        "metrics": computed["metrics"],
        "intervals": computed["intervals"],
        "breakdowns": computed["breakdowns"],
        "constant_policy": computed["constant_policy"],
        "failure_examples": [e.model_dump() for e in failure_examples(ok, env.example_fields)],
        "usage": usage_and_cost(records, metadata),
        "latency_s": _latency(records),
        "warnings": _warnings(env, records),
    }
    if not ok:
        summary["note"] = NO_SCORED_NOTE
    json.dumps(summary, allow_nan=False)  # fail here, not in a reader, if a NaN or non-JSON value slipped in
    return summary
