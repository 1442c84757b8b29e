"""Data-parallel ``sv train``: two CPU processes (torchrun, gloo) run the pipeline once — one run directory, one
teacher, one set of held-out evaluations, each log row written once — and train on the preset's batches shared
between them."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch.distributed
import yaml

import security_verifiers
from tests.train.test_pipeline import SMOKE


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.skipif(not (torch.distributed.is_available() and torch.distributed.is_gloo_available()),
                    reason="this torch has no gloo backend: two CPU processes cannot be launched")
def test_two_processes_run_the_pipeline_once(tmp_path: Path) -> None:
    config = tmp_path / "smoke.yaml"
    config.write_text(yaml.safe_dump(SMOKE))
    out = tmp_path / "out"
    src = str(Path(security_verifiers.__file__).parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]),
           "MPLBACKEND": "Agg"}
    argv = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_addr", "127.0.0.1",
            "--master_port", str(_free_port()), "-m", "security_verifiers.cli", "train", "grpo", "--env",
            "network-logs", "--config", str(config), "--seed", "2", "--out", str(out)]  # no --run-id: agreed
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    [run] = list(out.iterdir())  # one run directory, though each process made a run id from its own clock
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] == "finished" and manifest["processes"] == 2
    assert done.stdout.count("[sv train] reward_mean:") == 1  # one process printed the result
    for label in ("teacher", "eval/before", "eval/after"):  # each played once, by the main process
        records = (run / label / "results.jsonl").read_text().splitlines()
        assert len(records) == (12 if label == "teacher" else 6), label
        assert not (run / label / "results.jsonl.tmp").exists()
    rows = [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()]
    sft = [r["step"] for r in rows if r["stage"] == "sft" and "loss" in r]
    grpo = [r for r in rows if r["stage"] == "grpo:grpo" and "loss" in r]
    assert sft == [1, 2, 3]  # 12 answers in batches of 4 (2 per process), each step logged once
    assert [r["step"] for r in grpo] == [1, 2]
    assert all(r["scored"] == 4 for r in grpo)  # the two processes' completions, summed
    assert manifest["rl_reward_counts"]["scored"] == 8  # as one process would count (test_pipeline)
    assert set(manifest["stages"]) == {"sft", "grpo"}
