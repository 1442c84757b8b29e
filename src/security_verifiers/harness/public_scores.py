"""Every baseline's scores on the public splits, recorded per environment version: rewards are a public contract.

Each environment's ``data_dir`` holds ``baseline_scores.json`` beside the public sets it describes: for each public
split, the split's hash and, for every built-in baseline, its ``reward_mean`` and headline metrics, with the
environment's version. ``sv gate --record --env ENV`` writes it (:func:`write_record`). The conformance check
``reference_is_top_and_hacks_lose`` plays every baseline over every public split anyway; it also measures this table
from those same episodes and compares it with the record (:func:`record_problems`), so a change that moves a
baseline's score fails the suite, naming what moved, unless the environment's version was bumped and the file
recorded again in the same change. Baselines are deterministic, so the tolerance is tiny.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from statistics import fmean
from typing import Any

from security_verifiers.core.errors import ConfigError, InfraError
from security_verifiers.core.types import Item, Score
from security_verifiers.envs.base import Environment
from security_verifiers.harness.episode import play_episode, score_batch
from security_verifiers.models.base import Policy

RECORD_FILE = "baseline_scores.json"
RECORD_SCHEMA = 1
#: Largest difference between a measured and a recorded score that is not a change (the baselines are
#: deterministic: this only absorbs the last bits of floating-point sums).
TOLERANCE = 1e-9
#: Scores by split, then baseline, then metric.
ScoreTable = dict[str, dict[str, dict[str, float | None]]]


async def _play_and_score(env: Environment, policy: Policy, items: Sequence[Item]) -> list[Score]:
    """Play every episode, then score them in the environment's batches, as the runner does."""
    transcripts = []
    for item in items:
        record, transcript = await play_episode(env, policy, item)
        if transcript is None:
            raise AssertionError(f"{env.name}: {policy.name} hit an infrastructure error: {record.error}")
        transcripts.append(transcript)
    scores: list[Score] = []
    size = env.score_batch_size
    for start in range(0, len(items), size):
        for score in score_batch(env, list(items[start:start + size]), transcripts[start:start + size]):
            if isinstance(score, InfraError):
                raise AssertionError(f"{env.name}: scoring {policy.name} hit an infrastructure error: {score}")
            scores.append(score)
    return scores


def scored_baselines(env: Environment, items: Sequence[Item], names: Sequence[str]) -> dict[str, list[Score]]:
    """Each named baseline's scores on ``items``: a fresh policy, prepared on them, every episode played through the
    harness's episode loop."""
    factories = env.baselines()
    out: dict[str, list[Score]] = {}
    for name in names:
        policy = factories[name]()
        prepare = getattr(policy, "prepare", None)
        if callable(prepare):
            prepare(list(items))
        out[name] = asyncio.run(_play_and_score(env, policy, items))
    return out


def score_row(env: Environment, scores: Sequence[Score]) -> dict[str, float | None]:
    """``reward_mean`` (the mean of the rewards themselves, what a trainer is given) and the headline metrics of one
    baseline's scores, as its run's summary reports them (``None`` where a metric is undefined on these items)."""
    metrics = {**env.point_metrics([score.outcome for score in scores]),
               "reward_mean": fmean(score.reward for score in scores)}
    row: dict[str, float | None] = {}
    for key in dict.fromkeys(["reward_mean", *(key for key, _ in env.headline_metrics)]):
        value = metrics.get(key)
        row[key] = None if value is None or not math.isfinite(float(value)) else float(value)
    return row


def measure(env: Environment) -> tuple[ScoreTable, dict[str, str]]:
    """Every baseline's :func:`score_row` on every public split, and each split's dataset hash."""
    table: ScoreTable = {}
    hashes: dict[str, str] = {}
    for split in env.public_splits:
        dataset = env.dataset(split)
        hashes[split] = dataset.hash
        runs = scored_baselines(env, list(dataset.items), list(env.baselines()))
        table[split] = {name: score_row(env, scores) for name, scores in runs.items()}
    return table, hashes


def record_path(env: Environment) -> Path:
    return Path(env.data_dir) / RECORD_FILE


def read_record(env: Environment) -> dict[str, Any] | None:
    """The committed record of ``env``, or ``None`` when it has none."""
    path = record_path(env)
    if not path.is_file():
        return None
    record: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return record


