"""Scoring on a Ray cluster (``--executor ray``, harness/ray_pool.py): a local head on the loopback address with
two scorer actors gives the same results as the local pool on E2's and E3's public sets, and an actor killed
mid-run (SIGKILL) loses and duplicates nothing."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from security_verifiers.core.rundir import RunDir, read_results_file
from security_verifiers.envs.base import get_env
from security_verifiers.envs.code_repair.env import CodeRepair
from security_verifiers.harness.policies import resolve_policy
from security_verifiers.harness.runner import RunConfig, RunOutcome, run_eval
from security_verifiers.harness.scoring_pool import make_pool

pytestmark = pytest.mark.xdist_group("ray")  # one head for the module: every test of it on one xdist worker


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A Ray head of this machine on 127.0.0.1 with two CPUs (one per scorer actor), started as a user starts one
    (``ray start --head``), joined by this process as a driver; its address is ``cluster.address``."""
    import ray

    os.environ.setdefault("RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO", "0")
    port = _free_port()
    log = tmp_path_factory.mktemp("ray") / "head.log"
    ray_cli = Path(sys.executable).with_name("ray")
    head = subprocess.Popen([str(ray_cli), "start", "--head", "--block", "--node-ip-address=127.0.0.1",
                             f"--port={port}", "--num-cpus=2", "--include-dashboard=false", "--disable-usage-stats"],
                            stdout=log.open("w"), stderr=subprocess.STDOUT)
    address = f"127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                ray.init(address=address, log_to_driver=False, configure_logging=False)
                break
            except (ConnectionError, RuntimeError):
                if time.monotonic() > deadline or head.poll() is not None:
                    raise RuntimeError(f"the Ray head did not start: {log.read_text()[-2000:]}") from None
                time.sleep(1)
        ray.address = address  # type: ignore[attr-defined]
        yield ray
    finally:
        ray.shutdown()
        head.terminate()  # `ray start --block` stops the head's processes on SIGTERM
        head.wait(timeout=60)


def _run(env_name: str, model: str, out: Path, label: str, config: RunConfig, limit: int | None = None,
         pool: Any = None) -> tuple[RunOutcome, Path]:
    env = get_env(env_name)
    dataset = env.dataset("test")
    dataset = dataset.head(limit)
    policy = resolve_policy(model, env)
    run_dir = RunDir.for_run(out, env.name, model, label)
    outcome = asyncio.run(run_eval(env, policy, dataset, run_dir, config, model_name=model, progress=False,
                                   scorer_pool=pool))
    return outcome, run_dir.path


def _scored(run_dir: Path) -> dict[tuple[str, int], tuple[Any, ...]]:
    """Each rollout's score (reward, components, outcome without timings, parse status, error), by (item, sample);
    a rollout written twice fails here."""
    records = read_results_file(run_dir / "results.jsonl").records
    twice = [k for k, n in Counter((r.item_id, r.sample) for r in records).items() if n > 1]
    assert not twice, f"rollouts written twice: {twice[:3]}"
    return {(r.item_id, r.sample): (r.reward, r.components, {k: v for k, v in r.outcome.items() if "seconds" not in k},
                                    r.parse_status, r.error.kind if r.error else None) for r in records}


@pytest.mark.parametrize(("env_name", "model"), [("config-audit", "baseline:autofix"),
                                                 ("code-repair", "baseline:reference")])
def test_public_set_scored_through_ray_equals_the_local_pool(cluster: Any, tmp_path: Path, env_name: str,
                                                             model: str) -> None:
    local, local_dir = _run(env_name, model, tmp_path, "local", RunConfig(score_workers=1))
    remote, remote_dir = _run(env_name, model, tmp_path, "ray", RunConfig(executor="ray", score_workers=2))
    assert local.errors == remote.errors == 0
    assert local.done == remote.done == len(get_env(env_name).dataset("test"))
    assert _scored(remote_dir) == _scored(local_dir)
    meta = RunDir(remote_dir).read_metadata()
    assert meta["run"]["executor"] == "ray" and meta["status"] == "finished"


def test_an_actor_killed_mid_run_loses_and_duplicates_nothing(cluster: Any, tmp_path: Path) -> None:
    """``sv eval --executor ray --ray-address`` against the head; one scorer actor's process is killed (SIGKILL)
    once rollouts are being written: every rollout is written once, scored as the local pool scores it."""
    n = 60
    argv = [sys.executable, "-m", "security_verifiers.cli", "eval", "config-audit", "--model", "baseline:autofix",
            "--split", "test", "--limit", str(n), "--executor", "ray", "--score-workers", "2", "--ray-address",
            cluster.address, "--out", str(tmp_path), "--run-id", "killed", "--quiet"]
    run = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    victim = None
    deadline = time.monotonic() + 240
    while victim is None and run.poll() is None and time.monotonic() < deadline:
        written = sum(len(p.read_text().splitlines()) for p in tmp_path.glob("evals/*/killed/results.jsonl"))
        actors = _actor_pids()
        if written >= 5 and actors:
            victim = actors[0]
            os.kill(victim, signal.SIGKILL)
        time.sleep(0.05)
    _, stderr = run.communicate(timeout=600)
    assert run.returncode == 0, stderr[-2000:]
    assert victim is not None, "the run ended before an actor could be killed"
    assert victim not in _actor_pids()
    run_dir = next(tmp_path.glob("evals/*/killed"))
    meta = RunDir(run_dir).read_metadata()
    assert meta["status"] == "finished" and meta["errors"]["count"] == 0 and meta["rollouts"]["total"] == n
    _, local_dir = _run("config-audit", "baseline:autofix", tmp_path, "local", RunConfig(score_workers=1), limit=n)
    assert _scored(run_dir) == _scored(local_dir)  # every rollout once, each scored as the local pool scores it


