"""The two TRL stages of ``sv train``: supervised fine-tuning and group-relative RL, with what they log.

Both stages take a checkpoint directory and write one; nothing else is shared between them, so a run can be
read and resumed stage by stage. Every ``checkpoint_every`` optimiser steps a stage saves its whole state under
``trainer/checkpoint-N`` (transformers' own: weights, optimiser, scheduler, RNG; the GRPO stage adds its reward
counts and skipped steps, :data:`COUNTS_FILE`), and a stage given ``resume_from`` continues from such a
checkpoint. Under several processes (:mod:`.processes`) each trains its share of every batch and the main process
alone writes the log and the checkpoints. The GRPO stage's rewards come from :class:`EnvReward` — the
environment's own scorer — and its variants differ only in TRL's ``reward_weights`` and
``multi_objective_aggregation`` (see :mod:`security_verifiers.adapters.trl`), so a comparison between them is
a comparison of aggregation, at equal budget.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from security_verifiers.adapters.trl import AGGREGATION, EnvReward, Variant, prompt_dataset, reward_weights
from security_verifiers.core.errors import ConfigError
from security_verifiers.core.types import Item
from security_verifiers.envs.base import Environment
from security_verifiers.train.episodes import EpisodeRollout, episode_prompts, is_multi_turn
from security_verifiers.train.presets import GRPOSpec, LoraSpec, SFTSpec

if TYPE_CHECKING:
    import datasets

#: A parse-failure rate at or above this for :data:`PARSE_FAILURE_STEPS` logged steps in a row is warned about: the
#: policy no longer writes answers the scorer can read, so its rewards carry almost no signal.
PARSE_FAILURE_WARNING = 0.9
PARSE_FAILURE_STEPS = 5

#: Per generation, what the trainer adds to TRL's step metrics: the completions' tokens and the seconds spent
#: generating them (see :func:`_guarded_grpo_trainer`); :class:`StepLog` turns them into tokens/s.
GENERATED_TOKENS = "generation/tokens"
GENERATION_SECONDS = "generation/seconds"

#: What a GRPO stage's intermediate checkpoint adds to transformers' state: the reward adapter's counts (summed over
#: processes), its scorer-error examples and the :class:`NoSignalGuard`'s counts, restored when the stage resumes,
#: so that the run's totals and the step log's per-step figures go on from where the checkpoint left them.
COUNTS_FILE = "sv_counts.json"


class NoSignalGuard:
    """Keeps an RL optimiser step that has no learning signal from moving the policy.

    A GRPO step whose groups all have zero reward variance has every advantage 0: its policy-gradient loss has
    zero gradient, yet Adam still moves the weights by the momentum of earlier steps (and weight decay, where
    set), so steps with nothing to learn from changed the model (issue 30: 59 of 60 such steps moved every weight
    by ~5.4 x the learning rate). The guard sees the advantages of each micro-batch and, when none of a step's
    micro-batches on any process had a non-zero one, drops the gradients before the optimiser step: torch's
    optimisers skip parameters without a gradient, so neither the weights nor the optimiser's state change. With
    a KL term (``beta`` > 0) its pull towards the reference is dropped on such steps too: a step with no reward
    signal leaves the policy as it was."""

    def __init__(self) -> None:
        self._signal = False
        #: Optimiser steps taken and skipped, since the start.
        self.steps = 0
        self.skipped = 0

    def saw(self, advantages: Any, accelerator: Any) -> None:
        """Record one micro-batch's advantages (every process calls this in step, so the decision agrees)."""
        import torch

        local = torch.tensor([float(bool((advantages != 0).any()))], device=advantages.device)
        if float(accelerator.gather(local).max()) > 0:
            self._signal = True

    def callback(self) -> Any:
        from transformers import TrainerCallback

        guard = self

        class _Callback(TrainerCallback):  # type: ignore[misc]
            def on_pre_optimizer_step(self, args: Any, state: Any, control: Any, model: Any = None,
                                      **_: Any) -> None:
                guard.steps += 1
                if not guard._signal and model is not None:
                    guard.skipped += 1
                    for parameter in model.parameters():
                        parameter.grad = None

            def on_optimizer_step(self, args: Any, state: Any, control: Any, **_: Any) -> None:
                guard._signal = False

        return _Callback()


