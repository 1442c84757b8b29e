"""`sv eval --shard i/N` and `sv merge`: disjoint parts that cover every item, joined into the run a single process
would have made; parts that are not one evaluation are refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from security_verifiers.cli import main
from security_verifiers.core.errors import ConfigError
from security_verifiers.core.shard import Shard
from security_verifiers.report.merge import merge_runs

MODEL = "baseline:heuristic"


def _eval(out: Path, run_id: str, *extra: str) -> Path:
    assert main(["eval", "network-logs", "--model", MODEL, "--split", "test", "--out", str(out), "--run-id", run_id,
                 "--quiet", *extra]) == 0
    return out / "evals" / "network-logs--baseline-heuristic" / run_id


def _summary(run: Path) -> dict:
    return json.loads((run / "summary.json").read_text())


def test_shards_partition_the_items_and_merge_into_the_whole_run(tmp_path: Path) -> None:
    whole = _eval(tmp_path, "whole")
    parts = [_eval(tmp_path, f"s{i}", "--shard", f"{i}/3") for i in range(3)]
    ids = [json.loads((p / "metadata.json").read_text())["dataset"]["item_ids"] for p in parts]
    assert sum(map(len, ids)) == 200 and len(set().union(*map(set, ids))) == 200 and all(ids)
    assert main(["merge", *map(str, reversed(parts)), "--out", str(tmp_path / "merged")]) == 0
    merged, alone = _summary(tmp_path / "merged"), _summary(whole)
    assert merged["metrics"] == alone["metrics"]
    metadata = json.loads((tmp_path / "merged" / "metadata.json").read_text())
    assert metadata["dataset"]["hash"] == json.loads((whole / "metadata.json").read_text())["dataset"]["hash"]
    assert [p["index"] for p in metadata["merged"]["parts"]] == [0, 1, 2]
    assert metadata["rollouts"]["total"] == 200 and (tmp_path / "merged" / "report.md").is_file()


def test_parts_that_are_not_one_evaluation_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    parts = [_eval(tmp_path, f"s{i}", "--shard", f"{i}/2", "--limit", "40") for i in range(2)]
    with pytest.raises(ConfigError, match=r"shard\(s\) 1/2 missing"):
        merge_runs(parts[:1], tmp_path / "m1")
    with pytest.raises(ConfigError, match=r"given more than once"):
        merge_runs([parts[0], parts[0]], tmp_path / "m2")
    other = _eval(tmp_path, "w5", "--shard", "1/2", "--limit", "40", "--env-option", "window=5")
    with pytest.raises(ConfigError, match="differ in env"):
        merge_runs([parts[0], other], tmp_path / "m3")
    bigger = _eval(tmp_path, "l50", "--shard", "1/2", "--limit", "50")
    with pytest.raises(ConfigError, match="differ in shard.of"):
        merge_runs([parts[0], bigger], tmp_path / "m4")
    unsharded = _eval(tmp_path, "plain", "--limit", "40")
    with pytest.raises(ConfigError, match="not a shard's run"):
        merge_runs([parts[0], unsharded], tmp_path / "m5")
    forged = tmp_path / "forged"
    shutil.copytree(parts[1], forged)
    metadata = json.loads((forged / "metadata.json").read_text())
    metadata["dataset"]["item_ids"][0] = json.loads((parts[0] / "metadata.json").read_text())["dataset"]["item_ids"][0]
    (forged / "metadata.json").write_text(json.dumps(metadata))
    with pytest.raises(ConfigError, match="which is not in shard 1/2"):
        merge_runs([parts[0], forged], tmp_path / "m6")
    capsys.readouterr()
    for bad in ("2/2", "1/0", "a/b", "3"):
        assert main(["eval", "network-logs", "--model", MODEL, "--shard", bad, "--out", str(tmp_path)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("sv: error: --shard") and bad in err


def test_a_shard_is_a_function_of_the_id_alone() -> None:
    ids = [f"item-{i}" for i in range(1000)]
    parts = [[i for i in ids if Shard(index=k, count=4).holds(i)] for k in range(4)]
    assert sorted(sum(parts, [])) == sorted(ids) and min(map(len, parts)) > 200
    assert Shard.parse("1/4") == Shard(index=1, count=4) and Shard.parse(None) is None
