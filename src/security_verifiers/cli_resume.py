"""``sv eval --resume``: find the run to continue and take its settings from its ``metadata.json``.

A resume continues one experiment, so everything that defines it (environment and its options, model, dataset
arguments, endpoint, sampling, samples and timeout) is read from the run's stored invocation rather than asked
for again; a flag given again must agree with the stored value, and a disagreement is one line naming the flag.
Three settings only decide how the rest of the run is executed (``EXECUTION_ONLY``): a resume may change them,
e.g. a lower ``--concurrency`` for an endpoint that rate-limited the first session.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from security_verifiers.core.errors import ConfigError
from security_verifiers.core.rundir import RunDir

#: The key of ``metadata.json`` that holds the arguments a resume rebuilds the run from.
INVOCATION_KEY = "invocation"
#: Run settings a resume may change: they decide how rollouts are scheduled, never what a rollout scores.
EXECUTION_ONLY = ("concurrency", "score_workers", "max_error_rate")
#: Dataset arguments, by attribute name (the flag is ``--`` and the name in kebab case).
DATASET_ARGS = ("split", "n", "data", "data_hash", "data_seed")


def invocation(args: argparse.Namespace, env_config: dict[str, Any], endpoint: Any, sampling: Any) -> dict[str, Any]:
    """What ``metadata.json`` keeps of an ``sv eval`` invocation so that ``--resume`` can rebuild it.

    ``env_config`` is the environment's whole config (defaults included), so a later change of a default does not
    change a resumed run; ``--data`` is stored as an absolute path, so a resume may start from another directory.
    """
    return {
        "env": args.env,
        "model": args.model,
        "env_options": env_config,
        "split": args.split,
        "n": args.n,
        "data": str(Path(args.data).resolve()) if args.data is not None else None,
        "data_hash": args.data_hash,
        "data_seed": args.data_seed,
        "endpoint": endpoint.model_dump(mode="json"),
        "sampling": sampling.model_dump(mode="json"),
    }


def find_run(root: Path, env: str | None, model: str | None, run_id: str | None) -> RunDir:
    """The run ``--resume`` continues: ``run_id`` under ``root`` (narrowed by ``env`` and ``model`` when given),
    or without a run id the latest run of ``env`` with ``model``."""
    if run_id is None:
        if env is None or model is None:
            raise ConfigError("--resume needs --run-id ID, or ENV and --model for the latest run of that pair")
        latest = RunDir.latest(root, env, model)
        if latest is None:
            raise ConfigError(f"--resume: no earlier run of {env} with {model} under {root}")
        return latest
    if env is not None and model is not None:
        run_dir = RunDir.for_run(root, env, model, run_id)
        if not run_dir.metadata_path.is_file():
            raise ConfigError(f"--resume: nothing to resume at {run_dir.path}")
        return run_dir
    found = [RunDir(p.parent) for p in sorted((root / "evals").glob(f"*/{run_id}/metadata.json"))]
    found = [r for r in found if _matches(r, env, model)]
    if not found:
        raise ConfigError(f"--resume: no run {run_id!r} under {root / 'evals'}")
    if len(found) > 1:
        paths = ", ".join(str(r.path) for r in found)
        raise ConfigError(f"--resume: run id {run_id!r} names {len(found)} runs ({paths}); give ENV and --model to "
                          "choose one")
    return found[0]


def _matches(run_dir: RunDir, env: str | None, model: str | None) -> bool:
    metadata = _read(run_dir)
    return (env is None or (metadata.get("env") or {}).get("name") == env) and \
        (model is None or metadata.get("model") == model)


def _read(run_dir: RunDir) -> dict[str, Any]:
    try:
        metadata = run_dir.read_metadata()
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ConfigError(f"--resume: {run_dir.metadata_path} is unreadable ({err})") from err
    if not isinstance(metadata, dict):
        raise ConfigError(f"--resume: {run_dir.metadata_path} is not a run's metadata")
    return metadata


def apply_stored_settings(args: argparse.Namespace, run_dir: RunDir, config_fields: dict[str, tuple[str, ...]],
                          parse_env_options: Any) -> None:
    """Fill ``args`` with the run's stored settings, checking that every flag given again agrees with them.

    ``config_fields`` maps ``endpoint``, ``sampling`` and ``run`` to the attribute names of their options; an
    option not given is absent from ``args`` (its default is ``argparse.SUPPRESS``). A run written before its
    invocation was stored keeps the old rule: its flags must be given again (its experiment is still checked).
    """
    metadata = _read(run_dir)
    stored = metadata.get(INVOCATION_KEY)
    run_id = metadata.get("run_id", run_dir.path.name)

    def agree(flag: str, given: Any, kept: Any) -> None:
        if given != kept:
            raise ConfigError(f"--resume: {flag} {_show(given)} differs from run {run_id}'s {_show(kept)}; leave "
                              f"{flag} out to keep the run's value, or start a new run")

    if args.env is not None:
        agree("ENV", args.env, (metadata.get("env") or {}).get("name"))
    if args.model is not None:
        agree("--model", args.model, metadata.get("model"))
    args.env, args.model = (metadata.get("env") or {}).get("name"), metadata.get("model")
    if not isinstance(stored, dict):
        return
    given_options = parse_env_options(args.env_option)
    for key, value in given_options.items():
        agree(f"--env-option {key}", value, stored["env_options"].get(key, "(not an option of the run)"))
    args.env_option = [f"{key}={json.dumps(value)}" for key, value in stored["env_options"].items()]
    for name in DATASET_ARGS:
        given, kept = getattr(args, name), stored.get(name)
        if given is not None:
            agree(_flag(name), str(Path(given).resolve()) if name == "data" else given, kept)
        setattr(args, name, kept)
    kept_run = metadata.get("run") or {}
    for group, names in config_fields.items():
        values = (stored.get(group) if group != "run" else kept_run) or {}
        for name in names:
            if name not in values:
                continue
            if hasattr(args, name):
                if group == "run" and name in EXECUTION_ONLY:
                    continue  # a resume may run the rest differently
                agree(_flag(name), getattr(args, name), values[name])
            setattr(args, name, values[name])


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _show(value: Any) -> str:
    return "none" if value is None else json.dumps(value) if not isinstance(value, str) else value