@cache
def _guarded_grpo_trainer() -> type:
    """TRL's GRPO trainer, whose training micro-batches are shown to a :class:`NoSignalGuard`."""
    from trl import GRPOTrainer

    class GuardedGRPOTrainer(GRPOTrainer):  # type: ignore[misc]
        guard: NoSignalGuard

        #: The inputs of the generation batch being rolled out: a multi-turn rollout reads their item ids.
        sv_inputs: list[dict[str, Any]] = []

        def _generate_and_score_completions(self, inputs: list[dict[str, Any]]) -> Any:
            self.sv_inputs = inputs
            return super()._generate_and_score_completions(inputs)

        def _generate(self, prompts: list[Any]) -> Any:
            # Times every rollout (any backend, or a rollout function) and counts its tokens as TRL does: from
            # TRL's own ``completions/mean_length`` (model tokens only, gathered over processes) times the
            # completions (one per prompt entry, on every process).
            mode = "train" if self.model.training else "eval"
            start = time.perf_counter()
            out = super()._generate(prompts)
            seconds = time.perf_counter() - start
            lengths = self._metrics[mode]["completions/mean_length"]
            if lengths:
                self._metrics[mode][GENERATED_TOKENS].append(
                    lengths[-1] * len(prompts) * self.accelerator.num_processes)
                self._metrics[mode][GENERATION_SECONDS].append(seconds)
            return out

        def _prepare_inputs(self, generation_batch: Any) -> Any:
            inputs = super()._prepare_inputs(generation_batch)
            if self.model.training:
                self.guard.saw(inputs["advantages"], self.accelerator)
            return inputs

    return GuardedGRPOTrainer


