"""Leaderboard: one table per environment, one row per run, ranked by mean reward.

Built from ``summary.json`` files only. The columns are the environment's headline metrics as the
summaries record them; rows of different environment versions are kept but flagged, because their
scores come from different scorers. Each table also shows its runs' constant floor (the reward of the best
answer that ignores the item, on the same items: :class:`~security_verifiers.core.metrics_report.ConstantPolicy`)
as an unranked row in its place by reward, so a policy below it reads as what it is. A table whose runs record no
floor says so under it (code-repair defines no constant answer; a served red-team target gives none), and a floor
that only some runs record names the runs it belongs to.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.table import Table

from security_verifiers.core.metrics_report import CONSTANT_REWARD, MetricsReport, fmt
from security_verifiers.envs.base import Environment
from security_verifiers.report.markdown import md_table

LEADERBOARD_SCHEMA_VERSION = 1
RANK_KEY = "reward_mean"
#: The rank cell of a constant-floor row: it is a reference, not a contestant.
FLOOR = "floor"


def _row(entry: dict[str, Any], columns: list[str]) -> dict[str, Any]:
    summary = entry["summary"]
    # Only the metrics and their intervals: the floor is the table's (``_constants``), whichever key carries it.
    report = MetricsReport(metrics={k: v for k, v in (summary.get("metrics") or {}).items() if k != CONSTANT_REWARD},
                           intervals=summary.get("intervals") or {})
    reward = report.intervals.get(RANK_KEY)
    return {
        "policy": entry["policy"] + _incomplete_marker(summary),
        "complete": summary.get("complete", True),
        "run_dir": str(entry["run_dir"]),
        "model": summary.get("model"),
        "env_version": summary["env"]["version"],
        **{row.key: row.value for row in report.headline([(key, True) for key in columns])},
        "reward_ci": list(reward) if reward is not None else None,
        "errors": summary["counts"]["errors"],
    }


def _incomplete_marker(summary: dict[str, Any]) -> str:
    """`` (incomplete 80/100)`` for a stopped or truncated run, so its row does not read as a final score."""
    if summary.get("complete", True):
        return ""
    expected, missing = summary.get("expected_rollouts"), summary.get("missing_rollouts")
    if expected is None or missing is None:
        return f" (incomplete: {summary.get('status') or 'unknown'})"
    return f" (incomplete {expected - missing}/{expected})"


def _constant(summary: dict[str, Any]) -> tuple[str, str, float] | None:
    """``(policy, answer, reward)`` of a summary's constant floor: its ``constant_policy``, else the flat
    ``metrics.constant_reward`` alone (a summary that kept only the number); ``None`` when it records neither."""
    constant = summary.get("constant_policy")
    if constant is not None and constant.get("reward_mean") is not None:
        return constant.get("policy") or "constant", constant.get("answer") or "", constant["reward_mean"]
    flat = (summary.get("metrics") or {}).get(CONSTANT_REWARD)
    return None if flat is None else ("constant", "", flat)


def _constants(group: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The constant floors of one table's runs, one per distinct constant: runs on the same items share it. When
    the runs' items differ (another dataset, errored rollouts left out), or some runs record no floor, each floor
    names the runs it belongs to."""
    found: dict[tuple[str, str, float], list[str]] = {}
    for entry in group:
        constant = _constant(entry["summary"])
        if constant is not None:
            found.setdefault(constant, []).append(entry["policy"])
    named = len(found) > 1 or sum(map(len, found.values())) < len(group)
    return [{"policy": policy, "answer": answer, RANK_KEY: reward, "runs": sorted(runs) if named else None}
            for (policy, answer, reward), runs in sorted(found.items(), key=lambda kv: -kv[0][2])]


def _floor_note(name: str, group: list[dict[str, Any]]) -> str | None:
    """What the table says about the runs without a constant floor; ``None`` when every run has one."""
    without = sorted(e["policy"] for e in group if _constant(e["summary"]) is None)
    if not without:
        return None
    if len(without) < len(group):
        return f"no constant floor for {', '.join(without)}: their summaries record none"
    if any(CONSTANT_REWARD in (e["summary"].get("metrics") or {}) for e in group):
        return (f"no constant floor: {name} computes one, but none for these runs' items (a served target, or "
                "no scored rollout)")
    return (f"no constant floor: {name} defines no constant answer (or its summaries predate floors), so these "
            "rewards have no floor to be read against")


def _rank(row: dict[str, Any]) -> tuple[bool, float, str]:
    """Sort key: highest mean reward first, runs without one last, ties by policy name."""
    reward = row.get(RANK_KEY)
    return reward is None, -(reward or 0.0), str(row["policy"])


