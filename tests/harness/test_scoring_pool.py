"""Scoring in worker processes: the same scores as in-process, a dead worker costs only its batch, no orphans."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import pickle
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from security_verifiers.core.datasets import Dataset
from security_verifiers.core.errors import ErrorKind, InfraError
from security_verifiers.core.rundir import RunDir, read_records
from security_verifiers.core.types import Item, Message, Score, Transcript
from security_verifiers.envs.base import get_env
from security_verifiers.envs.network_logs import NetworkLogs
from security_verifiers.harness.policies import resolve_policy
from security_verifiers.harness.runner import RunConfig, run_eval
from security_verifiers.harness.scoring_pool import ScorerPool, shared_pool
from security_verifiers.models.base import Baseline
from tests.helpers import ScriptedPolicy, e1_item

DATA = Dataset(id="toy", items=[e1_item(i, "Malicious" if i % 2 else "Benign") for i in range(24)], splits=("test",))
REPO = Path(__file__).resolve().parents[2]


def truthful(item: Item) -> dict[str, object]:
    return {"label": item.target["label"], "p_malicious": item.target["p_malicious"]}


class CrashingEnv(NetworkLogs):
    """Kills its scoring *worker* on one item, as a C extension aborting or the OOM killer would."""

    def score(self, item: Item, transcript: Transcript) -> Score:
        if item.id == DATA.items[5].id and multiprocessing.parent_process() is not None:
            os._exit(3)
        return super().score(item, transcript)


def run(env, run_dir: RunDir, config: RunConfig) -> list:
    asyncio.run(run_eval(env, ScriptedPolicy(truthful), DATA, run_dir, config, progress=False))
    return sorted(read_records(run_dir.results_path), key=lambda r: r.item_id)


def test_worker_scores_equal_in_process_scores(tmp_path: Path) -> None:
    inline = run(NetworkLogs(), RunDir(tmp_path / "inline"), RunConfig(score_workers=0))
    pooled = run(NetworkLogs(), RunDir(tmp_path / "pooled"), RunConfig(score_workers=2))
    assert len(pooled) == len(DATA) and not any(r.error for r in pooled)
    assert [(r.item_id, r.reward, r.components, r.outcome) for r in pooled] == \
        [(r.item_id, r.reward, r.components, r.outcome) for r in inline]


def test_a_dead_worker_fails_only_its_batch_and_the_pool_recovers(tmp_path: Path) -> None:
    # network-logs scores one rollout per batch: only the crashing item's rollout becomes a scorer error.
    records = run(CrashingEnv(), RunDir(tmp_path / "run"), RunConfig(score_workers=1, max_error_rate=1.0))
    errored = [r for r in records if r.error is not None]
    assert [r.item_id for r in errored] == [DATA.items[5].id]
    assert errored[0].error.kind == "scorer" and "died" in errored[0].error.message and errored[0].reward is None
    assert all(r.reward == 1.0 for r in records if r.error is None) and len(records) == len(DATA)


def test_config_audit_scores_the_same_in_a_worker() -> None:
    env = get_env("config-audit")
    items = env.dataset("test", n=6).items
    policy = resolve_policy("baseline:autofix", env)

    async def transcripts() -> list[Transcript]:
        out = []
        for item in items:
            reply = await policy.respond(item, env.prompt(item), None, 0)
            out.append(Transcript(messages=[*env.prompt(item), Message(role="assistant", content=reply.text)]))
        return out

    played = asyncio.run(transcripts())
    in_process = env.score_many(items, played)
    pool = ScorerPool(env, 1)
    try:
        in_worker = asyncio.run(pool.score(items, played))
    finally:
        pool.close()
    assert all(isinstance(s, Score) for s in in_worker)
    assert [s.model_dump() for s in in_worker] == [s.model_dump() for s in in_process]


def test_infra_errors_survive_pickling() -> None:
    err = pickle.loads(pickle.dumps(InfraError(ErrorKind.SCORER, "semgrep failed")))
    assert isinstance(err, InfraError) and err.kind is ErrorKind.SCORER and err.message == "semgrep failed"


def _running(pid: int) -> bool:
    """Alive and not a zombie (a container's init may be slow to reap)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status


def test_workers_exit_when_the_run_is_killed(tmp_path: Path) -> None:
    script = tmp_path / "host.py"
    script.write_text(textwrap.dedent("""
        import sys, time
        from security_verifiers.envs.network_logs import NetworkLogs
        from security_verifiers.harness.scoring_pool import ScorerPool
        if __name__ == "__main__":
            pool = ScorerPool(NetworkLogs(), 1)
            pool.warm_up()
            print(pool.pids()[0], flush=True)
            time.sleep(600)
    """))
    host = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, cwd=REPO)
    try:
        worker = int(host.stdout.readline())
        assert _running(worker)
    finally:
        host.kill()
        host.wait()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if not _running(worker):
            return
        time.sleep(0.2)
    raise AssertionError(f"scoring worker {worker} outlived its killed parent")


