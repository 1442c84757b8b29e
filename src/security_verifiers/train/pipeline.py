"""``sv train``: one training run, from a preset to a checkpoint measured before and after on held-out items.

A run directory ``OUT/<run_id>/`` holds everything needed to trust (or redo) the result:

* ``manifest.json``: code version, environment name/version/config, train and held-out dataset ids and hashes,
  the starting model's identity, the full preset, the variant, the seed, package versions and the device;
  written first and rewritten with the outcome at the end;
* ``log.jsonl``: one line per logged step of each stage (TRL's metrics, per-component reward mean and std,
  masked scorer errors and parse failures since the previous line);
* ``init/`` (tiny preset: the config-built model and its tokenizer), ``sft/checkpoint``, ``grpo/checkpoint``;
  while a stage trains, its state every ``checkpoint_every`` steps under ``sft/trainer/checkpoint-N`` (and
  ``grpo/…``), removed once its final checkpoint is written and recorded in the manifest's ``stages``;
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

An interrupted run continues with ``sv train --resume RUN_DIR`` (:mod:`.resume`): each step below looks at what
the run directory already holds (a finished teacher or evaluation is kept, a partial one resumed; a recorded stage
is kept, an interrupted one continues from its last ``trainer/checkpoint-N``). Under several processes
(:mod:`.processes`) every process trains and the main one alone writes and evaluates.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from security_verifiers.core.datasets import Dataset
from security_verifiers.core.errors import ConfigError
from security_verifiers.core.rundir import RunDir, code_version, environment_versions, now_iso, write_json_atomic
from security_verifiers.core.types import Item, Message
from security_verifiers.envs.base import Environment, get_env
from security_verifiers.train import processes
from security_verifiers.train.episodes import is_multi_turn
from security_verifiers.train.presets import TrainPreset

Command = Literal["sft", "distill", "grpo", "gdpo", "weighted"]
RL_COMMANDS = ("grpo", "gdpo", "weighted")


def _say(message: str) -> None:
    if processes.is_main():
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


def _complete(path: Path) -> bool:
    """Whether the ``sv eval`` run directory ``path`` holds a finished run with its report (nothing to play)."""
    try:
        metadata = RunDir(path).read_metadata()
    except (OSError, ValueError):
        return False
    return metadata.get("status") == "finished" and (metadata.get("rollouts") or {}).get("remaining") == 0 \
        and (path / "report.md").is_file()


def _run_policy(env: Environment, model: str, dataset: Dataset, path: Path, *, samples: int = 1,
                max_tokens: int = 64, batch_size: int = 16) -> list[Episode]:
    """Play ``model`` (any ``--model`` the harness takes) on ``dataset`` into the run directory ``path``;
    returns (item id, the episode's messages, reward) for each scored rollout. A finished run already there is
    read, not played again; an unfinished one is resumed (its finished rollouts kept)."""
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
    if _complete(path):
        return _episodes(run_dir)
    config = RunConfig(concurrency=max(8, 2 * batch_size), timeout_s=3600.0, samples=samples)
    asyncio.run(run_eval(env, policy, dataset, run_dir, config, model_name=model, progress=True,
                         resume=run_dir.metadata_path.is_file()))
    regenerate(path)
    return _episodes(run_dir)


#: One scored rollout of a run: (item id, the episode's messages, reward).
Episode = tuple[str, list[Message], float]


def _final_answer(messages: list[Message]) -> str:
    return next((m.content for m in reversed(messages) if m.role == "assistant"), "")


def _episodes(run_dir: RunDir) -> list[Episode]:
    """(item id, the episode's messages, reward) of each scored rollout of a finished run directory (the last record
    of a rollout that a resume redid)."""
    from security_verifiers.report.summary import read_results

    return [(r.item_id, list(r.transcript.messages), float(r.reward)) for r in read_results(run_dir.results_path)
            if r.error is None and r.reward is not None and r.transcript is not None]


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


@dataclass
class Run:
    """One training run as its stages see it: what it trains, where, and its manifest (written by the main process
    only). ``resume``: this session's entry of the manifest's ``resumes`` when it continues an earlier one."""

    path: Path
    command: Command
    env: Environment
    preset: TrainPreset
    seed: int
    train_set: Dataset
    heldout: Dataset
    manifest: dict[str, Any]
    use_cpu: bool
    bf16: bool
    resume: dict[str, Any] | None = field(default=None)

    @property
    def log_path(self) -> Path:
        return self.path / "log.jsonl"

    def save(self) -> None:
        if processes.is_main():
            write_json_atomic(self.path / "manifest.json", self.manifest)


def check_processes(command: Command, preset: TrainPreset, from_sft_run: bool) -> None:
    """Under several processes, the preset's batches must divide among them (refused before anything runs)."""
    processes.check_one_machine()
    if not from_sft_run:
        processes.per_process(preset.sft.batch_size, "sft.batch_size")
    if command in RL_COMMANDS:
        processes.per_process(preset.grpo.prompts_per_step * preset.grpo.num_generations,
                              "grpo.prompts_per_step x grpo.num_generations")


def prepare(command: Command, env: Environment, preset: TrainPreset, seed: int, out: Path, run: Path,
            manifest: dict[str, Any] | None = None) -> Run:
    """Threads, seed and trackers of this process; the datasets; the run's manifest (a new one unless given)."""
    import torch
    from transformers import set_seed

    from security_verifiers.harness.run_metadata import process_identity

    if preset.threads:
        torch.set_num_threads(preset.threads)
    set_seed(seed)
    if preset.log_to:
        from security_verifiers.tracking import trainer_defaults

        trainer_defaults(preset.log_to, out, run, f"sv-train-{env.name}")
    use_cpu = not torch.cuda.is_available()
    bf16 = preset.model.dtype == "bfloat16" and not use_cpu
    train_set, heldout = _datasets(env, preset)
    data = {"train": {"id": train_set.id, "hash": train_set.hash, "n": len(train_set)},
            "heldout": {"id": heldout.id, "hash": heldout.hash, "n": len(heldout)}}
    if manifest is None:
        manifest = {
            "status": "running", "started_at": now_iso(), "command": command, "variant": command, "seed": seed,
            "code": code_version(), "env": env.describe(), "data": data,
            "preset": preset.model_dump(mode="json"), "versions": environment_versions(), "device": _device(),
            "processes": processes.count(),
        }
    elif manifest.get("data") != data:
        raise ConfigError(f"{run}: the train or held-out items made now differ from the run's (data "
                          f"{manifest.get('data')} then, {data} now); start a new run")
    manifest["process"] = process_identity()  # the main process's: a resume refuses a run it still plays
    return Run(run, command, env, preset, seed, train_set, heldout, manifest, use_cpu, bf16)


def train(command: Command, env_name: str, preset: TrainPreset, *, seed: int, out: Path, run_id: str,
          sft_run: Path | None = None) -> Path:
    """Run one ``sv train`` command; returns the run directory. ``sft_run``: an RL command starts from that
    finished ``sft`` run's checkpoint instead of running its own SFT stage."""
    from security_verifiers.train.trainers import generation_args

    env = get_env(env_name, preset.env_options.get(env_name, {}))
    preset = preset.for_env(env_name)
    if sft_run is not None and command not in RL_COMMANDS:
        raise ConfigError(f"only an RL command starts from an SFT run, not {command!r}")
    if command in RL_COMMANDS:
        generation_args(preset.grpo)  # an unusable generation backend is refused before the SFT stage runs
    check_processes(command, preset, sft_run is not None)
    run = out / run_id
    if run.exists():
        raise ConfigError(f"{run} already exists; choose another --run-id")
    processes.wait()  # every process has looked before the main one creates it
    if processes.is_main():
        run.mkdir(parents=True)
    r = prepare(command, env, preset, seed, out, run)
    r.save()
    return run_stages(r, sft_run)


def run_stages(r: Run, sft_run: Path | None) -> Path:
    """The run's stages, each skipped or continued where the run directory already holds it; the manifest says
    how the run ended (``finished``, or ``stopped``/``failed`` and why)."""
    from security_verifiers.harness.run_metadata import end_status

    try:
        return _stages(r, sft_run)
    except BaseException as err:
        if r.manifest.get("status") == "running":
            r.manifest.update(end_status(err, stopped_early=False, remaining=0), ended_at=now_iso())
            r.save()
        raise


def _stages(r: Run, sft_run: Path | None) -> Path:
    from security_verifiers.report.compare import compare_runs
    from security_verifiers.train.curves import plot_curves
    from security_verifiers.train.learned import learned

    run, env, preset, manifest = r.path, r.env, r.preset, r.manifest
    if sft_run is not None:
        before, after = _from_sft_run(r, sft_run)
    else:
        before, after = _sft_stage(r)
    if r.command in RL_COMMANDS:
        before, after = after, _grpo_stage(r, after)
    if not processes.is_main():
        return run  # the main process evaluates and writes the rest
    for label, path in (("before", before), ("after", after)):
        if _complete(run / "eval" / label):
            continue
        _say(f"held-out evaluation {label} ({path.name if path.is_dir() else path}) on {len(r.heldout)} items")
        _run_policy(env, f"hf:{path}", r.heldout, run / "eval" / label, max_tokens=preset.eval.max_tokens,
                    batch_size=preset.eval.batch_size)
    summary = compare_runs(run / "eval" / "before", run / "eval" / "after")
    summary["command"] = r.command
    summary["seed"] = r.seed
    found = learned(run / "eval" / "before", run / "eval" / "after")
    summary["learned"] = found.model_dump(mode="json")
    write_json_atomic(run / "summary.json", summary)
    plot_curves(r.log_path, run / "curves.png")
    manifest.update(status="finished", status_reason=None, finished_at=now_iso(), final_model=_identity(after))
    r.save()
    headline = summary["headline"][0] if summary["headline"] else "reward_mean"
    row = summary["metrics"][headline]
    _say(f"{headline}: before {row['a']:.4f}, after {row['b']:.4f}, delta {row['delta']:+.4f} "
         f"[{row['ci'][0]:+.4f}, {row['ci'][1]:+.4f}]; {found.line()} — {run}")
    if preset.log_to:
        from security_verifiers.tracking import log_eval_run

        for label in ("before", "after"):
            for line in log_eval_run(run / "eval" / label, preset.log_to, run.parent,
                                     project=f"sv-train-{env.name}"):
                _say(f"held-out evaluation {label}: {line}")
    return run


def _from_sft_run(r: Run, sft_run: Path) -> tuple[Path, Path]:
    """The start of an RL run from a finished ``sft`` run: its checkpoint, and its held-out evaluation as
    "before"."""
    start_manifest = _check_sft_run(sft_run, r.env, r.preset, r.seed, r.manifest["data"])
    sft = sft_run / "sft" / "checkpoint"
    recorded = (start_manifest.get("final_model") or {}).get("weights_sha256")
    if _identity(sft).get("weights_sha256") != recorded:
        raise ConfigError(f"{sft} is not the checkpoint its manifest recorded (changed since)")
    if processes.is_main() and "answer_tokens" not in r.manifest:
        r.manifest.update(sft_from={"run": str(sft_run.resolve()), "model": start_manifest.get("final_model")},
                          model=start_manifest.get("model"), sft_targets=start_manifest.get("sft_targets"))
        targets = _episodes(RunDir(sft_run / "teacher"))
        teacher = (start_manifest.get("sft_targets") or {}).get("policy", "the teacher")
        r.manifest["answer_tokens"] = _fit_budgets(r.command, r.env, r.preset, sft,
                                                   _replies(r.env, sft, r.train_set, targets), teacher)
        r.save()
    if processes.is_main() and not (r.path / "eval" / "before").exists():
        partial = r.path / "eval" / "before.copying"
        shutil.rmtree(partial, ignore_errors=True)
        shutil.copytree(sft_run / "eval" / "after", partial)
        partial.rename(r.path / "eval" / "before")
    processes.wait()
    return sft, sft


def _grpo_stage(r: Run, sft: Path) -> Path:
    """RL from the SFT checkpoint (or the recorded result of an earlier session)."""
    from security_verifiers.train.checkpoints import finish_stage, prepare_stage, stage_done
    from security_verifiers.train.trainers import run_grpo

    if stage_done(r, "grpo"):
        return r.path / "grpo" / "checkpoint"
    resume_from = prepare_stage(r, "grpo", f"grpo:{r.command}")
    step = f", resumed from step {resume_from.name.split('-')[-1]}" if resume_from is not None else ""
    _say(f"{r.command} for {r.preset.grpo.steps} steps from the SFT checkpoint{step}")
    after, reward = run_grpo(r.env, list(r.train_set.items), sft, r.path / "grpo", r.preset.grpo, r.command,
                             seed=r.seed, log_path=r.log_path, lora=r.preset.model.lora, use_cpu=r.use_cpu,
                             bf16=r.bf16, report_to=r.preset.log_to, checkpoint_every=r.preset.checkpoint_every,
                             checkpoint_keep=r.preset.checkpoint_keep, resume_from=resume_from)
    r.manifest["rl_reward_counts"] = reward.stats.as_dict()
    r.manifest["rl_scorer_error_examples"] = reward.error_examples
    finish_stage(r, "grpo", after)
    return after


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


def _sft_stage(r: Run) -> tuple[Path, Path]:
    """Targets (a policy's answers, filtered by reward for ``distill``), the starting model, and SFT on the
    targets; returns (start, SFT checkpoint). The main process plays the teacher and builds the start; the others
    read them once it has."""
    from security_verifiers.adapters.trl import sft_dataset
    from security_verifiers.train.checkpoints import finish_stage, prepare_stage, stage_done
    from security_verifiers.train.episodes import turn_dataset
    from security_verifiers.train.trainers import StepLog, run_sft

    command, env, preset, run, train_set = r.command, r.env, r.preset, r.path, r.train_set
    start = run / "init" if preset.model.kind == "tiny" else Path(str(preset.model.source))
    if stage_done(r, "sft"):
        return start, run / "sft" / "checkpoint"
    teacher = preset.distill.teacher if command == "distill" else preset.sft.targets
    _check_drop_fields(env, preset)  # before the teacher plays for minutes
    if processes.is_main():
        if not _complete(run / "teacher"):
            _say(f"answers of {teacher} on {len(train_set)} train items (the SFT targets)")
        answers = _targets(command, env, preset, _run_policy(
            env, teacher, train_set, run / "teacher", samples=preset.distill.samples if command == "distill" else 1,
            max_tokens=preset.eval.max_tokens, batch_size=preset.eval.batch_size))
        if not answers:
            raise ConfigError(f"no SFT targets: {teacher} produced no answer passing the threshold")
        r.manifest["sft_targets"] = {"policy": teacher, "kept": len(answers)}
        recorded = (r.manifest.get("model") or {}).get("weights_sha256")
        if recorded is None or not start.is_dir() or _identity(start).get("weights_sha256") != recorded:
            start = _init_model(env, preset, train_set, run / "init", r.seed, answers)
        r.manifest["model"] = _identity(start)
        r.manifest["answer_tokens"] = _fit_budgets(command, env, preset, start,
                                                   _replies(env, start, train_set, answers), teacher)
        r.save()
    processes.wait()  # the teacher's answers and the start are written
    if not processes.is_main():
        answers = _targets(command, env, preset, _episodes(RunDir(run / "teacher")))

    by_id = {item.id: item for item in train_set.items}
    episodes: list[tuple[Item, list[Message]]] = [(by_id[i], messages) for i, messages, _ in answers]

    def rows(tokenizer: Any) -> Any:
        if is_multi_turn(env):  # one row per assistant turn, rendered by the start's chat template
            return turn_dataset(tokenizer, env, episodes)
        return sft_dataset(env, [item for item, _ in episodes], [_final_answer(m) for _, m in episodes])

    resume_from = prepare_stage(r, "sft", "sft")
    step = f", resumed from step {resume_from.name.split('-')[-1]}" if resume_from is not None else ""
    _say(f"SFT on {len(answers)} {'episodes' if is_multi_turn(env) else 'answers'} ({preset.sft.epochs} epochs{step})")
    sft = run_sft(rows, start, run / "sft", preset.sft, seed=r.seed, log=StepLog(r.log_path, "sft"),
                  lora=preset.model.lora, use_cpu=r.use_cpu, bf16=r.bf16, report_to=preset.log_to,
                  checkpoint_every=preset.checkpoint_every, checkpoint_keep=preset.checkpoint_keep,
                  resume_from=resume_from)
    finish_stage(r, "sft", sft)
    return start, sft


def _targets(command: Command, env: Environment, preset: TrainPreset, answers: list[Episode]) -> list[Episode]:
    """The SFT targets among a teacher's answers: all of them, or for ``distill`` those passing its threshold (on
    the whole answer); then the preset's ``sft.drop_fields`` taken out of each answer."""
    kept = [a for a in answers if a[2] >= preset.distill.min_reward] if command == "distill" else answers
    drop = preset.sft.drop_fields
    if not drop:
        return kept
    _check_drop_fields(env, preset)
    return [(item_id, [*messages[:-1], messages[-1].model_copy(update={"content": drop_fields(
        messages[-1].content, drop, where=f"{item_id}'s target")})], reward) for item_id, messages, reward in kept]


def _check_drop_fields(env: Environment, preset: TrainPreset) -> None:
    if preset.sft.drop_fields and is_multi_turn(env):
        raise ConfigError(f"sft.drop_fields: {env.name} plays whole episodes; fields are dropped from single answers "
                          "only")


def drop_fields(answer: str, fields: list[str], where: str) -> str:
    """``answer``, a JSON object, without ``fields`` (the others in their order; a missing one is not an error).

    >>> drop_fields('{"label": "Phishing", "p_phishing": 0.9, "evidence": [{"quote": "x"}]}', ["evidence"], "t")
    '{"label": "Phishing", "p_phishing": 0.9}'
    >>> drop_fields('Phishing', ["evidence"], "item-1's target")
    Traceback (most recent call last):
    ...
    security_verifiers.core.errors.ConfigError: sft.drop_fields: item-1's target is not a JSON object: 'Phishing'
    """
    try:
        value = json.loads(answer)
    except json.JSONDecodeError:
        value = None
    if not isinstance(value, dict):
        raise ConfigError(f"sft.drop_fields: {where} is not a JSON object: {answer[:80]!r}")
    return json.dumps({k: v for k, v in value.items() if k not in fields}, ensure_ascii=False)