def build_leaderboard(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """The leaderboard of ``entries`` (``{"env", "policy", "run_dir", "summary"}`` each), by environment.

    ``env`` is the environment's name (or the environment itself).
    """
    by_env: dict[str, list[dict[str, Any]]] = {}
    for entry in entries:
        env = entry["env"]
        by_env.setdefault(env.name if isinstance(env, Environment) else str(env), []).append(entry)
    envs: dict[str, Any] = {}
    for name in sorted(by_env):
        group = by_env[name]
        headline = group[0]["summary"]["headline_metrics"]
        columns = [h["key"] for h in headline]
        rows = sorted((_row(e, columns) for e in group), key=_rank)
        versions = sorted({r["env_version"] for r in rows})
        envs[name] = {
            "columns": columns,
            "higher_is_better": {h["key"]: h["higher_is_better"] for h in headline},
            "rows": rows,
            "constants": _constants(group),
            "floor_note": _floor_note(name, group),
            "warnings": [f"rows come from versions {', '.join(versions)} of {name}; "
                         "their scores are not comparable"] if len(versions) > 1 else [],
        }
    return {"schema_version": LEADERBOARD_SCHEMA_VERSION,
            "generated_at": datetime.now(UTC).isoformat(timespec="seconds"), "envs": envs}


def _headers(table: dict[str, Any]) -> list[str]:
    arrows = [f"{k} {'↑' if table['higher_is_better'][k] else '↓'}" for k in table["columns"]]
    return ["#", "policy", *arrows, "reward 95% CI", "errors", "run"]


def _cells(table: dict[str, Any], answers: bool = True) -> list[list[Any]]:
    """The ranked rows, with each constant floor (unranked, marked :data:`FLOOR`) placed below the runs that
    reach its reward and above those that do not; ``answers``: name the floor's answer text too (the files do, the
    terminal, short of width, names the policy only)."""
    cells: list[list[Any]] = []
    floors = list(table.get("constants") or [])  # absent from leaderboards written before floors existed

    def floor_cells(reward: float | None) -> None:
        while floors and (reward is None or floors[0][RANK_KEY] > reward):
            floor = floors.pop(0)
            runs = f" (for {', '.join(floor['runs'])})" if floor["runs"] else ""
            answer = f" {floor['answer']}" if answers else ""
            cells.append([FLOOR, f"constant floor: {floor['policy']}{answer}{runs}",
                          *(floor[RANK_KEY] if k == RANK_KEY else None for k in table["columns"]), None, None, ""])

    for rank, row in enumerate(table["rows"], start=1):
        floor_cells(row.get(RANK_KEY))
        cells.append([rank, row["policy"], *(row[k] for k in table["columns"]), row["reward_ci"], row["errors"],
                      row["run_dir"]])
    floor_cells(None)
    return cells


def write_leaderboard(board: dict[str, Any], out_dir: Path) -> tuple[Path, Path]:
    """Write ``leaderboard.md`` (one table per environment) and ``leaderboard.json`` into ``out_dir``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    lines = ["# Leaderboard", "",
             f"Generated {board['generated_at']}. Ranked by `{RANK_KEY}`; the interval is a 95% percentile "
             "bootstrap. Errored rollouts are excluded from each score and counted under *errors*. A "
             f"*{FLOOR}* row is not a run and has no rank: it is what one answer given to every item earns on the same "
             "items (network-logs: the best such answer; config-audit: the empty one), so a run below it does worse "
             "than ignoring its input."]
    for name, table in board["envs"].items():
        lines += ["", f"## {name}", ""]
        for warning in table["warnings"]:
            lines += [f"> **Warning:** {warning}", ""]
        lines.append(md_table(_headers(table), _cells(table)))
        if table.get("floor_note"):
            lines += ["", f"*{FLOOR}*: {table['floor_note']}."]
    md_path, json_path = out_dir / "leaderboard.md", out_dir / "leaderboard.json"
    md_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    json_path.write_text(json.dumps(board, indent=2, allow_nan=False) + "\n", encoding="utf-8")
    return md_path, json_path


def render_table(board: dict[str, Any]) -> list[Table]:
    """One ``rich`` table per environment, for printing to a terminal."""
    tables = []
    for name, table in board["envs"].items():
        caption = "; ".join([*table["warnings"], *filter(None, [table.get("floor_note")])]) or None
        rich_table = Table(title=f"{name} leaderboard", caption=caption)
        for header in _headers(table)[:-1]:  # the run path is in the files, not the terminal
            # A policy name is folded onto more lines when the terminal is narrow, never cut with an ellipsis.
            rich_table.add_column(header, justify="left" if header == "policy" else "right",
                                  overflow="fold" if header == "policy" else "ellipsis")
        for cells in _cells(table, answers=False):
            rich_table.add_row(*(fmt(c) for c in cells[:-1]))
        tables.append(rich_table)
    return tables
