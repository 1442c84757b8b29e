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


def cmd_train(args: argparse.Namespace) -> int:
    from security_verifiers.core.rundir import check_run_id, new_run_id
    from security_verifiers.envs.base import get_env
    from security_verifiers.train.presets import load_preset

    get_env(args.env)  # an unknown environment is named before anything loads
    if args.config:
        check_text_file(Path(args.config), "--config")
    if args.seed is not None and args.seed < 0:
        raise ConfigError(f"--seed must be non-negative, got {args.seed}")  # (--seeds is checked by the ablation)
    preset = load_preset(args.preset, Path(args.config) if args.config else None)
    options = parse_env_options(args.env_option)
    if options:  # recorded in the run's manifest with the rest of the preset
        merged = {**preset.env_options.get(args.env, {}), **options}
        preset = preset.model_copy(update={"env_options": {**preset.env_options, args.env: merged}})
    get_env(args.env, preset.env_options.get(args.env, {}))  # a bad option is named before anything trains
    if args.log_to is not None:
        from security_verifiers.tracking import check_targets, parse_targets

        targets = parse_targets(args.log_to)
        check_targets(targets)
        preset = preset.model_copy(update={"log_to": targets})
    try:
        from security_verifiers.train.pipeline import train
    except ImportError as err:
        raise ConfigError(f"sv train needs the training extra ({err.name} is missing): pip install -e '.[train]'") \
            from err
    if args.command == "ablation":
        from security_verifiers.train.ablation import parse_variants, run_ablation

        if args.run_id is not None or args.seed is not None:
            raise ConfigError("sv train ablation takes --seeds N (seeds 0..N-1) and no --seed or --run-id")
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
                        "held-out split and summary.json (paired deltas with 95%% bootstrap intervals). "
                        "ablation: the --variants over --seeds seeds at equal budget, every RL variant of a seed "
                        "starting from one SFT run; writes ablation.md, ablation.json, heldout.png and curves.png, "
                        "and continues where it stopped when run again with the same arguments.")
    tr.add_argument("command", choices=["sft", "distill", "grpo", "gdpo", "weighted", "ablation"],
                    help="What to train.")
    tr.add_argument("--env", required=True, help="Environment name. Tool-using modes and the red-team environments "
                    "train over whole episodes (tool calls and results in the context, tool results out of the loss).")
    tr.add_argument("--env-option", action="append", default=[], metavar="KEY=VALUE",
                    help="Environment option (repeatable; values read as JSON), over the preset's env_options, e.g. "
                    "mode=tools; `sv envs --options ENV` lists them.")
    source = tr.add_mutually_exclusive_group(required=True)
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
