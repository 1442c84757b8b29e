"""``report.md``: the human-readable form of ``summary.json``, with the plots linked next to it.

Beside the numbers it gives what a reader needs to judge them: the reward of the best constant answer on the
same items (so a high-looking mean can be seen to be a floor), the breakdowns an environment's headline hides
(E2's recall per severity), a mark on breakdown rows too small to read, and a few example failures.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from security_verifiers.core.metrics_report import CONSTANT_REWARD, ROW_FLAGS, MetricsReport, fmt
from security_verifiers.envs.base import Environment
from security_verifiers.report.failures import ANSWER_CHARS

#: A breakdown with more columns than this is printed transposed (metrics as rows) to stay readable.
MAX_BREAKDOWN_COLUMNS = 10
#: The mark on a breakdown row that one of :data:`ROW_FLAGS` flags.
FEW_MARK = "†"


def md_table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A GitHub-flavoured markdown table; pipes inside cells are escaped.

    >>> print(md_table(["a", "b"], [[1, None]]))
    | a | b |
    |---|---|
    | 1 | n/a |
    """
    def line(cells: Iterable[Any]) -> str:
        return "| " + " | ".join(fmt(c).replace("|", "\\|") for c in cells) + " |"

    return "\n".join([line(headers), "|" + "|".join("---" for _ in headers) + "|", *(line(r) for r in rows)])


def _breakdown_table(groups: dict[str, dict[str, Any]]) -> str:
    """One breakdown as a table; a row flagged in :data:`ROW_FLAGS` gets :data:`FEW_MARK` after its name and a
    footnote under the table (the flags themselves are not columns)."""
    flagged = {name: [f for f in ROW_FLAGS if row.get(f)] for name, row in groups.items()}
    names = {name: name + (FEW_MARK if flagged[name] else "") for name in groups}
    keys = [k for k in dict.fromkeys(k for row in groups.values() for k in row) if k not in ROW_FLAGS]
    if len(keys) > MAX_BREAKDOWN_COLUMNS:
        table = md_table(["metric", *names.values()], ([k, *(row.get(k) for row in groups.values())] for k in keys))
    else:
        table = md_table(["group", *keys], ([names[name], *(row.get(k) for k in keys)] for name, row in groups.items()))
    used = [ROW_FLAGS[f] for f in ROW_FLAGS if any(f in flags for flags in flagged.values())]
    if used:
        table += f"\n\n{FEW_MARK} {' / '.join(used)}: too few to read as more than an anecdote."
    return table


def _header(env: Environment, summary: dict[str, Any]) -> list[str]:
    config, dataset = summary["env"].get("config"), summary.get("dataset") or {}
    lines = [f"# {env.name} {env.version} — {summary.get('model') or 'unknown model'}", "",
             f"- Environment: `{env.name}` version {env.version}",
             f"- Model: `{summary.get('model')}`",
             f"- Run id: `{summary.get('run_id')}` (status: {summary.get('status') or 'unknown'}"
             f"{' — ' + summary['status_detail'] if summary.get('status_detail') else ''})"]
    lines += [f"- Dataset {key}: `{', '.join(map(str, value)) if isinstance(value, list) else value}`"
              for key, value in dataset.items()]
    if config:
        lines.append(f"- Config: `{config}`")
    return lines


def _incomplete(summary: dict[str, Any]) -> list[str]:
    """A warning above everything else when the run stopped early or lacks rollouts: its metrics are not final."""
    if summary.get("complete", True):  # a summary written before completeness was recorded says nothing of it
        return []
    expected, missing = summary.get("expected_rollouts"), summary.get("missing_rollouts")
    held = f"{expected - missing} of {expected} rollouts" if expected is not None and missing is not None \
        else f"{summary['counts']['rollouts']} rollouts"
    return ["", f"> **Incomplete run** (status: {summary.get('status') or 'unknown'}): it holds {held}. The metrics "
            "below cover only those; continue it with `sv eval --resume --run-id "
            f"{summary.get('run_id')}` before reading them as final."]


def _counts(summary: dict[str, Any]) -> list[str]:
    c = summary["counts"]
    lines = ["", "## Counts", "",
             f"{c['rollouts']} rollouts: {c['scored']} scored, {c['errors']} errored "
             f"(error rate {fmt(c['error_rate'])}).",
             "",
             "Errored rollouts are infrastructure failures (provider, timeout, tool, sandbox, scorer). "
             "They are **excluded from every metric below**, not scored as wrong answers. "
             "Answers that could not be parsed are the model's fault: they are scored at the minimum reward "
             f"({c['parse_failures']} parse failures)."]
    if c["errors_by_kind"]:
        examples = c.get("error_examples") or {}  # absent in summaries written before it was added
        lines += ["", md_table(["error kind", "count", "example message"],
                               ([kind, n, examples.get(kind)] for kind, n in c["errors_by_kind"].items()))]
    if c["parse_failures_by_status"]:
        lines += ["", md_table(["parse status", "count"], c["parse_failures_by_status"].items())]
    return lines


