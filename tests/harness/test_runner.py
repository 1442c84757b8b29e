"""The runner: one record per rollout, resume without loss or duplicates, errors kept out of scores."""

import asyncio
import json

import pytest

from security_verifiers.core.datasets import Dataset
from security_verifiers.core.errors import ConfigError
from security_verifiers.core.rundir import RunDir, read_records
from security_verifiers.envs.network_logs import NetworkLogs
from security_verifiers.harness.runner import RunConfig, run_eval
from tests.helpers import ScriptedPolicy, e1_item

ENV = NetworkLogs()
DATA = Dataset(id="toy", items=[e1_item(i, "Malicious" if i % 2 else "Benign") for i in range(40)], splits=("test",))


def truthful(item):
    return {"label": item.target["label"], "p_malicious": item.target["p_malicious"]}


def run(policy, run_dir, config=None, resume=False, data=DATA):
    config = config or RunConfig(concurrency=4)
    return asyncio.run(run_eval(ENV, policy, data, run_dir, config, resume=resume, progress=False))


def test_every_item_gets_exactly_one_record(tmp_path) -> None:
    run_dir = RunDir(tmp_path / "run")
    outcome = run(ScriptedPolicy(truthful), run_dir)
    records = read_records(run_dir.results_path)
    assert sorted(r.item_id for r in records) == sorted(i.id for i in DATA.items)
    assert outcome.errors == 0 and all(r.reward == 1.0 for r in records)
    meta = json.loads(run_dir.metadata_path.read_text())
    assert meta["status"] == "finished" and meta["dataset"]["hash"] == DATA.hash
    assert meta["dataset"]["item_ids"] == [i.id for i in DATA.items] and meta["env"]["name"] == "network-logs"


def test_samples_multiply_rollouts(tmp_path) -> None:
    run_dir = RunDir(tmp_path / "run")
    run(ScriptedPolicy(truthful), run_dir, RunConfig(samples=3))
    keys = [(r.item_id, r.sample) for r in read_records(run_dir.results_path)]
    assert len(keys) == len(set(keys)) == 3 * len(DATA)


def test_resume_keeps_finished_retries_errored_and_drops_a_cut_line(tmp_path) -> None:
    run_dir = RunDir(tmp_path / "run")
    flaky = ScriptedPolicy(lambda item: ConnectionError("down") if item.id.endswith("7") else truthful(item))
    run(flaky, run_dir, RunConfig(max_error_rate=1.0))
    with run_dir.results_path.open("a") as fh:
        fh.write('{"schema_version": 1, "env": "network-logs", "item_')  # killed mid-write
    policy = ScriptedPolicy(truthful)
    outcome = run(policy, run_dir, RunConfig(max_error_rate=1.0), resume=True)
    records = read_records(run_dir.results_path)
    assert policy.calls == 4  # only the 4 errored items (ids ending in 7) were redone
    assert sorted(r.item_id for r in records) == sorted(i.id for i in DATA.items)
    assert all(r.error is None for r in records) and outcome.resumed == 36


def test_resume_refuses_a_different_experiment(tmp_path) -> None:
    run_dir = RunDir(tmp_path / "run")
    run(ScriptedPolicy(truthful), run_dir)
    with pytest.raises(ConfigError, match="differs"):
        run(ScriptedPolicy(truthful, name="other-model"), run_dir, resume=True)


def test_a_fresh_run_never_overwrites_results(tmp_path) -> None:
    run_dir = RunDir(tmp_path / "run")
    run(ScriptedPolicy(truthful), run_dir)
    with pytest.raises(ConfigError, match="already holds results"):
        run(ScriptedPolicy(truthful), run_dir)


def test_error_rate_guard_stops_early_and_errors_are_not_scored(tmp_path) -> None:
    run_dir = RunDir(tmp_path / "run")
    outcome = run(ScriptedPolicy(lambda item: RuntimeError("HTTP 503")), run_dir, RunConfig(concurrency=1))
    assert outcome.stopped_early and outcome.done < len(DATA)
    records = read_records(run_dir.results_path)
    assert all(r.reward is None and r.error.kind == "provider" for r in records)
    assert json.loads(run_dir.metadata_path.read_text())["status"] == "stopped"


