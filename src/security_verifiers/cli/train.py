"""``sv train``: SFT, GRPO and their variants on an environment's rewards."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from security_verifiers.cli.common import (
    DEFAULT_TRAIN_OUT,
    add_log_level,
    check_text_file,
    parse_env_options,
)
from security_verifiers.core.errors import ConfigError


def _preset(args: argparse.Namespace, env_name: str) -> Any:
    """The preset the flags give (``--preset``/``--config``, ``--env-option``, ``--log-to``)."""
    from security_verifiers.envs.base import get_env
    from security_verifiers.train.presets import load_preset

    if args.config:
        check_text_file(Path(args.config), "--config")
    preset = load_preset(args.preset, Path(args.config) if args.config else None)
    options = parse_env_options(args.env_option)
    if options:  # recorded in the run's manifest with the rest of the preset
        merged = {**preset.env_options.get(env_name, {}), **options}
        preset = preset.model_copy(update={"env_options": {**preset.env_options, env_name: merged}})
    get_env(env_name, preset.env_options.get(env_name, {}))  # a bad option is named before anything trains
    if args.log_to is not None:
        preset = preset.model_copy(update={"log_to": _log_to(args.log_to)})
    return preset


def _log_to(text: str) -> list[str]:
    from security_verifiers.tracking import check_targets, parse_targets

    targets = parse_targets(text)
    check_targets(targets)
    return list(targets)


def _import_pipeline() -> None:
    try:
        import security_verifiers.train.pipeline  # noqa: F401
    except ImportError as err:
        raise ConfigError(f"sv train needs the training extra ({err.name} is missing): pip install -e '.[train]'") \
            from err


def _resume(args: argparse.Namespace) -> int:
    """``sv train --resume RUN_DIR``: the run's settings from its manifest; flags given again must agree."""
    _import_pipeline()
    from security_verifiers.train.pipeline import read_manifest
    from security_verifiers.train.resume import resume

    run = Path(args.resume)
    if not run.is_dir():
        raise ConfigError(f"--resume: {run} is not a directory (give a training run's directory, "
                          f"{DEFAULT_TRAIN_OUT}/<run_id>)")
    if args.command == "ablation" or args.variants is not None or args.seeds is not None:
        raise ConfigError("--resume continues one run; an ablation continues when run again with the same arguments")
    if args.run_id is not None or args.out != DEFAULT_TRAIN_OUT:
        raise ConfigError("--resume takes the run's directory; --out and --run-id are not given with it")
    given: dict[str, Any] = {}
    if args.command is not None:
        given["command"] = args.command
    if args.env is not None:
        given["env"] = args.env
    if args.seed is not None:
        given["seed"] = args.seed
    if args.preset or args.config:
        env_name = args.env or (read_manifest(run).get("env") or {}).get("name")
        if not isinstance(env_name, str):
            raise ConfigError(f"{run}: not a training run directory (its manifest names no environment)")
        given["preset"] = _preset(args, env_name).for_env(env_name).model_dump(mode="json")
    else:
        if args.env_option:
            given["env_options"] = parse_env_options(args.env_option)
        if args.log_to is not None:
            given["log_to"] = _log_to(args.log_to)
    resume(run, given)
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    from security_verifiers.core.rundir import check_run_id, new_run_id
    from security_verifiers.envs.base import get_env

    if args.seed is not None and args.seed < 0:
        raise ConfigError(f"--seed must be non-negative, got {args.seed}")  # (--seeds is checked by the ablation)
    if args.resume is not None:
        return _resume(args)
    if args.command is None or args.env is None or not (args.preset or args.config):
        raise ConfigError("sv train needs COMMAND, --env and one of --preset/--config (or --resume RUN_DIR to "
                          "continue a run)")
    get_env(args.env)  # an unknown environment is named before anything loads
    preset = _preset(args, args.env)
    _import_pipeline()
    from security_verifiers.train import processes
    from security_verifiers.train.pipeline import train

    if args.command == "ablation":
        from security_verifiers.train.ablation import parse_variants, run_ablation

        if args.run_id is not None or args.seed is not None:
            raise ConfigError("sv train ablation takes --seeds N (seeds 0..N-1) and no --seed or --run-id")
        if processes.count() > 1:
            raise ConfigError("sv train ablation runs in one process; launch its runs one by one under several")
        out = Path(args.out) / (f"ablation-{args.env}-{preset.name}" if args.out == DEFAULT_TRAIN_OUT else "")
        run_ablation(args.env, preset, parse_variants(args.variants or "grpo,gdpo,distill"),
                     3 if args.seeds is None else args.seeds, out)
        return 0
    if args.variants is not None or args.seeds is not None:
        raise ConfigError(f"--variants and --seeds belong to sv train ablation, not {args.command}")
    seed = 0 if args.seed is None else args.seed
    if args.run_id is not None:
        check_run_id(args.run_id)  # a name under --out, not a path
    run_id = args.run_id if args.run_id is not None else f"{args.command}-{args.env}-s{seed}-{new_run_id()}"
    run_id = processes.agreed(run_id)  # several processes: the main one's (made from its clock)
    train(args.command, args.env, preset, seed=seed, out=Path(args.out), run_id=run_id)
    return 0


