"""``grpo.generation`` reaches TRL's trainer (and vLLM is refused, not swapped, where it is missing); every GRPO
step's row in ``log.jsonl`` carries the speed of its generation."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from security_verifiers.core.errors import ConfigError
from security_verifiers.envs.base import get_env
from security_verifiers.train import trainers
from security_verifiers.train.presets import GRPOSpec
from security_verifiers.train.tiny import TinyModelSpec, tiny_model, train_tokenizer
from security_verifiers.train.trainers import StepLog, generation_args, run_grpo

ENV_OPTIONS = {"window": 1}


@pytest.fixture(scope="module")
def start(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny config-built checkpoint with a tokenizer trained on network-logs' prompts (seconds, no SFT)."""
    env = get_env("network-logs", ENV_OPTIONS)
    items = env.dataset("train", n=8, seed=0).items
    tokenizer = train_tokenizer([m.content for item in items for m in env.prompt(item)], 400)
    spec = TinyModelSpec(vocab_size=400, hidden_size=16, layers=1, heads=2, kv_heads=1, intermediate_size=32,
                         max_positions=2048)
    path = tmp_path_factory.mktemp("generation") / "start"
    tiny_model(tokenizer, spec, seed=0).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def _grpo(start: Path, out: Path, generation: str = "transformers", steps: int = 1) -> tuple[Path, Any]:
    env = get_env("network-logs", ENV_OPTIONS)
    items = list(env.dataset("train", n=4, seed=0).items)
    spec = GRPOSpec(steps=steps, learning_rate=0.01, prompts_per_step=2, num_generations=2, max_completion_length=6,
                    generation=generation)
    log = out / "log.jsonl"
    return log, run_grpo(env, items, start, out / "grpo", spec, "grpo", seed=1, log_path=log, lora=None,
                         use_cpu=True, bf16=False)


@pytest.mark.parametrize("generation, continuous_batching", [
    ("transformers", False),  # the default: the model's own generate over padded batches
    ("paged", True),  # transformers' continuous batching (TRL's old name for it: use_transformers_paged)
])
def test_the_generation_option_reaches_trls_trainer(start: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    generation: str, continuous_batching: bool) -> None:
    """The trainer run_grpo builds is inspected instead of trained: the option must be in its arguments and have
    set up TRL's generation backend (its continuous-batching config), with vLLM off."""
    seen: list[Any] = []
    monkeypatch.setattr(trainers._guarded_grpo_trainer(), "train", lambda self, **_: seen.append(self))
    _grpo(start, tmp_path, generation)
    (trainer,) = seen
    assert trainer.args.use_transformers_continuous_batching is continuous_batching
    assert trainer.use_transformers_continuous_batching is continuous_batching
    assert (trainer.continuous_batching_config is not None) is continuous_batching
    assert trainer.args.use_vllm is False and trainer.use_vllm is False


def _without_vllm(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "vllm" else real(name, *a))


def test_vllm_is_refused_with_a_clear_error_where_it_is_not_importable(monkeypatch: pytest.MonkeyPatch,
                                                                      tmp_path: Path) -> None:
    from security_verifiers.train.pipeline import train
    from security_verifiers.train.presets import load_preset

    _without_vllm(monkeypatch)
    with pytest.raises(ConfigError, match="vllm package is not importable.*'paged' or 'transformers'"):
        generation_args(GRPOSpec(generation="vllm"))
    # sv train refuses before its SFT stage runs (no run directory is made), not after minutes of SFT.
    preset = load_preset("tiny-cpu").model_copy(update={"grpo": GRPOSpec(generation="vllm")})
    with pytest.raises(ConfigError, match="vllm"):
        train("grpo", "network-logs", preset, seed=0, out=tmp_path, run_id="r")
    assert not (tmp_path / "r").exists()


def test_vllm_where_importable_is_trls_colocated_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: real("json") if name == "vllm" else real(name, *a))
    assert generation_args(GRPOSpec(generation="vllm")) == {"use_vllm": True, "vllm_mode": "colocate"}


@pytest.mark.parametrize("stage, logs, expected", [
    # a GRPO step with its generation: tokens, seconds and their ratio
    ("grpo:grpo", {"loss": 0.1, "generation/tokens": 48.0, "generation/seconds": 0.5},
     {"generated_tokens": 48, "generation_s": 0.5, "generated_tokens_per_s": 96.0}),
    # a GRPO step that reused an earlier generation (steps_per_generation > 1): nothing generated, no rate
    ("grpo:grpo", {"loss": 0.1}, {"generated_tokens": 0, "generation_s": None, "generated_tokens_per_s": None}),
    # the run's closing summary row is not a step
    ("grpo:grpo", {"train_runtime": 3.0}, {}),
    # SFT generates nothing
    ("sft", {"loss": 0.1}, {}),
])
def test_step_log_rows_carry_generation_speed(tmp_path: Path, stage: str, logs: dict[str, float],
                                              expected: dict[str, Any]) -> None:
    log = StepLog(tmp_path / "log.jsonl", stage)
    log.write(1, 2, logs)
    row = json.loads((tmp_path / "log.jsonl").read_text())
    assert {k: row[k] for k in ("generated_tokens", "generation_s", "generated_tokens_per_s") if k in row} == expected
    assert "generation/tokens" not in row and "generation/seconds" not in row


def test_a_grpo_run_logs_generated_tokens_per_second_each_step(start: Path, tmp_path: Path) -> None:
    log, _ = _grpo(start, tmp_path, steps=2)
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    steps = [r for r in rows if "loss" in r]
    assert [r["step"] for r in steps] == [1, 2]
    for row in steps:
        # 2 prompts x 2 generations, each of TRL's mean length (at most 6 tokens, at least the end of sequence)
        assert row["generated_tokens"] == round(row["completions/mean_length"] * 4)
        assert 4 <= row["generated_tokens"] <= 24
        assert 0 < row["generation_s"] <= row["step_time"]
        assert row["generated_tokens_per_s"] == pytest.approx(row["generated_tokens"] / row["generation_s"],
                                                              rel=0.01)
