"""``sv eval --resume``: find the run to continue and take its settings from its ``metadata.json``.

A resume continues one experiment, so everything that defines it (environment and its options, model, dataset
arguments, endpoint, sampling, samples and timeout) is read from the run's stored invocation rather than asked
for again; a flag given again must agree with the stored value, and a disagreement is one line naming the flag.
Five settings only decide how the rest of the run is executed (``EXECUTION_ONLY``): a resume may change them,
e.g. a lower ``--concurrency`` for an endpoint that rate-limited the first session, or another Ray cluster. The
response cache is kept too: a run made with ``--no-cache`` resumes without it (a cached answer is not one the
model gave now), and a resume uses the run's ``--cache-dir`` unless given another (where answers are kept, not
what they are).

Without ``--run-id`` the run continued is the latest by its recorded start, never by how its id sorts; a run
that is finished with every rollout recorded is not "resumed" for nothing, and one still playing is left alone.
"""

from __future__ import annotations

import argparse
import json
from datetime import datetime
from pathlib import Path
from typing import Any

from security_verifiers.core.errors import ConfigError
from security_verifiers.core.rundir import RunDir, check_run_id, latest_by_key

#: The key of ``metadata.json`` that holds the arguments a resume rebuilds the run from.
INVOCATION_KEY = "invocation"
#: Run settings a resume may change: they decide how rollouts are scheduled, never what a rollout scores.
EXECUTION_ONLY = ("concurrency", "score_workers", "max_error_rate", "executor", "ray_address")
#: Dataset arguments, by attribute name (the flag is ``--`` and the name in kebab case).
DATASET_ARGS = ("split", "n", "limit", "sample_seed", "data", "data_hash", "data_seed", "heldout", "secret_file",
                "shard")
#: Dataset arguments that are paths, stored absolute so that a resume may start from another directory.
PATH_ARGS = ("data", "secret_file")


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
        "limit": args.limit,
        "sample_seed": args.sample_seed,
        "data": str(Path(args.data).resolve()) if args.data is not None else None,
        "data_hash": args.data_hash,
        "data_seed": args.data_seed,
        "heldout": getattr(args, "heldout", None),
        "secret_file": str(Path(args.secret_file).resolve()) if getattr(args, "secret_file", None) else None,
        "shard": getattr(args, "shard", None),
        "endpoint": endpoint.model_dump(mode="json"),
        "sampling": sampling.model_dump(mode="json"),
        "no_cache": bool(getattr(args, "no_cache", False)),
        "cache_dir": str(Path(args.cache_dir).resolve()) if getattr(args, "cache_dir", None) else None,
    }


def find_run(root: Path, env: str | None, model: str | None, run_id: str | None) -> RunDir:
    """The run ``--resume`` continues: ``run_id`` under ``root`` (narrowed by ``env`` and ``model`` when given),
    or without a run id the latest run of ``env`` with ``model`` (:func:`latest_run`). A run with nothing left to
    play, or still being played, is a ConfigError (:func:`check_continuable`)."""
    if run_id is None:
        if env is None or model is None:
            raise ConfigError("--resume needs --run-id ID, or ENV and --model for the latest run of that pair")
        run_dir = latest_run(root, env, model)
        check_continuable(run_dir, _read(run_dir), latest=True)
        return run_dir
    check_run_id(run_id)
    if env is not None and model is not None:
        run_dir = RunDir.for_run(root, env, model, run_id)
        if not run_dir.metadata_path.is_file():
            raise ConfigError(f"--resume: nothing to resume at {run_dir.path}")
    else:
        run_dir = _only_run(root, env, model, run_id)
    check_continuable(run_dir, _read(run_dir), latest=False)
    return run_dir


def _only_run(root: Path, env: str | None, model: str | None, run_id: str) -> RunDir:
    found = [RunDir(p.parent) for p in sorted((root / "evals").glob(f"*/{run_id}/metadata.json"))]
    found = [r for r in found if _matches(r, env, model)]
    if not found:
        raise ConfigError(f"--resume: no run {run_id!r} under {root / 'evals'}")
    if len(found) > 1:
        paths = ", ".join(str(r.path) for r in found)
        raise ConfigError(f"--resume: run id {run_id!r} names {len(found)} runs ({paths}); give ENV and --model to "
                          "choose one")
    return found[0]


