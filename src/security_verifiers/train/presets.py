"""Training presets: every setting of a ``sv train`` run in one validated file.

A preset is the unit of budget parity: variants compared in an ablation share its prompts, generations per
prompt, token limits and steps, and the run's manifest records it in full. Presets ship as YAML next to this
module (``sv train --preset NAME``); any file of the same shape can be given with ``--config FILE``. Unknown
keys are errors: a misspelt option that silently fell back to a default would make two runs that look
alike train differently.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from security_verifiers.core.errors import ConfigError
from security_verifiers.train.tiny import TinyModelSpec

PRESET_DIR = Path(__file__).parent / "presets"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LoraSpec(_Strict):
    r: int = Field(16, ge=1, le=1024)
    alpha: int = Field(32, ge=1)
    dropout: float = Field(0.05, ge=0, lt=1)
    target_modules: list[str] = Field(default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj"])


class ModelSpec(_Strict):
    """Where the starting weights come from: a config-built ``tiny`` model, or a transformers checkpoint."""

    kind: Literal["tiny", "hf"]
    tiny: TinyModelSpec | None = None
    source: str | None = Field(None, description="hf: a local directory or a hub name.")
    lora: LoraSpec | None = None
    dtype: Literal["float32", "bfloat16"] = "float32"

    @model_validator(mode="after")
    def _complete(self) -> ModelSpec:
        if self.kind == "tiny" and self.tiny is None:
            raise ValueError("a tiny model needs its `tiny` size spec")
        if self.kind == "hf" and not self.source:
            raise ValueError("an hf model needs a `source` (directory or hub name)")
        return self


class DataSpec(_Strict):
    train_split: str = "train"
    train_n: int = Field(256, ge=1)
    heldout_split: str = "dev"
    heldout_n: int = Field(200, ge=1)
    data_seed: int = Field(0, description="Seed of the generated splits (the public ones take none).")


class SFTSpec(_Strict):
    targets: str = Field("baseline:reference", description="Policy whose answers are the SFT targets.")
    epochs: float = Field(2.0, ge=0)
    learning_rate: float = Field(3e-3, gt=0)
    batch_size: int = Field(8, ge=1)
    max_length: int = Field(2048, ge=16)
    drop_fields: list[str] = Field(
        default_factory=list, description="Keys taken out of each target answer's JSON object before SFT (and "
        "before the completion budgets are measured), e.g. phishing's evidence, whose exact quotes a model too "
        "small to copy text writes wrong and is docked for; the teacher's rewards are of its whole answers. "
        "Single-turn environments only.")


class GRPOSpec(_Strict):
    steps: int = Field(40, ge=1)
    learning_rate: float = Field(1e-3, gt=0)
    prompts_per_step: int = Field(4, ge=1)
    num_generations: int = Field(8, ge=2)
    max_completion_length: int = Field(32, ge=1, description="Tokens per reply (per turn, in a multi-turn episode).")
    max_episode_tokens: int = Field(4096, ge=16, description="A multi-turn episode's whole length (prompt, replies, "
                                    "tool results): a turn that would pass it is not generated.")
    temperature: float = Field(1.0, gt=0)
    beta: float = Field(0.0, ge=0, description="KL coefficient against the starting model (0: no reference).")
    weights: dict[str, float] | None = Field(None, description="Component weights of the `weighted` variant.")
    score_executor: Literal["local", "ray"] = Field(
        "local", description="Where the rewards are scored: local (the environment's worker processes on this "
        "machine) or ray (actors on the Ray cluster at `ray_address`, under the same per-rollout limits), so that "
        "a trainer on GPU nodes does not score on its own CPUs.")
    ray_address: str | None = Field(None, description="The Ray cluster with score_executor ray (default: "
                                    "$RAY_ADDRESS, else a local cluster of this machine).")
    generation: Literal["transformers", "paged", "vllm"] = Field(
        "transformers", description="How the GRPO stage generates its completions: `transformers` (the model's "
        "`generate`, padded batches; runs anywhere), `paged` (transformers' continuous batching over a paged KV "
        "cache, TRL's `use_transformers_continuous_batching`), or `vllm` (a vLLM engine colocated in the training "
        "process, TRL's `use_vllm` with `vllm_mode='colocate'`; needs the `vllm` package and a GPU, and is refused "
        "when vllm is not importable rather than falling back). The sampling settings are the same; the speed "
        "differs (`benchmarks/train_gpu.py` measures it).")


class DistillSpec(_Strict):
    teacher: str = Field("baseline:gbdt", description="Any --model the harness takes.")
    samples: int = Field(1, ge=1, description="Answers per train item.")
    min_reward: float = Field(0.8, description="Keep answers scoring at least this (rejection sampling).")


class EvalSpec(_Strict):
    max_tokens: int = Field(32, ge=1)
    batch_size: int = Field(16, ge=1)


class TrainPreset(_Strict):
    name: str
    description: str
    env_options: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="Per environment: options that make its prompts fit the model.")
    model: ModelSpec
    data: DataSpec = Field(default_factory=DataSpec)
    sft: SFTSpec = Field(default_factory=SFTSpec)
    grpo: GRPOSpec = Field(default_factory=GRPOSpec)
    distill: DistillSpec = Field(default_factory=DistillSpec)
    eval: EvalSpec = Field(default_factory=EvalSpec)
    threads: int | None = Field(None, ge=1, description="torch threads (default: every core).")
    checkpoint_every: int | None = Field(
        50, ge=1, description="Save each training stage's state (weights, optimiser, scheduler, RNG) every this many "
        "optimiser steps, and at its end, under the stage's `trainer/checkpoint-N`, so that `sv train --resume "
        "RUN_DIR` continues an interrupted stage from there; none: no intermediate checkpoints (an interrupted "
        "stage restarts from its beginning). A stage's are removed once its final checkpoint is written.")
    checkpoint_keep: int = Field(2, ge=1, description="Intermediate checkpoints kept per stage (the oldest go).")
    log_to: list[Literal["wandb", "mlflow"]] = Field(
        default_factory=list, description="Trackers TRL logs every step to, and the held-out evaluations are "
        "logged to at the end (`sv train --log-to`; needs the tracking extra). Default: none.")
    env_overrides: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="Per environment: preset sections to change for runs on it (merged key "
        "by key), e.g. a longer completion budget and fewer items where answers and prompts are long.")

    @model_validator(mode="after")
    def _overrides_are_valid(self) -> TrainPreset:
        for env_name in self.env_overrides:
            self.for_env(env_name)
        return self

    def for_env(self, env_name: str) -> TrainPreset:
        """The preset as a run on ``env_name`` uses it (its overrides merged in, validated like the rest); the
        manifest records this effective form."""
        override = self.env_overrides.get(env_name)
        if not override:
            return self
        if "env_overrides" in override or "name" in override:
            raise ValueError(f"env_overrides.{env_name}: cannot override name or env_overrides")
        merged = _merge(self.model_dump(mode="python"), override)
        merged["env_overrides"] = {}
        try:
            return TrainPreset.model_validate(merged)
        except ValidationError as err:
            problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in err.errors())
            raise ValueError(f"env_overrides.{env_name}: {problems}") from None


def _merge(base: dict[str, Any], change: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in change.items():
        out[key] = _merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def preset_names() -> list[str]:
    return sorted(p.stem for p in PRESET_DIR.glob("*.yaml"))


def load_preset(name: str | None = None, path: Path | None = None) -> TrainPreset:
    """The preset shipped as ``name``, or the one in ``path``; a clear :class:`ConfigError` otherwise."""
    if (name is None) == (path is None):
        raise ConfigError("give exactly one of --preset NAME and --config FILE")
    if name is not None:
        path = PRESET_DIR / f"{name}.yaml"
        if not path.is_file():
            raise ConfigError(f"unknown preset {name!r}; known: {', '.join(preset_names())}")
    assert path is not None
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as err:
        raise ConfigError(f"{path}: cannot read the preset ({err})") from err
    try:
        return TrainPreset.model_validate(raw)
    except ValidationError as err:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or '<root>'}: {e['msg']}" for e in err.errors())
        raise ConfigError(f"{path}: invalid preset: {problems}") from err