def _actor_pids() -> list[int]:
    """Processes of live scorer actors (Ray titles an actor's process ``ray::_ScorerActor``)."""
    out = subprocess.run(["pgrep", "-f", "ray::_ScorerActor"], capture_output=True, text=True).stdout
    return [int(pid) for pid in out.split()]


def test_ray_is_refused_clearly_without_a_cluster_library(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    from security_verifiers.core.errors import ConfigError
    from security_verifiers.harness import ray_pool

    real_import = builtins.__import__

    def no_ray(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "ray" or name.startswith("ray."):
            raise ImportError("No module named 'ray'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ray)
    with pytest.raises(ConfigError, match=r"security-verifiers\[ray\]"):
        ray_pool.import_ray()


def test_a_trainer_reward_scored_on_the_cluster_equals_the_one_scored_here(cluster: Any, tmp_path: Path) -> None:
    """TRL's reward adapter sends scoring to the cluster (a trainer's GPU nodes need not score): same verdicts."""
    from security_verifiers.adapters.trl import EnvReward
    from security_verifiers.harness.ray_pool import RayScorerPool

    _, run_dir = _run("config-audit", "baseline:autofix", tmp_path, "answers", RunConfig(score_workers=1), limit=12)
    records = read_results_file(run_dir / "results.jsonl").records
    env = get_env("config-audit")
    items = env.dataset("test").head(12).items
    ids = [r.item_id for r in records]
    texts = [r.transcript.messages[-1].content for r in records if r.transcript is not None]
    pool = make_pool(env, "ray", 2)
    assert isinstance(pool, RayScorerPool)
    try:
        remote = EnvReward(env, items, pool).verdicts(ids, texts)
    finally:
        pool.close()
    here = EnvReward(env, items, None).verdicts(ids, texts)
    assert [(s.reward, s.components) for s in remote] == [(s.reward, s.components) for s in here]  # type: ignore[union-attr]
    assert [s.reward for s in here] == [r.reward for r in records]  # type: ignore[union-attr]


def test_bench_on_the_cluster_gives_the_local_leaderboard(cluster: Any, tmp_path: Path) -> None:
    from security_verifiers.bench import run_bench

    cheap = ["redteam-defense"]
    assert run_bench(tmp_path / "local", cheap, jobs=1) == 0
    assert run_bench(tmp_path / "ray", cheap, jobs=1, executor="ray") == 0

    def runs(out: Path) -> dict[str, dict[tuple[str, int], tuple[Any, ...]]]:
        return {str(d.relative_to(out)): _scored(d) for d in out.glob("evals/*/*") if d.is_dir()}

    local, remote = runs(tmp_path / "local"), runs(tmp_path / "ray")
    assert remote == local and len(local) == 2 * len(get_env("redteam-defense").baselines())
    meta = json.loads(next((tmp_path / "ray").glob("evals/*/*/metadata.json")).read_text())
    assert meta["status"] == "finished"


def test_hosts_without_our_flags_choose_the_cluster_by_a_variable(cluster: Any,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The verifiers and Inspect adapters score in shared_pool: SV_EXECUTOR=ray puts it on the cluster (every
    environment, in-process scorers too); another value is refused by name."""
    from security_verifiers.core.errors import ConfigError
    from security_verifiers.core.types import Transcript
    from security_verifiers.harness import scoring_pool
    from security_verifiers.harness.ray_pool import RayScorerPool

    env = get_env("network-logs")
    monkeypatch.setenv("SV_EXECUTOR", "cluster")
    with pytest.raises(ConfigError, match="SV_EXECUTOR"):
        scoring_pool.shared_pool(env)
    monkeypatch.setenv("SV_EXECUTOR", "ray")
    monkeypatch.setattr(scoring_pool, "_SHARED", {})
    pool = scoring_pool.shared_pool(env)
    try:
        assert isinstance(pool, RayScorerPool) and pool.workers == 2
        item = env.dataset("test").items[0]
        [verdict] = pool.score_blocking([item], [Transcript(messages=[*env.prompt(item)])])
        assert env.score(item, Transcript(messages=[*env.prompt(item)])).reward == verdict.reward  # type: ignore[union-attr]
    finally:
        assert pool is not None
        pool.close()


class _NoSandboxRepair(CodeRepair):
    """code-repair on a node without bubblewrap (what ``host()`` says there)."""

    def load_checkers(self) -> dict[str, str]:
        from security_verifiers.engines.sandbox.host import SandboxUnavailable

        raise SandboxUnavailable("bubblewrap (`bwrap`) is not installed: install the Debian package bubblewrap")


def test_a_node_that_cannot_score_refuses_before_the_run(cluster: Any) -> None:
    """An actor whose node lacks the sandbox fails its start; the pool says so (EngineUnavailable, the node's
    reason), rather than scoring anything."""
    from ray import cloudpickle  # the copy Ray serialises with

    from security_verifiers.core.errors import EngineUnavailable

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the actor's node need not import this test
    try:
        with pytest.raises(EngineUnavailable, match="bubblewrap"):
            make_pool(_NoSandboxRepair(), "ray", 1)
    finally:
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


def test_code_repair_scorers_check_the_sandbox_when_they_load(monkeypatch: pytest.MonkeyPatch) -> None:
    from security_verifiers.engines.sandbox import host as sandbox_host

    monkeypatch.setattr(sandbox_host.shutil, "which", lambda name: None)
    sandbox_host.host.cache_clear()
    try:
        with pytest.raises(sandbox_host.SandboxUnavailable, match="bubblewrap"):
            CodeRepair().load_checkers()
    finally:
        sandbox_host.host.cache_clear()
