"""``sv merge``: one run from the runs of ``sv eval --shard i/N`` (a Slurm array, a CI matrix, several machines).

The parts must be one evaluation cut in N: the same environment (name, version, config), model, sampling, number
of samples and timeout, the same scanner versions (they are part of the reward), shards of the same dataset (id
and hash) with the same N, every index from 0 to N-1 exactly once, each finished, and each holding exactly the
items its shard owns. Anything else is refused, naming the part and the field: a merged run that mixed two
rewards would report a number nobody measured. The merged run's ``results.jsonl`` holds every part's records, its
``metadata.json`` the whole dataset, the parts (run directory, host, code version) and the sums of their counts;
its summary, report and view are written as ``sv report`` writes them.

Nothing holds every record whole: the parts are read without their conversations (to check them) and each chosen
record's line is then copied as it was written, so a merge of 100,000 rollouts needs memory for their outcomes only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from security_verifiers.core.errors import ConfigError
from security_verifiers.core.rundir import RunDir, copy_lines, latest_positions, read_results_file
from security_verifiers.core.shard import Shard
from security_verifiers.report.compare import load_metadata

#: What every part must agree on (a path into metadata.json) for their scores to be one measurement.
AGREE = (("env",), ("model",), ("policy",), ("tools",), ("run", "samples"), ("run", "timeout_s"),
         ("invocation", "sampling"), ("invocation", "endpoint"), ("shard", "count"), ("shard", "of"))


def _get(metadata: dict[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = metadata
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _sum_counts(values: Sequence[dict[str, int]]) -> dict[str, int]:
    total: Counter[str] = Counter()
    for value in values:
        total.update(value or {})
    return dict(total)


def merge_runs(parts: Sequence[Path], out: Path) -> Path:
    """Write the merged run of ``parts`` to ``out`` (a new directory); returns it."""
    if len(parts) < 1:
        raise ConfigError("sv merge needs the run directories of the shards")
    if out.exists() and any(out.iterdir()):
        raise ConfigError(f"--out {out} exists and is not empty; give a new directory")
    loaded = [(path, load_metadata(path)) for path in parts]
    first_path, first = loaded[0]
    for path, metadata in loaded:
        if metadata.get("shard") is None:
            raise ConfigError(f"{path} is not a shard's run (made without --shard i/N)")
        if metadata.get("status") != "finished":
            raise ConfigError(f"{path} is {metadata.get('status')!r}, not finished: complete it with `sv eval "
                              "--resume` first")
        for field in AGREE:
            if _get(metadata, field) != _get(first, field):
                raise ConfigError(f"{path} and {first_path} differ in {'.'.join(field)} ({_get(metadata, field)!r} "
                                  f"against {_get(first, field)!r}): they are not parts of one evaluation")
    count = first["shard"]["count"]
    indices = Counter(metadata["shard"]["index"] for _, metadata in loaded)
    if twice := sorted(i for i, n in indices.items() if n > 1):
        raise ConfigError(f"shard(s) {', '.join(map(str, twice))} given more than once")
    if missing := sorted(set(range(count)) - set(indices)):
        raise ConfigError(f"shard(s) {', '.join(f'{i}/{count}' for i in missing)} missing: {len(indices)} of "
                          f"{count} given")
    lines: list[tuple[int, int, Path, int]] = []  # (the item's place in the dataset, sample, results file, offset)
    position: dict[str, int] = {}
    for path, metadata in sorted(loaded, key=lambda part: part[1]["shard"]["index"]):
        shard = Shard(index=metadata["shard"]["index"], count=count)
        ids = metadata["dataset"]["item_ids"]
        if stray := [i for i in ids if not shard.holds(i)]:
            raise ConfigError(f"{path} holds item {stray[0]!r}, which is not in shard {shard.index}/{count}")
        if len(metadata["shard"].get("positions") or ()) != len(ids):
            raise ConfigError(f"{path} does not record where its {len(ids)} items sit in the dataset")
        position.update(zip(ids, metadata["shard"]["positions"], strict=True))
        results = read_results_file(path / "results.jsonl", transcripts=False)
        if results.cut_line is not None:
            raise ConfigError(f"{path}/results.jsonl ends in a cut line ({results.cut_line}): resume that shard")
        kept = latest_positions(results)
        if {results.records[k].item_id for k in kept} != set(ids):
            raise ConfigError(f"{path}/results.jsonl does not hold exactly its dataset's items")
        assert results.offsets is not None  # read from disk
        lines += [(position[results.records[k].item_id], results.records[k].sample, path / "results.jsonl",
                   results.offsets[k]) for k in kept]
    whole = first["shard"]["of"]
    item_ids = sorted(position, key=position.__getitem__)  # the dataset's order
    if len(item_ids) != whole["n"] or sorted(position.values()) != list(range(whole["n"])):
        raise ConfigError(f"the shards hold {len(item_ids)} items at positions that do not make up the dataset "
                          f"{whole['id']} of {whole['n']}")
    lines.sort(key=lambda line: (line[0], line[1]))
    metadatas = [metadata for _, metadata in loaded]
    merged = {key: value for key, value in first.items() if key != "shard"}
    merged.update({
        "run_id": out.name,
        "dataset": {**first["dataset"], "id": whole["id"], "hash": whole["hash"], "n": whole["n"],
                    "item_ids": item_ids},
        "merged": {"count": count, "parts": [
            {"index": m["shard"]["index"], "run": str(p.resolve()), "run_id": m.get("run_id"), "code": m.get("code"),
             "host": (m.get("process") or {}).get("host"), "seconds": m.get("seconds")}
            for p, m in sorted(loaded, key=lambda part: part[1]["shard"]["index"])]},
        "started_at": min(m.get("started_at") or "" for m in metadatas) or None,
        "finished_at": max(m.get("finished_at") or "" for m in metadatas) or None,
        "seconds": max(m.get("seconds") or 0.0 for m in metadatas),
        "cpu_seconds": sum(m.get("cpu_seconds") or 0.0 for m in metadatas),
        "rollouts": _sum_counts([m.get("rollouts") or {} for m in metadatas]),
        "errors": {"count": sum((m.get("errors") or {}).get("count", 0) for m in metadatas),
                   "by_kind": _sum_counts([(m.get("errors") or {}).get("by_kind") or {} for m in metadatas])},
        "retries": sum(m.get("retries") or 0 for m in metadatas),
        "usage": _sum_counts([m.get("usage") or {} for m in metadatas]),
    })
    if len({(m.get("code") or {}).get("git_sha") for m in metadatas}) > 1:
        merged["merged"]["note"] = "the parts ran different code versions (see parts[].code)"
    run_dir = RunDir(out)
    run_dir.write_metadata(merged)
    copy_lines([(source, offset) for _, _, source, offset in lines], run_dir.results_path)
    return out