class StepLog:
    """Appends TRL's per-step logs to ``log.jsonl`` (one JSON object per line, flushed at once), with the
    reward adapter's counts since the previous line (parse failures and masked scorer errors per step) and the
    optimiser steps the :class:`NoSignalGuard` skipped; warns on stderr once when the parse-failure rate stays at
    :data:`PARSE_FAILURE_WARNING` or above for :data:`PARSE_FAILURE_STEPS` steps.

    A GRPO row also carries its generation's speed: ``generated_tokens`` (the completions' tokens),
    ``generation_s`` (seconds in TRL's rollout, ``_generate``: generation with whichever backend, decoding, and a
    vLLM engine's weight sync) and ``generated_tokens_per_s``; a step that generated nothing has 0 tokens and no
    rate. The tokens are counted by the trainer from TRL's ``completions/mean_length`` times the completions,
    not from the reward adapter: the adapter scores each distinct (item, answer) once, so identical answers in a
    group would go uncounted, and TRL's length counts the model's tokens only (a multi-turn rollout's
    environment tokens are masked out of it) up to and including the end-of-sequence token. The rate is over the
    generation's own seconds, not TRL's ``step_time`` (which adds the scoring and the backward pass); sv train
    logs every step, so each row holds one generation (with a longer logging interval the figures are the mean
    per generation and the rate their ratio). The run's closing summary row carries none of the three.
    """

    def __init__(self, path: Path, stage: str, reward: EnvReward | None = None,
                 guard: NoSignalGuard | None = None) -> None:
        from security_verifiers.train import processes

        self.path = path
        self.stage = stage
        self.reward = reward
        self.guard = guard
        self.main = processes.is_main()  # the other processes count with it but write nothing
        self._last = processes.summed(reward.stats.as_dict()) if reward is not None else None
        self._skipped = guard.skipped if guard is not None else 0
        self._failing = 0
        self._warned = False
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
        if self.stage.startswith("grpo") and "loss" in logs:  # a training step's row, not the run's summary
            tokens, seconds = row.pop(GENERATED_TOKENS, None), row.pop(GENERATION_SECONDS, None)
            row["generated_tokens"] = round(tokens or 0)
            row["generation_s"] = round(seconds, 4) if seconds is not None else None
            row["generated_tokens_per_s"] = round(tokens / seconds, 1) if tokens and seconds else None
        if self.reward is not None and self._last is not None:
            from security_verifiers.train import processes

            now = processes.summed(self.reward.stats.as_dict())  # every process logs each step: they agree
            scored = now["scored"] - self._last["scored"]
            row["scored"] = scored
            row["masked_scorer_errors"] = now["scorer_errors"] - self._last["scorer_errors"]
            row["failed_episodes"] = now["failed_episodes"] - self._last["failed_episodes"]
            row["parse_failure_rate"] = (now["parse_failures"] - self._last["parse_failures"]) / scored \
                if scored else None
            self._last = now
            if self.main:
                self._warn_on_parse_failures(row["parse_failure_rate"], step)
        if self.guard is not None:
            row["skipped_no_signal"] = self.guard.skipped - self._skipped
            self._skipped = self.guard.skipped
        if not self.main:
            return
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(row) + "\n")

    def _warn_on_parse_failures(self, rate: float | None, step: int) -> None:
        self._failing = self._failing + 1 if rate is not None and rate >= PARSE_FAILURE_WARNING else 0
        if self._failing >= PARSE_FAILURE_STEPS and not self._warned:
            self._warned = True
            print(f"sv train: warning: {self.stage}: {PARSE_FAILURE_STEPS} steps in a row (to step {step}) with "
                  f"{PARSE_FAILURE_WARNING:.0%} or more of the answers unparseable: the rewards carry almost no "
                  "signal (is max_completion_length long enough for an answer? see log.jsonl)", file=sys.stderr)


def _peft_config(lora: LoraSpec | None) -> Any:
    if lora is None:
        return None
    from peft import LoraConfig

    return LoraConfig(r=lora.r, lora_alpha=lora.alpha, lora_dropout=lora.dropout,
                      target_modules=list(lora.target_modules), task_type="CAUSAL_LM")


def _common_args(out: Path, seed: int, use_cpu: bool, bf16: bool, report_to: Sequence[str] = (),
                 checkpoint_every: int | None = None, checkpoint_keep: int = 2) -> dict[str, Any]:
    """``report_to``: the trackers TRL logs each step to (``--log-to``; :mod:`security_verifiers.tracking` sets
    their defaults), none by default: the step log (``log.jsonl``) is the record. ``checkpoint_every``: save the
    trainer's state every this many steps (and at the end) under ``out/trainer/checkpoint-N``, keeping the last
    ``checkpoint_keep``; none: never."""
    saving: dict[str, Any] = {"save_strategy": "no"} if checkpoint_every is None else {
        "save_strategy": "steps", "save_steps": checkpoint_every, "save_total_limit": checkpoint_keep}
    return {"output_dir": str(out / "trainer"), "seed": seed, "data_seed": seed, "use_cpu": use_cpu, "bf16": bf16,
            "logging_steps": 1, **saving, "report_to": list(report_to), "dataloader_num_workers": 0,
            "disable_tqdm": False}


def generation_args(spec: GRPOSpec) -> dict[str, Any]:
    """TRL's ``GRPOConfig`` arguments for the preset's ``grpo.generation``; a :class:`ConfigError` for ``vllm``
    where the ``vllm`` package is not importable (no silent fallback to another backend)."""
    if spec.generation == "paged":
        return {"use_transformers_continuous_batching": True}
    if spec.generation == "vllm":
        if importlib.util.find_spec("vllm") is None:
            raise ConfigError("grpo.generation is 'vllm' but the vllm package is not importable here; install it "
                              "(pip install vllm, on a GPU machine) or set grpo.generation to 'paged' or "
                              "'transformers'")
        return {"use_vllm": True, "vllm_mode": "colocate"}
    return {}