def test_the_shared_pool_scores_config_audit_in_a_worker_as_in_process() -> None:
    """What the verifiers and Inspect adapters score with: one pool per environment config, in worker processes
    (E2), none for an environment scored in-process."""
    assert shared_pool(get_env("network-logs")) is None
    env = get_env("config-audit")
    pool = shared_pool(env)
    assert pool is not None and shared_pool(get_env("config-audit")) is pool
    item = env.dataset("test", n=1).items[0]
    transcript = Transcript(messages=[*env.prompt(item), Message(role="assistant", content='{"findings": []}')])
    [pooled] = asyncio.run(pool.score([item], [transcript]))
    assert isinstance(pooled, Score) and pooled.model_dump() == env.score(item, transcript).model_dump()
    assert pool.pids() and os.getpid() not in pool.pids()
    other = shared_pool(get_env("config-audit", {"score_time_limit_s": 12.0}))
    assert other is not None and other is not pool and other.limits.time_s == 12.0


# -- a built-in baseline that asks for it answers in the workers (in_workers) ------------------------------------
class _InWorkerBaseline(Baseline):
    """Truthful in a worker process, wrong in the driver: a reward of 1 says where it answered. It raises on one item,
    as a broken baseline would."""

    name = "in-worker"
    runs_in_workers = True

    def answer(self, item: Item, messages: list[Message]) -> str:
        if item.id == DATA.items[3].id:
            raise ValueError("the baseline broke on this item")
        in_worker = multiprocessing.parent_process() is not None
        wrong = "Benign" if item.target["label"] == "Malicious" else "Malicious"
        label = item.target["label"] if in_worker else wrong
        return json.dumps({"label": label, "p_malicious": 1.0 if label == "Malicious" else 0.0})


class InWorkerEnv(NetworkLogs):
    """network-logs with that baseline among its own (workers build it by name, as they build ``baseline:autofix``)."""

    def baselines(self) -> dict:
        return {**super().baselines(), "in-worker": _InWorkerBaseline}


def test_a_baseline_that_asks_answers_in_the_workers(tmp_path: Path) -> None:
    env = InWorkerEnv()
    policy = resolve_policy("baseline:in-worker", env)
    asyncio.run(run_eval(env, policy, DATA, RunDir(tmp_path / "run"), RunConfig(score_workers=2, max_error_rate=1.0),
                         progress=False))
    records = {r.item_id: r for r in read_records(tmp_path / "run" / "results.jsonl")}
    assert len(records) == len(DATA.items)
    broken = records.pop(DATA.items[3].id)
    assert broken.error is not None and broken.error.kind == ErrorKind.PROVIDER  # as a policy failing in the driver
    assert "the baseline broke on this item" in broken.error.message
    assert all(r.error is None and r.reward == 1.0 for r in records.values())  # every answer came from a worker
    metadata = json.loads((tmp_path / "run" / "metadata.json").read_text())
    assert metadata["policy"] == {"kind": "baseline", "name": "in-worker"}  # the run names the baseline itself
    # without a pool (scoring in-process), the same baseline answers in the driver
    asyncio.run(run_eval(env, resolve_policy("baseline:in-worker", env), DATA, RunDir(tmp_path / "inline"),
                         RunConfig(score_workers=0, max_error_rate=1.0), progress=False))
    inline = [r for r in read_records(tmp_path / "inline" / "results.jsonl") if r.error is None]
    assert len(inline) == len(DATA.items) - 1 and all(r.reward < 1.0 for r in inline)
