"""``sv train``: one training run, from a preset to a checkpoint measured before and after on held-out items.

A run directory ``OUT/<run_id>/`` holds everything needed to trust (or redo) the result:

* ``manifest.json``: code version, environment name/version/config, train and held-out dataset ids and hashes,
  the starting model's identity, the full preset, the variant, the seed, package versions and the device;
  written first and rewritten with the outcome at the end;
* ``log.jsonl``: one line per logged step of each stage (TRL's metrics, per-component reward mean and std,
  masked scorer errors and parse failures since the previous line);
* ``init/`` (tiny preset: the config-built model and its tokenizer), ``sft/checkpoint``, ``grpo/checkpoint``;
* ``teacher/``: the run in which the SFT targets were produced (the reference, or any harness policy);
* ``eval/before`` and ``eval/after``: ordinary ``sv eval`` run directories on the held-out split, the starting
  point of the last stage against its result, scored by the same code as every other run;
* ``summary.json``: before, after and the paired delta of every metric with a 95% bootstrap interval over
  items (:func:`~security_verifiers.report.compare.compare_runs`), and ``learned``: the constant floor and each
  run's delta against it, AUC, calibration, distinct answers and label/probability contradictions
  (:mod:`.learned`), which the final printed line repeats; ``curves.png``.

Stages: ``sft`` fine-tunes the starting model on the target policy's answers; ``distill`` the same on a
teacher's answers that pass ``distill.min_reward`` (rejection sampling); ``grpo``, ``gdpo`` and ``weighted``
first run the SFT stage, then RL from its checkpoint, so "before" is the SFT model and the delta is the RL
stage's own. An RL run may instead start from a finished ``sft`` run of the same preset (``sft_run``): its
checkpoint is the start and its held-out evaluation is "before", so the RL variants of an ablation start
from one and the same model per seed (:mod:`security_verifiers.train.ablation`).
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import shutil
from pathlib import Path
from typing import Any, Literal

from security_verifiers.core.datasets import Dataset
from security_verifiers.core.errors import ConfigError
from security_verifiers.core.rundir import RunDir, code_version, environment_versions, now_iso, write_json_atomic
from security_verifiers.core.types import Item, Message
from security_verifiers.envs.base import Environment, get_env
from security_verifiers.train.episodes import is_multi_turn
from security_verifiers.train.presets import TrainPreset

Command = Literal["sft", "distill", "grpo", "gdpo", "weighted"]
RL_COMMANDS = ("grpo", "gdpo", "weighted")


def _say(message: str) -> None:
    print(f"[sv train] {message}", flush=True)


def _datasets(env: Environment, preset: TrainPreset) -> tuple[Dataset, Dataset]:
    spec = preset.data
    if spec.train_split in env.public_splits:
        raise ConfigError(f"train split {spec.train_split!r} is a public evaluation split; train on a generated one")
    train = env.dataset(spec.train_split, n=spec.train_n, seed=spec.data_seed)
    public = spec.heldout_split in env.public_splits
    heldout = env.dataset(spec.heldout_split, n=spec.heldout_n, seed=None if public else spec.data_seed + 1)
    overlap = {i.id for i in train.items} & {i.id for i in heldout.items}
    if overlap:
        raise ConfigError(f"{len(overlap)} held-out items are also in the train split; choose other seeds")
    return train, heldout


def _run_policy(env: Environment, model: str, dataset: Dataset, path: Path, *, samples: int = 1,
                max_tokens: int = 64, batch_size: int = 16) -> list[Episode]:
    """Play ``model`` (any ``--model`` the harness takes) on ``dataset`` into the run directory ``path``;
    returns (item id, the episode's messages, reward) for each scored rollout."""
    from security_verifiers.harness.policies import resolve_policy
    from security_verifiers.harness.runner import RunConfig, run_eval
    from security_verifiers.models.base import Sampling
    from security_verifiers.models.hf_local import HFLocalPolicy
    from security_verifiers.report import regenerate

    sampling = Sampling(max_tokens=max_tokens, temperature=0.0 if samples == 1 else 1.0)
    if model.startswith("hf:"):
        policy: Any = HFLocalPolicy(model.removeprefix("hf:"), sampling=sampling, batch_size=batch_size)
    else:
        policy = resolve_policy(model, env, sampling=sampling)
    run_dir = RunDir(path)
    config = RunConfig(concurrency=max(8, 2 * batch_size), timeout_s=3600.0, samples=samples)
    asyncio.run(run_eval(env, policy, dataset, run_dir, config, model_name=model, progress=True))
    regenerate(path)
    return _episodes(run_dir)


#: One scored rollout of a run: (item id, the episode's messages, reward).
Episode = tuple[str, list[Message], float]


def _final_answer(messages: list[Message]) -> str:
    return next((m.content for m in reversed(messages) if m.role == "assistant"), "")


def _episodes(run_dir: RunDir) -> list[Episode]:
    """(item id, the episode's messages, reward) of each scored rollout of a finished run directory."""
    out = []
    for line in run_dir.results_path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("error") is None and record.get("reward") is not None:
            messages = [Message.model_validate(m) for m in (record.get("transcript") or {}).get("messages") or []]
            out.append((record["item_id"], messages, float(record["reward"])))
    return out


def _init_model(env: Environment, preset: TrainPreset, train: Dataset, path: Path, seed: int,
                targets: list[Episode]) -> Path:
    """The starting checkpoint: a config-built model with a tokenizer trained on the train prompts and
    targets (tiny), or the given transformers checkpoint (hf) copied by reference."""
    spec = preset.model
    if spec.kind == "hf":
        assert spec.source is not None
        return Path(spec.source)
    from security_verifiers.train.tiny import tiny_model, train_tokenizer

    assert spec.tiny is not None
    texts = [m.content for item in train.items for m in env.prompt(item)]
    if is_multi_turn(env):  # everything the episodes show the model: tool schemas, replies, calls, tool results
        toolbox = env.tools(train.items[0])
        texts += [json.dumps(toolbox.schemas()) if toolbox is not None else ""]
        texts += [text for _, messages, _ in targets for m in messages
                  for text in (m.content, *(c.arguments for c in m.tool_calls))]
    else:
        texts += [_final_answer(messages) for _, messages, _ in targets]
    tokenizer = train_tokenizer(texts, spec.tiny.vocab_size)
    tiny_model(tokenizer, spec.tiny, seed).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def _identity(path: Path) -> dict[str, str]:
    from security_verifiers.models.hf_local import weights_digest

    return {"path": str(path), "weights_sha256": weights_digest(path)} if path.is_dir() else {"hub_name": str(path)}


def _device() -> dict[str, Any]:
    import torch

    if torch.cuda.is_available():
        return {"kind": "cuda", "name": torch.cuda.get_device_name(0), "count": torch.cuda.device_count()}
    return {"kind": "cpu", "cores": os.cpu_count(), "torch_threads": torch.get_num_threads(),
            "machine": platform.machine()}


def read_manifest(run: Path) -> dict[str, Any]:
    try:
        value = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise ConfigError(f"{run}: not a training run directory ({err})") from err
    if not isinstance(value, dict):
        raise ConfigError(f"{run}/manifest.json: not a JSON object")
    return value


def _check_sft_run(sft_run: Path, env: Environment, preset: TrainPreset, seed: int,
                   data: dict[str, Any]) -> dict[str, Any]:
    """A finished ``sft`` run whose start (environment, data, model, SFT settings, seed) is this run's."""
    manifest = read_manifest(sft_run)
    wanted = preset.model_dump(mode="json")
    given = manifest.get("preset") or {}
    problems = [f"{key}: {what}" for key, what in (
        ("status", manifest.get("status") != "finished" and "not finished"),
        ("command", manifest.get("command") != "sft" and f"{manifest.get('command')!r}, not 'sft'"),
        ("seed", manifest.get("seed") != seed and f"{manifest.get('seed')} != {seed}"),
        ("environment", manifest.get("env") != env.describe() and "another environment or config"),
        ("data", manifest.get("data") != data and "other train or held-out items"),
        *((f"preset.{k}", given.get(k) != wanted[k] and "differs") for k in ("env_options", "model", "data", "sft",
                                                                            "eval")),
    ) if what]
    if problems:
        raise ConfigError(f"{sft_run} cannot be this run's SFT start: {'; '.join(problems)}")
    return manifest


def train(command: Command, env_name: str, preset: TrainPreset, *, seed: int, out: Path, run_id: str,
          sft_run: Path | None = None) -> Path:
    """Run one ``sv train`` command; returns the run directory. ``sft_run``: an RL command starts from that
    finished ``sft`` run's checkpoint instead of running its own SFT stage."""
    import torch
    from transformers import set_seed

    from security_verifiers.report.compare import compare_runs
    from security_verifiers.train.curves import plot_curves
    from security_verifiers.train.learned import learned
    from security_verifiers.train.trainers import generation_args, run_grpo

    env = get_env(env_name, preset.env_options.get(env_name, {}))
    preset = preset.for_env(env_name)
    if sft_run is not None and command not in RL_COMMANDS:
        raise ConfigError(f"only an RL command starts from an SFT run, not {command!r}")
    if command in RL_COMMANDS:
        generation_args(preset.grpo)  # an unusable generation backend is refused before the SFT stage runs
    run = out / run_id
    if run.exists():
        raise ConfigError(f"{run} already exists; choose another --run-id")
    run.mkdir(parents=True)
    if preset.threads:
        torch.set_num_threads(preset.threads)
    set_seed(seed)
    if preset.log_to:
        from security_verifiers.tracking import trainer_defaults

        trainer_defaults(preset.log_to, out, run, f"sv-train-{env.name}")
    use_cpu = not torch.cuda.is_available()
    bf16 = preset.model.dtype == "bfloat16" and not use_cpu
    train_set, heldout = _datasets(env, preset)
    manifest: dict[str, Any] = {
        "status": "running", "started_at": now_iso(), "command": command, "variant": command, "seed": seed,
        "code": code_version(), "env": env.describe(),
        "data": {"train": {"id": train_set.id, "hash": train_set.hash, "n": len(train_set)},
                 "heldout": {"id": heldout.id, "hash": heldout.hash, "n": len(heldout)}},
        "preset": preset.model_dump(mode="json"), "versions": environment_versions(), "device": _device(),
    }
    write_json_atomic(run / "manifest.json", manifest)
    log_path = run / "log.jsonl"
    if sft_run is not None:
        start_manifest = _check_sft_run(sft_run, env, preset, seed, manifest["data"])
        before = after = sft_run / "sft" / "checkpoint"
        recorded = (start_manifest.get("final_model") or {}).get("weights_sha256")
        if _identity(after).get("weights_sha256") != recorded:
            raise ConfigError(f"{after} is not the checkpoint its manifest recorded (changed since)")
        manifest.update(sft_from={"run": str(sft_run), "model": start_manifest.get("final_model")},
                        model=start_manifest.get("model"), sft_targets=start_manifest.get("sft_targets"))
        targets = _episodes(RunDir(sft_run / "teacher"))
        manifest["answer_tokens"] = _fit_budgets(command, env, preset, after, _replies(env, after, train_set, targets),
                                                 (start_manifest.get("sft_targets") or {}).get("policy", "the teacher"))
        shutil.copytree(sft_run / "eval" / "after", run / "eval" / "before")
    else:
        before, after = _sft_stage(command, env, preset, train_set, run, manifest, seed, use_cpu, bf16)
    if command in RL_COMMANDS:
        sft = after
        _say(f"{command} for {preset.grpo.steps} steps from the SFT checkpoint")
        after, reward = run_grpo(env, list(train_set.items), sft, run / "grpo", preset.grpo, command, seed=seed,
                                 log_path=log_path, lora=preset.model.lora, use_cpu=use_cpu, bf16=bf16,
                                 report_to=preset.log_to)
        before = sft
        manifest["rl_reward_counts"] = reward.stats.as_dict()
        manifest["rl_scorer_error_examples"] = reward.error_examples
    for label, path in (("before", before), ("after", after)):
        if (run / "eval" / label).exists():
            continue
        _say(f"held-out evaluation {label} ({path.name if path.is_dir() else path}) on {len(heldout)} items")
        _run_policy(env, f"hf:{path}", heldout, run / "eval" / label, max_tokens=preset.eval.max_tokens,
                    batch_size=preset.eval.batch_size)
    summary = compare_runs(run / "eval" / "before", run / "eval" / "after")
    summary["command"] = command
    summary["seed"] = seed
    found = learned(run / "eval" / "before", run / "eval" / "after")
    summary["learned"] = found.model_dump(mode="json")
    write_json_atomic(run / "summary.json", summary)
    plot_curves(log_path, run / "curves.png")
    manifest.update(status="finished", finished_at=now_iso(), final_model=_identity(after))
    write_json_atomic(run / "manifest.json", manifest)
    headline = summary["headline"][0] if summary["headline"] else "reward_mean"
    row = summary["metrics"][headline]
    _say(f"{headline}: before {row['a']:.4f}, after {row['b']:.4f}, delta {row['delta']:+.4f} "
         f"[{row['ci'][0]:+.4f}, {row['ci'][1]:+.4f}]; {found.line()} — {run}")
    if preset.log_to:
        from security_verifiers.tracking import log_eval_run

        for label in ("before", "after"):
            for line in log_eval_run(run / "eval" / label, preset.log_to, out, project=f"sv-train-{env.name}"):
                _say(f"held-out evaluation {label}: {line}")
    return run


def _replies(env: Environment, tokenizer_dir: Path, train_set: Dataset, episodes: list[Episode]) -> list[str]:
    """What the model is to write, reply by reply: a single-turn episode's answer; each turn of a multi-turn
    episode as the chat template renders it (its tool calls included)."""
    if not is_multi_turn(env):
        return [_final_answer(messages) for _, messages, _ in episodes]
    from transformers import AutoTokenizer

    from security_verifiers.train.episodes import turn_rows

    tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_dir), local_files_only=tokenizer_dir.is_dir())
    by_id = {item.id: item for item in train_set.items}
    return [row["completion"] for row in turn_rows(tokenizer, env, [(by_id[i], m) for i, m, _ in episodes])]