def run_sft(rows: Callable[[Any], datasets.Dataset], start: Path, out: Path, spec: SFTSpec, *, seed: int,
            log: StepLog, lora: LoraSpec | None, use_cpu: bool, bf16: bool, report_to: Sequence[str] = (),
            checkpoint_every: int | None = None, checkpoint_keep: int = 2, resume_from: Path | None = None) -> Path:
    """Fine-tune the checkpoint at ``start`` on prompt-completion rows (``rows`` builds them with the start's
    tokenizer: a multi-turn episode's turns are rendered by its chat template); the loss covers the completions
    only. ``resume_from``: a ``trainer/checkpoint-N`` of this stage to continue from."""
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    from security_verifiers.train.processes import per_process

    tokenizer, model = _load(start, AutoTokenizer, AutoModelForCausalLM)
    config = SFTConfig(**_common_args(out, seed, use_cpu, bf16, report_to, checkpoint_every, checkpoint_keep),
                       num_train_epochs=spec.epochs, learning_rate=spec.learning_rate,
                       per_device_train_batch_size=per_process(spec.batch_size, "sft.batch_size"),
                       max_length=spec.max_length, completion_only_loss=True, lr_scheduler_type="cosine",
                       warmup_steps=0.05)
    trainer = SFTTrainer(model=model, args=config, train_dataset=rows(tokenizer),
                         processing_class=tokenizer, callbacks=[log.callback()], peft_config=_peft_config(lora))
    trainer.train(resume_from_checkpoint=str(resume_from) if resume_from is not None else None)
    return _save(trainer, tokenizer, out / "checkpoint")


def run_grpo(env: Environment, items: Sequence[Item], start: Path, out: Path, spec: GRPOSpec, variant: Variant,
             *, seed: int, log_path: Path, lora: LoraSpec | None, use_cpu: bool, bf16: bool,
             report_to: Sequence[str] = (), checkpoint_every: int | None = None, checkpoint_keep: int = 2,
             resume_from: Path | None = None) -> tuple[Path, EnvReward]:
    """Group-relative RL from the checkpoint at ``start``, rewarded by the environment's scorer; ``resume_from``:
    a ``trainer/checkpoint-N`` of this stage to continue from (its reward counts and skipped steps restored).
    The returned adapter's counts are the whole stage's, summed over processes, on the main process."""
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig

    from security_verifiers.train import processes

    tokenizer, model = _load(start, AutoTokenizer, AutoModelForCausalLM)
    # CPU-bound scorers (E2) score in killable workers under the eval's limits, here or on a Ray cluster
    from security_verifiers.harness.scoring_pool import make_pool

    pool = make_pool(env, spec.score_executor, None, spec.ray_address)
    if pool is not None:
        pool.warm_up()
    reward = EnvReward(env, items, pool)
    rollout = None
    if is_multi_turn(env):  # whole episodes, played by the harness's episode loop with the model being trained
        rollout = EpisodeRollout(env, items, tokenizer, reward, max_turn_tokens=spec.max_completion_length,
                                 max_episode_tokens=spec.max_episode_tokens)
    guard = NoSignalGuard()
    if resume_from is not None:
        _restore_counts(resume_from / COUNTS_FILE, reward, guard)
    log = StepLog(log_path, f"grpo:{variant}", reward, guard)
    config = GRPOConfig(
        **_common_args(out, seed, use_cpu, bf16, report_to, checkpoint_every, checkpoint_keep), max_steps=spec.steps,
        learning_rate=spec.learning_rate,
        per_device_train_batch_size=processes.per_process(spec.prompts_per_step * spec.num_generations,
                                                          "grpo.prompts_per_step x grpo.num_generations"),
        num_generations=spec.num_generations, max_completion_length=spec.max_completion_length,
        temperature=spec.temperature, beta=spec.beta, reward_weights=reward_weights(env, variant, spec.weights),
        multi_objective_aggregation=AGGREGATION[variant], scale_rewards="group", lr_scheduler_type="constant",
        log_completions=False, shuffle_dataset=True, **generation_args(spec),
    )
    trainer = _guarded_grpo_trainer()(model=model, reward_funcs=reward.functions(), args=config,
                                      train_dataset=episode_prompts(env, items) if rollout is not None
                                      else prompt_dataset(env, items), processing_class=tokenizer,
                                      callbacks=[guard.callback(), log.callback(), _counts_callback(reward, guard)],
                                      peft_config=_peft_config(lora), rollout_func=rollout)
    trainer.guard = guard
    try:
        trainer.train(resume_from_checkpoint=str(resume_from) if resume_from is not None else None)
    finally:
        if pool is not None:
            pool.close()
    totals, examples = processes.summed(reward.stats.as_dict()), processes.gathered(reward.error_examples)[:5]
    for key, value in totals.items():
        setattr(reward.stats, key, value)
    reward.error_examples = examples
    return _save(trainer, tokenizer, out / "checkpoint"), reward