def latest_run(root: Path, env: str, model: str) -> RunDir:
    """The run of ``env`` with ``model`` that started last, by the ``started_at`` its metadata records (a run id
    given by hand need not sort by time). Runs it cannot order (a start time missing or unreadable, or two runs
    started at the same instant) are a ConfigError naming them: guessing would continue the wrong run."""
    runs = RunDir.runs(root, env, model)
    if not runs:
        raise ConfigError(f"--resume: no earlier run of {env} with {model} under {root}")
    if len(runs) == 1:
        return runs[0]
    started = {run.path.name: _started(run) for run in runs}
    unknown = [name for name, at in started.items() if at is None]
    if unknown:
        raise ConfigError(f"--resume: cannot tell which run of {env} with {model} is the latest ({', '.join(unknown)} "
                          f"record{'s' if len(unknown) == 1 else ''} no start time); give --run-id (one of "
                          f"{', '.join(started)})")
    newest = max(at for at in started.values() if at is not None)
    tied = [name for name, at in started.items() if at == newest]
    if len(tied) > 1:
        raise ConfigError(f"--resume: cannot tell which run of {env} with {model} is the latest ({', '.join(tied)} "
                          f"started at the same time, {newest.isoformat()}); give --run-id (one of {', '.join(tied)})")
    return next(run for run in runs if run.path.name == tied[0])


def _started(run_dir: RunDir) -> datetime | None:
    try:
        at = run_dir.read_metadata().get("started_at")
        return datetime.fromisoformat(at) if isinstance(at, str) else None
    except (OSError, UnicodeDecodeError, ValueError, AttributeError, TypeError):
        return None  # an unreadable metadata.json or start time cannot be ordered


def check_continuable(run_dir: RunDir, metadata: dict[str, Any], *, latest: bool) -> None:
    """A ConfigError unless resuming ``run_dir`` would play something: a run still being played by a live process
    is left to it (two writers would interleave one results file), and a ``finished`` run is refused unless its
    results lack a rollout or hold an errored one (which a resume retries). ``latest``: the run was chosen as the
    latest of its environment and model, not named by ``--run-id``."""
    from security_verifiers.harness.run_metadata import effective_status, running_elsewhere

    name = f"{'the latest run' if latest else 'run'} {metadata.get('run_id', run_dir.path.name)} of " \
           f"{(metadata.get('env') or {}).get('name')} with {metadata.get('model')}"
    process = running_elsewhere(metadata)
    if process is not None:
        raise ConfigError(f"--resume: {name} is still running (pid {process.get('pid')} on {process.get('host')}); "
                          "let it finish, or stop it first")
    if effective_status(metadata) != "finished" or _has_work(run_dir, metadata):
        return
    hint = "give --run-id to choose another" if latest else "start a new run (without --resume) to play it again"
    raise ConfigError(f"nothing to resume: {name} finished at {metadata.get('finished_at') or '(time not recorded)'} "
                      f"with every rollout recorded; {hint}")


def _has_work(run_dir: RunDir, metadata: dict[str, Any]) -> bool:
    """Whether a resume would play anything: an (item, sample) of the run without a successful record."""
    done = {(r.item_id, r.sample) for r in latest_by_key(run_dir.read_for_resume()) if r.ok}
    samples = (metadata.get("run") or {}).get("samples", 1)
    item_ids = (metadata.get("dataset") or {}).get("item_ids")
    if isinstance(item_ids, list) and isinstance(samples, int):
        return any((item_id, s) not in done for s in range(samples) for item_id in item_ids)
    n = (metadata.get("dataset") or {}).get("n")
    return not isinstance(n, int) or not isinstance(samples, int) or len(done) < n * samples


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
            agree(_flag(name), str(Path(given).resolve()) if name in PATH_ARGS else given, kept)
        setattr(args, name, kept)
    _restore_cache_settings(args, stored, agree)
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


def _restore_cache_settings(args: argparse.Namespace, stored: dict[str, Any], agree: Any) -> None:
    """Keep the run's response-cache settings: ``--no-cache`` given again must agree, left out it keeps the run's
    value; ``--cache-dir`` left out is the run's, given it may differ (it says where answers are kept).

    ``--no-cache`` is a switch, so "left out" reads as absent, ``None`` or ``False`` (argparse's default): only
    a given ``--no-cache`` is checked. A run stored before these were kept resumes as the flags say."""
    if "no_cache" in stored:
        if getattr(args, "no_cache", None):
            agree("--no-cache", True, bool(stored["no_cache"]))
        args.no_cache = bool(stored["no_cache"])
    if "cache_dir" in stored and getattr(args, "cache_dir", None) is None:
        args.cache_dir = stored["cache_dir"]


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _show(value: Any) -> str:
    return "none" if value is None else json.dumps(value) if not isinstance(value, str) else value