def _fit_budgets(command: Command, env: Environment, preset: TrainPreset, tokenizer_dir: Path, answers: list[str],
                 teacher: str) -> dict[str, Any]:
    """The teacher's answers measured against the run's completion budgets (:mod:`.budget`): refused, before
    any training, when a budget would cut more than 5% of them."""
    from security_verifiers.train.budget import answer_tokens, check_budgets

    budgets = {"eval.max_tokens": preset.eval.max_tokens}
    if command in RL_COMMANDS:
        budgets["grpo.max_completion_length"] = preset.grpo.max_completion_length
    lengths = answer_tokens(tokenizer_dir, answers)
    return check_budgets(lengths, budgets, where=f"preset {preset.name!r} on {env.name}",
                         teacher=teacher).model_dump()


def _sft_stage(command: Command, env: Environment, preset: TrainPreset, train_set: Dataset, run: Path,
               manifest: dict[str, Any], seed: int, use_cpu: bool, bf16: bool) -> tuple[Path, Path]:
    """Targets (a policy's answers, filtered by reward for ``distill``), the starting model, and SFT on the
    targets; returns (start, SFT checkpoint)."""
    from security_verifiers.adapters.trl import sft_dataset
    from security_verifiers.train.episodes import turn_dataset
    from security_verifiers.train.trainers import StepLog, run_sft

    teacher = preset.distill.teacher if command == "distill" else preset.sft.targets
    _say(f"answers of {teacher} on {len(train_set)} train items (the SFT targets)")
    answers = _run_policy(env, teacher, train_set, run / "teacher",
                          samples=preset.distill.samples if command == "distill" else 1,
                          max_tokens=preset.eval.max_tokens, batch_size=preset.eval.batch_size)
    if command == "distill":
        answers = [a for a in answers if a[2] >= preset.distill.min_reward]
    if not answers:
        raise ConfigError(f"no SFT targets: {teacher} produced no answer passing the threshold")
    manifest["sft_targets"] = {"policy": teacher, "kept": len(answers)}
    start = _init_model(env, preset, train_set, run / "init", seed, answers)
    manifest["model"] = _identity(start)
    manifest["answer_tokens"] = _fit_budgets(command, env, preset, start, _replies(env, start, train_set, answers),
                                             teacher)
    write_json_atomic(run / "manifest.json", manifest)

    by_id = {item.id: item for item in train_set.items}
    episodes: list[tuple[Item, list[Message]]] = [(by_id[i], messages) for i, messages, _ in answers]

    def rows(tokenizer: Any) -> Any:
        if is_multi_turn(env):  # one row per assistant turn, rendered by the start's chat template
            return turn_dataset(tokenizer, env, episodes)
        return sft_dataset(env, [item for item, _ in episodes], [_final_answer(m) for _, m in episodes])

    _say(f"SFT on {len(answers)} {'episodes' if is_multi_turn(env) else 'answers'} ({preset.sft.epochs} epochs)")
    sft = run_sft(rows, start, run / "sft", preset.sft, seed=seed, log=StepLog(run / "log.jsonl", "sft"),
                  lora=preset.model.lora, use_cpu=use_cpu, bf16=bf16, report_to=preset.log_to)
    return start, sft
