"""``sv train --resume RUN_DIR``: continue an interrupted training run, stage by stage.

Everything that defines the run (command, environment and its options, preset, seed) is read from its
``manifest.json``; a flag given again must agree with it, and a disagreement is one line naming both values.
Each stage then looks at what the run directory holds:

* the teacher's run (``teacher/``) and the held-out evaluations (``eval/before``, ``eval/after``) are ``sv eval``
  run directories: a finished one is kept as it is, an unfinished one is resumed by the harness (its finished
  rollouts kept);
* a training stage whose final checkpoint the manifest records (``stages``, with its weights digest) is kept;
  one interrupted midway continues from its last ``trainer/checkpoint-N`` through transformers' own
  ``resume_from_checkpoint`` (weights, optimiser, scheduler and RNG state), its ``log.jsonl`` rows past that step
  dropped first so that no step is logged twice; one interrupted before its first checkpoint starts again.

The GRPO stage's reward counts (completions scored, parse failures, masked scorer errors) and the no-signal
guard's counts are saved in each of its checkpoints and restored with it, so the manifest's ``rl_reward_counts``
and the step log's per-step figures cover the whole stage, not only the part after the resume: the steps redone
after the checkpoint are counted once, as they were dropped from the log. Each resume is recorded in the
manifest's ``resumes`` (when, the code version, how the run had ended, and per stage whether it was kept or
from which step it continued). A finished run is left as it is.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from security_verifiers.core.errors import ConfigError
from security_verifiers.core.rundir import code_version, now_iso
from security_verifiers.envs.base import get_env
from security_verifiers.train import processes
from security_verifiers.train.pipeline import _say, check_processes, prepare, read_manifest, run_stages
from security_verifiers.train.presets import TrainPreset

#: What a training run's manifest holds from its start; a directory whose manifest lacks them is not one.
RUN_KEYS = ("command", "seed", "env", "preset", "data")


def resume(run: Path, given: dict[str, Any]) -> Path:
    """Continue the training run in ``run``; ``given``: the flags given again (``command``, ``env``, ``seed``,
    ``preset`` as the manifest records it, ``env_options``, ``log_to``), each checked against the run's."""
    if (run / "plan.json").is_file() and not (run / "manifest.json").exists():
        raise ConfigError(f"{run} is an ablation, not one training run; an ablation continues when `sv train "
                          "ablation` is run again with the same arguments")
    manifest = read_manifest(run)
    missing = [key for key in RUN_KEYS if key not in manifest]
    if missing:
        raise ConfigError(f"{run}: not a training run directory (its manifest.json has no {', '.join(missing)})")
    check_given(run, manifest, given)
    if manifest.get("status") == "finished":
        _say(f"nothing to resume: {run} finished at {manifest.get('finished_at')}; its result is in "
             f"{run / 'summary.json'}")
        return run
    from security_verifiers.harness.run_metadata import running_elsewhere

    process = running_elsewhere(manifest)
    if process is not None:
        raise ConfigError(f"{run} is still being trained (pid {process.get('pid')} on {process.get('host')}); let "
                          "it finish, or stop it first")
    env_name = manifest["env"]["name"]
    preset = TrainPreset.model_validate(manifest["preset"])
    env = get_env(env_name, preset.env_options.get(env_name, {}))
    if env.describe() != manifest["env"]:
        raise ConfigError(f"{run}: environment {env_name} is now {env.describe()}, the run's was {manifest['env']} "
                          "(its version or defaults changed); start a new run")
    sft_run = Path(manifest["sft_from"]["run"]) if manifest.get("sft_from") else None
    check_processes(manifest["command"], preset, sft_run is not None)
    r = prepare(manifest["command"], env, preset, int(manifest["seed"]), run.parent, run, manifest)
    processes.wait()  # every process has read the manifest before the main one rewrites it
    ended = manifest.get("status_reason") or ("killed (its manifest recorded no end)"
                                              if manifest.get("status") == "running" else manifest.get("status"))
    r.resume = {"at": now_iso(), "code": code_version(), "processes": processes.count(), "ended": ended,
                "stages": {}}
    manifest["resumes"] = [*manifest.get("resumes", []), r.resume]
    manifest.update(status="running", status_reason=None)
    manifest.pop("ended_at", None)
    r.save()
    _say(f"resuming {run} ({manifest['command']} on {env_name}, seed {manifest['seed']}; it ended: {ended})")
    return run_stages(r, sft_run)


def check_given(run: Path, manifest: dict[str, Any], given: dict[str, Any]) -> None:
    """Each flag given again agrees with the run's manifest, or a ConfigError naming both values."""
    kept = {"command": manifest.get("command"), "env": (manifest.get("env") or {}).get("name"),
            "seed": manifest.get("seed")}
    flags = {"command": "COMMAND", "env": "--env", "seed": "--seed"}
    for key, flag in flags.items():
        if key in given and given[key] != kept[key]:
            raise ConfigError(f"--resume: {flag} {given[key]} differs from the run's {kept[key]} ({run}); leave it "
                              "out to keep the run's value, or start a new run")
    preset = manifest.get("preset") or {}
    if "preset" in given:
        changed = _differences(given["preset"], preset)
        if changed:
            shown = "; ".join(f"{path}: {_show(a)} given, {_show(b)} in the run" for path, a, b in changed[:5])
            raise ConfigError(f"--resume: the preset given differs from the run's ({shown}); leave --preset/--config "
                              "out to keep the run's, or start a new run")
    options = (preset.get("env_options") or {}).get(kept["env"], {})
    for key, value in (given.get("env_options") or {}).items():
        if options.get(key, "(not set)") != value:
            raise ConfigError(f"--resume: --env-option {key}={_show(value)} differs from the run's "
                              f"{_show(options.get(key, '(not set)'))}; leave it out to keep the run's value")
    if "log_to" in given and sorted(given["log_to"]) != sorted(preset.get("log_to") or []):
        raise ConfigError(f"--resume: --log-to {','.join(given['log_to']) or '(none)'} differs from the run's "
                          f"{','.join(preset.get('log_to') or []) or '(none)'}; leave it out to keep the run's")


def _differences(a: Any, b: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for key in sorted(set(a) | set(b))
                for d in _differences(a.get(key), b.get(key), f"{path}.{key}" if path else key)]
    return [] if a == b else [(path, a, b)]


def _show(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)
