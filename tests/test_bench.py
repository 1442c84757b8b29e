"""``sv bench``: which baselines it runs, and that its parallel processes give the one-process leaderboard."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from security_verifiers.bench import bench_baselines, run_bench
from security_verifiers.core.errors import ConfigError
from security_verifiers.envs.base import get_env

CHEAP = ["redteam-defense", "redteam-attack"]


def _rewards(out: Path) -> dict[tuple[str, str], float]:
    board = json.loads((out / "leaderboard.json").read_text())
    return {(table, row["policy"]): row["reward_mean"]
            for table, body in board["envs"].items() for row in body["rows"] if row.get("rank") != "floor"}


def test_the_shortlist_keeps_reference_and_honest_baselines_and_drops_only_other_hacks() -> None:
    env = get_env("code-repair")
    short = bench_baselines(env)
    assert env.bench_hacks is not None
    assert short[0] == "reference" and set(env.honest_baselines) <= set(short)
    assert set(short) - {"reference", *env.honest_baselines} == set(env.bench_hacks)
    assert bench_baselines(env, all_baselines=True) == list(env.baselines())
    every = get_env("phishing")  # no shortlist: every hack runs
    assert every.bench_hacks is None and bench_baselines(every) == list(every.baselines())


def test_parallel_bench_gives_the_sequential_leaderboard(tmp_path: Path) -> None:
    assert run_bench(tmp_path / "one", CHEAP, jobs=1) == 0
    assert run_bench(tmp_path / "two", CHEAP, jobs=2) == 0
    one, two = _rewards(tmp_path / "one"), _rewards(tmp_path / "two")
    expected = sum(len(bench_baselines(get_env(name))) * len(get_env(name).public_splits) for name in CHEAP)
    assert len(one) == expected and one == two
    assert {table.split(" · ")[0] for table, _ in two} == set(CHEAP)


def test_bad_jobs_and_unknown_environments_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--jobs"):
        run_bench(tmp_path, CHEAP, jobs=0)
    with pytest.raises(ConfigError, match="unknown environment"):
        run_bench(tmp_path, ["no-such-env"])


def test_robust_bench_pairs_every_bench_baseline_with_its_rewrites(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    env = get_env("redteam-defense")
    whole = type(env).dataset

    def first_items(self: Any, split: str, n: int | None = None, seed: int | None = None) -> Any:
        # the robust split is built from this test split, so it holds the rewrites of these items only
        return whole(self, split, n, seed) if split == "robust" else whole(self, split, n, seed).head(12)

    monkeypatch.setattr(type(env), "public_splits", ("test",))
    monkeypatch.setattr(type(env), "dataset", first_items)
    assert run_bench(tmp_path, ["redteam-defense"], jobs=1, robust=True) == 0
    rows = json.loads((tmp_path / "robustness.json").read_text())
    assert [row["policy"] for row in rows] == [f"baseline:{name}" for name in bench_baselines(env)]
    kinds = {rewrite.kind for rewrite in env.rewrites()}
    for row in rows:
        assert set(row["kinds"]) == kinds and all(k["items"] > 0 for k in row["kinds"].values())
    table = (tmp_path / "robustness.md").read_text()
    assert "## redteam-defense" in table and "| baseline:reference | paraphrased_injection |" in table
    assert "redteam-defense · robust" not in json.dumps(json.loads((tmp_path / "leaderboard.json").read_text()))