def _counts_callback(reward: EnvReward, guard: NoSignalGuard) -> Any:
    """Writes :data:`COUNTS_FILE` into each intermediate checkpoint as transformers saves it."""
    from transformers import TrainerCallback

    from security_verifiers.train import processes

    class _Callback(TrainerCallback):  # type: ignore[misc]
        def on_save(self, args: Any, state: Any, control: Any, **_: Any) -> None:
            counts = processes.summed(reward.stats.as_dict())  # every process saves together: they agree
            examples = processes.gathered(reward.error_examples)[:5]
            folder = Path(args.output_dir) / f"checkpoint-{state.global_step}"
            if processes.is_main() and folder.is_dir():
                (folder / COUNTS_FILE).write_text(json.dumps(
                    {"reward": counts, "error_examples": examples,
                     "guard": {"steps": guard.steps, "skipped": guard.skipped}}), encoding="utf-8")

    return _Callback()


def _restore_counts(path: Path, reward: EnvReward, guard: NoSignalGuard) -> None:
    """The counts a checkpoint saved, on the main process (the others count from 0: their counts are summed with
    its); the guard's on every process (its decisions agree across them). A checkpoint without them (written
    before they were saved) restarts the counts, said on stderr."""
    from security_verifiers.train import processes

    if not path.is_file():
        print(f"sv train: warning: {path.parent} holds no reward counts; the stage's counts restart at 0",
              file=sys.stderr)
        return
    saved = json.loads(path.read_text(encoding="utf-8"))
    if processes.is_main():
        for key, value in saved["reward"].items():
            setattr(reward.stats, key, int(value))
        reward.error_examples = list(saved.get("error_examples") or [])
    guard.steps, guard.skipped = int(saved["guard"]["steps"]), int(saved["guard"]["skipped"])


def _load(start: Path, tokenizer_class: Any, model_class: Any) -> tuple[Any, Any]:
    """A checkpoint directory loads offline; anything else is a hub name (where a hub is reachable)."""
    local = Path(start).is_dir()
    return (tokenizer_class.from_pretrained(str(start), local_files_only=local),
            model_class.from_pretrained(str(start), local_files_only=local))


def _save(trainer: Any, tokenizer: Any, path: Path) -> Path:
    """Save full weights (LoRA adapters merged) and the tokenizer, so ``hf:PATH`` loads the result alone; the
    main process writes, the others wait until it has."""
    from security_verifiers.train import processes

    model = trainer.model
    if hasattr(model, "merge_and_unload"):
        model = model.merge_and_unload()
    if processes.is_main():
        model.save_pretrained(path)
        tokenizer.save_pretrained(path)
    processes.wait()
    return path
