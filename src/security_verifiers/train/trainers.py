"""The two TRL stages of ``sv train``: supervised fine-tuning and group-relative RL, with what they log.

Both stages take a checkpoint directory and write one; nothing else is shared between them, so a run can be
read (and resumed by hand) stage by stage. The GRPO stage's rewards come from :class:`EnvReward` — the
environment's own scorer — and its variants differ only in TRL's ``reward_weights`` and
``multi_objective_aggregation`` (see :mod:`security_verifiers.adapters.trl`), so a comparison between them is
a comparison of aggregation, at equal budget.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from security_verifiers.adapters.trl import AGGREGATION, EnvReward, Variant, prompt_dataset, reward_weights, sft_dataset
from security_verifiers.core.types import Item
from security_verifiers.envs.base import Environment
from security_verifiers.train.presets import GRPOSpec, LoraSpec, SFTSpec


class StepLog:
    """Appends TRL's per-step logs to ``log.jsonl`` (one JSON object per line, flushed at once), with the
    reward adapter's counts since the previous line: parse failures and masked scorer errors per step."""

    def __init__(self, path: Path, stage: str, reward: EnvReward | None = None) -> None:
        self.path = path
        self.stage = stage
        self.reward = reward
        self._last = reward.stats.as_dict() if reward is not None else None
        self._start = time.monotonic()

    def callback(self) -> Any:
        from transformers import TrainerCallback

        log = self

        class _Callback(TrainerCallback):  # type: ignore[misc]
            def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None,
                       **_: Any) -> None:
                log.write(state.global_step, state.max_steps, logs or {})

        return _Callback()

    def write(self, step: int, max_steps: int, logs: dict[str, Any]) -> None:
        row: dict[str, Any] = {"stage": self.stage, "step": step, "max_steps": max_steps,
                               "elapsed_s": round(time.monotonic() - self._start, 2)}
        row.update({k: v for k, v in logs.items() if isinstance(v, int | float | str)})
        if self.reward is not None and self._last is not None:
            now = self.reward.stats.as_dict()
            scored = now["scored"] - self._last["scored"]
            row["scored"] = scored
            row["masked_scorer_errors"] = now["scorer_errors"] - self._last["scorer_errors"]
            row["parse_failure_rate"] = (now["parse_failures"] - self._last["parse_failures"]) / scored \
                if scored else None
            self._last = now
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(row) + "\n")


def _peft_config(lora: LoraSpec | None) -> Any:
    if lora is None:
        return None
    from peft import LoraConfig

    return LoraConfig(r=lora.r, lora_alpha=lora.alpha, lora_dropout=lora.dropout,
                      target_modules=list(lora.target_modules), task_type="CAUSAL_LM")


def _common_args(out: Path, seed: int, use_cpu: bool, bf16: bool, report_to: Sequence[str] = ()) -> dict[str, Any]:
    """``report_to``: the trackers TRL logs each step to (``--log-to``; :mod:`security_verifiers.tracking` sets
    their defaults), none by default: the step log (``log.jsonl``) is the record."""
    return {"output_dir": str(out / "trainer"), "seed": seed, "data_seed": seed, "use_cpu": use_cpu, "bf16": bf16,
            "logging_steps": 1, "save_strategy": "no", "report_to": list(report_to), "dataloader_num_workers": 0,
            "disable_tqdm": False}


def run_sft(env: Environment, items: Sequence[Item], answers: Sequence[str], start: Path, out: Path,
            spec: SFTSpec, *, seed: int, log: StepLog, lora: LoraSpec | None, use_cpu: bool, bf16: bool,
            report_to: Sequence[str] = ()) -> Path:
    """Fine-tune the checkpoint at ``start`` on (prompt, answer) pairs; the loss covers the answers only."""
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    tokenizer, model = _load(start, AutoTokenizer, AutoModelForCausalLM)
    config = SFTConfig(**_common_args(out, seed, use_cpu, bf16, report_to), num_train_epochs=spec.epochs,
                       learning_rate=spec.learning_rate, per_device_train_batch_size=spec.batch_size,
                       max_length=spec.max_length, completion_only_loss=True, lr_scheduler_type="cosine",
                       warmup_steps=0.05)
    trainer = SFTTrainer(model=model, args=config, train_dataset=sft_dataset(env, items, answers),
                         processing_class=tokenizer, callbacks=[log.callback()], peft_config=_peft_config(lora))
    trainer.train()
    return _save(trainer, tokenizer, out / "checkpoint")


def run_grpo(env: Environment, items: Sequence[Item], start: Path, out: Path, spec: GRPOSpec, variant: Variant,
             *, seed: int, log_path: Path, lora: LoraSpec | None, use_cpu: bool, bf16: bool,
             report_to: Sequence[str] = ()) -> tuple[Path, EnvReward]:
    """Group-relative RL from the checkpoint at ``start``, rewarded by the environment's scorer."""
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    tokenizer, model = _load(start, AutoTokenizer, AutoModelForCausalLM)
    pool = None
    if env.score_workers > 0:  # CPU-bound scorers (E2) score in killable workers, under the eval's limits
        from security_verifiers.harness.scoring_pool import ScorerPool

        pool = ScorerPool(env, env.score_workers)
        pool.warm_up()
    reward = EnvReward(env, items, pool)
    log = StepLog(log_path, f"grpo:{variant}", reward)
    config = GRPOConfig(
        **_common_args(out, seed, use_cpu, bf16, report_to), max_steps=spec.steps, learning_rate=spec.learning_rate,
        per_device_train_batch_size=spec.prompts_per_step * spec.num_generations,
        num_generations=spec.num_generations, max_completion_length=spec.max_completion_length,
        temperature=spec.temperature, beta=spec.beta, reward_weights=reward_weights(env, variant, spec.weights),
        multi_objective_aggregation=AGGREGATION[variant], scale_rewards="group", lr_scheduler_type="constant",
        log_completions=False, shuffle_dataset=True,
    )
    trainer = GRPOTrainer(model=model, reward_funcs=reward.functions(), args=config,
                          train_dataset=prompt_dataset(env, items), processing_class=tokenizer,
                          callbacks=[log.callback()], peft_config=_peft_config(lora))
    try:
        trainer.train()
    finally:
        if pool is not None:
            pool.close()
    return _save(trainer, tokenizer, out / "checkpoint"), reward


def _load(start: Path, tokenizer_class: Any, model_class: Any) -> tuple[Any, Any]:
    """A checkpoint directory loads offline; anything else is a hub name (where a hub is reachable)."""
    local = Path(start).is_dir()
    return (tokenizer_class.from_pretrained(str(start), local_files_only=local),
            model_class.from_pretrained(str(start), local_files_only=local))


def _save(trainer: Any, tokenizer: Any, path: Path) -> Path:
    """Save full weights (LoRA adapters merged) and the tokenizer, so ``hf:PATH`` loads the result alone."""
    model = trainer.model
    if hasattr(model, "merge_and_unload"):
        model = model.merge_and_unload()
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path