def _metrics(summary: dict[str, Any]) -> list[str]:
    report = MetricsReport.from_summary(summary)
    metrics, intervals = report.metrics, report.intervals
    if not metrics:
        return ["", "## Metrics", "", summary.get("note", "No metrics.")]
    headline = [[row.key, row.arrow, row.value, row.interval] for row in report.headline(_headline_keys(summary))]
    return ["", "## Headline metrics", "",
            "95% intervals: percentile bootstrap over items (all rollouts of a drawn item together).", "",
            md_table(["metric", "better", "value", "95% CI"], headline),
            *_constant(report), *_headline_breakdowns(summary),
            "", "## All metrics", "",
            md_table(["metric", "value", "95% CI"], ([k, v, intervals.get(k)] for k, v in metrics.items()))]


def _constant(report: MetricsReport) -> list[str]:
    """The constant floor under the headline: what answering the same thing to every item earns here."""
    constant = report.constant_policy
    if constant is None:
        return []
    run = report.metrics.get("reward_mean")
    versus = f"; this run: {fmt(run)} ({run - constant.reward_mean:+.4f})" if isinstance(run, float | int) else ""
    return ["", f"**Constant floor:** answering `{constant.answer}` to every item (`{constant.policy}`) earns "
                f"reward_mean **{fmt(constant.reward_mean)}** on these items{versus}. {constant.note} "
                f"(`{CONSTANT_REWARD}` in `summary.json`.)"]


def _headline_keys(summary: dict[str, Any]) -> list[tuple[str, bool]]:
    return [(h["key"], h["higher_is_better"]) for h in summary["headline_metrics"]]


def _headline_breakdowns(summary: dict[str, Any]) -> list[str]:
    """The breakdowns the environment shows under its headline (absent from older summaries: none)."""
    lines: list[str] = []
    for shown in summary.get("headline_breakdowns") or []:
        groups = summary["breakdowns"].get(shown["key"])
        if groups:
            lines += ["", f"### {shown['title']}", "", _breakdown_table(groups)]
    return lines


def _breakdowns(summary: dict[str, Any]) -> list[str]:
    shown = {b["key"] for b in summary.get("headline_breakdowns") or []}
    lines: list[str] = []
    for name, groups in summary["breakdowns"].items():
        if groups and name not in shown:
            lines += ["", f"### By {name}", "", _breakdown_table(groups)]
    return ["", "## Breakdowns", *lines] if lines else []


def _fence(text: str) -> str:
    """A code fence longer than any backtick run in ``text``, so an answer cannot close its own block."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _value(value: Any) -> str:
    """An outcome field in an example's line: numbers as in the tables, strings bare, the rest as JSON."""
    if isinstance(value, float | int) and not isinstance(value, bool) or value is None:
        return fmt(value)
    return value if isinstance(value, str) else json.dumps(value)


def _failures(summary: dict[str, Any]) -> list[str]:
    """Up to five example failures (see :mod:`.failures`), each with its outcome's key fields and its answer."""
    examples = summary.get("failure_examples")
    if examples is None or not summary.get("metrics"):  # an older summary, or nothing scored
        return []
    lines = ["", "## Example failures", ""]
    if not examples:
        return [*lines, "None: every scored rollout parsed and earned the same reward."]
    lines += [f"The {len(examples)} lowest-reward scored rollouts, one per item and one per mistake (unparsed answers "
              f"first); the answer is cut to {ANSWER_CHARS} characters. Every rollout is in `results.jsonl` and "
              "`view.html`.", ""]
    for example in examples:
        fields = "; ".join(f"{k}={_value(v)}" for k, v in example["outcome"].items())
        if len(fields) > ANSWER_CHARS:
            fields = fields[:ANSWER_CHARS - 1] + "…"
        alike = f" (and {example['alike']} more item(s) alike)" if example.get("alike") else ""
        cut = f" (its first {ANSWER_CHARS} of {example['answer_chars']} characters)" \
            if example["answer_chars"] > len(example["answer"]) else ""
        text = example["answer"] or "(empty answer)"
        fence = _fence(text)
        lines += [f"- `{example['item_id']}` sample {example['sample']}{alike}: reward {fmt(example['reward'])}, "
                  f"parse {example['parse_status']}", ""]
        if fields:
            lines += [f"  {fields}", ""]
        lines += [f"  Answer{cut}:", "", f"  {fence}text", *(f"  {line}" for line in text.splitlines()),
                  f"  {fence}", ""]
    return lines


def write_report(run_dir: Path, env: Environment, summary: dict[str, Any], plots: list[Path]) -> Path:
    """Write ``run_dir/report.md`` from ``summary``; plots are linked relative to ``run_dir``."""
    run_dir = Path(run_dir)
    lines = _header(env, summary) + _incomplete(summary)
    if summary.get("warnings"):
        lines += ["", "## Warnings", "", *(f"- {w}" for w in summary["warnings"])]
    lines += _counts(summary) + _metrics(summary) + _breakdowns(summary) + _failures(summary)
    if plots:
        lines += ["", "## Plots", ""]
        for plot in plots:
            rel = Path(os.path.relpath(Path(plot).resolve(), run_dir.resolve())).as_posix()
            lines += [f"![{Path(plot).stem}]({rel})", ""]
    u, lat = summary["usage"], summary["latency_s"]
    lines += ["", "## Usage", "",
              f"{u['prompt_tokens']} prompt tokens, {u['completion_tokens']} completion tokens "
              "(all rollouts, errored ones included). "
              f"Latency of uncached rollouts: mean {fmt(lat['mean'])} s, p50 {fmt(lat['p50'])} s, "
              f"p95 {fmt(lat['p95'])} s.", ""]
    path = run_dir / "report.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