class BatchedEnv(type(ENV)):
    score_batch_size = 8

    def __init__(self, fail: bool = False) -> None:
        super().__init__()
        self.batches: list[int] = []
        self.fail = fail

    def score_many(self, items, transcripts):
        self.batches.append(len(items))
        if self.fail:
            raise RuntimeError("semgrep crashed")
        return super().score_many(items, transcripts)


def test_batched_scoring_scores_every_rollout_once(tmp_path) -> None:
    env = BatchedEnv()
    run_dir = RunDir(tmp_path / "run")
    asyncio.run(run_eval(env, ScriptedPolicy(truthful), DATA, run_dir, RunConfig(concurrency=3), progress=False))
    records = read_records(run_dir.results_path)
    assert sorted(r.item_id for r in records) == sorted(i.id for i in DATA.items)
    assert all(r.reward == 1.0 for r in records)
    assert sum(env.batches) == len(DATA) and max(env.batches) <= 8 + 2  # a batch may gain in-flight rollouts


def test_a_failed_batch_is_a_scorer_error_for_each_rollout(tmp_path) -> None:
    env = BatchedEnv(fail=True)
    run_dir = RunDir(tmp_path / "run")
    asyncio.run(run_eval(env, ScriptedPolicy(truthful), DATA, run_dir, RunConfig(max_error_rate=1.0),
                         progress=False))
    records = read_records(run_dir.results_path)
    assert len(records) == len(DATA) and all(r.error.kind == "scorer" and r.reward is None for r in records)


class _WatchedEnv(NetworkLogs):
    """network-logs that records where each score was computed, and fails on one item."""

    calls: list[bool] = []

    def score(self, item, transcript):  # noqa: ANN001, ANN201
        try:
            asyncio.get_running_loop()
            in_loop = True
        except RuntimeError:
            in_loop = False
        _WatchedEnv.calls.append(in_loop)
        if item.id.endswith("3"):
            raise RuntimeError("a scorer bug on this item")
        return super().score(item, transcript)


def test_scoring_never_runs_in_the_event_loop_and_one_failure_stays_one(tmp_path) -> None:
    """A scorer is CPU work: in the event loop it would stall every episode in flight. And a scorer failure on one
    rollout is that rollout's error, not its batch's."""
    _WatchedEnv.calls = []
    run_dir = RunDir(tmp_path / "run")
    outcome = asyncio.run(run_eval(_WatchedEnv(), ScriptedPolicy(truthful), DATA, run_dir,
                                   RunConfig(concurrency=8, max_error_rate=1.0), progress=False))
    assert len(_WatchedEnv.calls) == len(DATA) and not any(_WatchedEnv.calls)
    records = read_records(run_dir.results_path)
    failed = sorted(r.item_id for r in records if r.error is not None)
    assert failed == sorted(i.id for i in DATA.items if i.id.endswith("3")) and outcome.errors == len(failed)
    assert all(r.reward == 1.0 for r in records if r.error is None)


class MinBatchEnv(BatchedEnv):
    score_batch_min = 6


def test_a_batch_waits_for_its_minimum_while_episodes_are_played(tmp_path) -> None:
    """Every batch taken while episodes are still played holds at least ``score_batch_min`` rollouts; only the last,
    once playing is over, may hold fewer. Every rollout is still scored once."""
    env = MinBatchEnv()
    run_dir = RunDir(tmp_path / "run")
    policy = ScriptedPolicy(truthful, delay=0.01)  # rollouts arrive over time, as a model's answers do
    asyncio.run(run_eval(env, policy, DATA, run_dir, RunConfig(concurrency=2), progress=False))
    records = read_records(run_dir.results_path)
    assert sorted(r.item_id for r in records) == sorted(i.id for i in DATA.items)
    assert all(r.reward == 1.0 for r in records)
    assert sum(env.batches) == len(DATA) and len(env.batches) > 1
    assert all(n >= 6 for n in env.batches[:-1]) and max(env.batches) <= 8