def _record(env: Environment, table: ScoreTable, hashes: Mapping[str, str]) -> dict[str, Any]:
    return {
        "schema": RECORD_SCHEMA,
        "env": env.name,
        "version": env.version,
        "about": "Every built-in baseline's reward_mean and headline metrics on the committed public splits, as "
                 "this version of the environment scores them. A change that moves one bumps the environment's "
                 f"version and changelog and records this file again (`sv gate --record --env {env.name}`).",
        "splits": {split: {"dataset_hash": hashes[split], "baselines": table[split]} for split in table},
    }


def record_problems(env: Environment, table: ScoreTable, hashes: Mapping[str, str],
                    tolerance: float = TOLERANCE, most: int = 20) -> list[str]:
    """What differs between the measured ``table`` (and split ``hashes``) and ``env``'s committed record, one line
    each (the first ``most``), then what to do; empty when they agree. A record of another version is one problem:
    record the file again."""
    problems = _problems(env, table, hashes, tolerance)
    if not problems:
        return []
    lines = [line for _, line in problems[:most]]
    if len(problems) > most:
        lines.append(f"... and {len(problems) - most} more")
    if any(moved for moved, _ in problems):
        lines.append(f"A change that moves a baseline's score (the reward, the metrics or the public sets) bumps "
                     f"{env.name}'s version and its changelog says what moved; then record the file again in the "
                     f"same change (`sv gate --record --env {env.name}`).")
    return lines


def _problems(env: Environment, table: ScoreTable, hashes: Mapping[str, str],
              tolerance: float) -> list[tuple[bool, str]]:
    """:func:`record_problems`, each with whether it is a moved score (or hash) of the recorded version."""
    record, where = read_record(env), record_path(env)
    again = f"`sv gate --record --env {env.name}`"
    if record is None:
        return [(False, f"{env.name} has no recorded baseline scores ({where}): record them with {again} and commit "
                 "the file")]
    if record.get("version") != env.version:
        return [(False, f"{where} records {env.name} {record.get('version')}, this code is {env.name} {env.version}: "
                f"a new version's scores are recorded in the same change: run {again}, and say what moved in the "
                "environment's changelog")]
    problems: list[tuple[bool, str]] = []
    recorded_splits = record.get("splits") or {}
    for split in _on_both(f"{env.name} {env.version}: public split", recorded_splits, table, again, problems):
        entry = recorded_splits[split]
        if entry.get("dataset_hash") != hashes.get(split):
            problems.append((True, f"{env.name} {env.version} {split}: the public split's hash is "
                            f"{hashes.get(split)}, the record's {entry.get('dataset_hash')}"))
        recorded, measured = entry.get("baselines") or {}, table[split]
        for name in _on_both(f"{env.name} {env.version} {split}: baseline", recorded, measured, again, problems):
            for key in _on_both(f"{env.name} {env.version} {split} {name}: metric", recorded[name], measured[name],
                                again, problems):
                if _moved(recorded[name][key], measured[name][key], tolerance):
                    problems.append((True, f"{env.name} {env.version} {split} {name}: {key} is "
                                    f"{measured[name][key]!r}, recorded {recorded[name][key]!r}"))
    return problems


def _on_both(what: str, recorded: Mapping[str, Any], measured: Mapping[str, Any], again: str,
             problems: list[tuple[bool, str]]) -> list[str]:
    """The keys both sides hold, sorted; each key only one side holds becomes a problem (not a moved score: the
    file is recorded again)."""
    for key in sorted(set(recorded) ^ set(measured)):
        state = "not recorded" if key not in recorded else "recorded but gone"
        problems.append((False, f"{what} {key} is {state}: record the file again ({again})"))
    return sorted(set(recorded) & set(measured))


def _moved(recorded: float | None, measured: float | None, tolerance: float) -> bool:
    if recorded is None or measured is None:
        return (recorded is None) != (measured is None)
    return abs(recorded - measured) > tolerance


def write_record(env: Environment, table: ScoreTable, hashes: Mapping[str, str]) -> Path:
    """Write ``env``'s record of ``table``. Refused when the committed record is of this same version and a score in
    it moved: the version is bumped first (a new metric or baseline, with nothing moved, is recorded as is)."""
    record = read_record(env)
    if record is not None and record.get("version") == env.version:
        moved = [line for is_move, line in _problems(env, table, hashes, TOLERANCE) if is_move]
        if moved:
            raise ConfigError(f"{len(moved)} recorded score(s) of {env.name} {env.version} moved (first: {moved[0]}): "
                              f"bump {env.name}'s version and say what moved in its changelog, then record again")
    path = record_path(env)
    path.write_text(json.dumps(_record(env, table, hashes), indent=2) + "\n", encoding="utf-8")
    return path