# -- parser ----------------------------------------------------------------------------------
def register(sub: Any) -> None:
    """Add ``sv train`` to the command line's subcommands."""
    tr = sub.add_parser("train", help="Train a model on an environment's rewards (SFT, GRPO, GDPO, distillation).",
                        description="SFT on a policy's answers (sft), on a teacher's answers that pass a reward "
                        "threshold (distill), or SFT then RL on the environment's scorer through TRL: grpo (total "
                        "reward, group-normalised), gdpo (each component normalised in its group, then weighted), "
                        "weighted (components with the preset's weights). Writes OUT/<run_id>/ with manifest.json, "
                        "log.jsonl, curves.png, checkpoints, eval/before and eval/after run directories on the "
                        "held-out split and summary.json (paired deltas with 95% bootstrap intervals). "
                        "ablation: the --variants over --seeds seeds at equal budget, every RL variant of a seed "
                        "starting from one SFT run; writes ablation.md, ablation.json, heldout.png and curves.png, "
                        "and continues where it stopped when run again with the same arguments. "
                        "--resume RUN_DIR continues an interrupted run from its last checkpoint (saved every "
                        "checkpoint_every steps of the preset), stage by stage, with the settings its manifest "
                        "records. Data-parallel on several GPUs of one machine: accelerate launch --multi_gpu "
                        "--num_processes N -m security_verifiers.cli train ... (or torchrun --nproc_per_node N "
                        "-m security_verifiers.cli train ...): every process trains, the main one alone plays the "
                        "teacher, evaluates and writes the run directory.")
    tr.add_argument("command", nargs="?", choices=["sft", "distill", "grpo", "gdpo", "weighted", "ablation"],
                    help="What to train (with --resume: read from the run's manifest).")
    tr.add_argument("--resume", default=None, metavar="RUN_DIR",
                    help="Continue the training run in RUN_DIR where it stopped: its command, environment, preset "
                    "and seed come from its manifest.json (a flag given again must agree); a stage already recorded "
                    "is kept, an interrupted one continues from its last trainer/checkpoint-N, the teacher's and "
                    "held-out runs are kept or resumed. A finished run is left as it is.")
    tr.add_argument("--env", default=None, help="Environment name. Tool-using modes and the red-team environments "
                    "train over whole episodes (tool calls and results in the context, tool results out of the loss).")
    tr.add_argument("--env-option", action="append", default=[], metavar="KEY=VALUE",
                    help="Environment option (repeatable; values read as JSON), over the preset's env_options, e.g. "
                    "mode=tools; `sv envs --options ENV` lists them.")
    source = tr.add_mutually_exclusive_group()
    source.add_argument("--preset", help="A shipped preset: tiny-cpu (config-built model, 2 CPU cores) or lora-gpu.")
    source.add_argument("--config", help="A preset file of the same shape (YAML).")
    tr.add_argument("--seed", type=int, default=None, help="Seed of initialisation, shuffling and sampling "
                    "(default 0).")
    tr.add_argument("--out", default=DEFAULT_TRAIN_OUT, help="Parent of the run directory (ablation: the "
                    "ablation's directory; default outputs/train/ablation-ENV-PRESET).")
    tr.add_argument("--variants", default=None, help="ablation: comma-separated, from grpo, gdpo, weighted, "
                    "distill (default grpo,gdpo,distill).")
    tr.add_argument("--seeds", type=int, default=None, help="ablation: number of seeds, 0..N-1 (default 3).")
    tr.add_argument("--run-id", default=None, help="Run directory name (default: command, env, seed and time).")
    tr.add_argument("--log-to", default=None, metavar="wandb,mlflow",
                    help="Also log every training step (TRL's own callbacks) and the held-out evaluations to these "
                    "trackers; needs the tracking extra (default: none; log.jsonl is the record).")
    add_log_level(tr)
    tr.set_defaults(func=cmd_train)
