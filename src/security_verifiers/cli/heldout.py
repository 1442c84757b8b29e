"""``sv heldout verify``: check a run's claim to have been scored on a published gated held-out set."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from security_verifiers.core.errors import ConfigError

DESCRIPTION = """\
Checks that RUN (a run directory, or the metadata.json of one: the file a maintainer publishes with the summary,
since the run's transcripts hold the private items) was scored on a gated held-out set whose commitment is
published in the environment's data/heldout.json, and that the items it scored hash to that commitment. With
--secret-file KEY (the maintainer's key) the set is also rebuilt and its item ids compared with the run's.
Exit status 0: verified; 1: not verified (the reasons are printed); 2: a usage error.

  sv heldout verify outputs/evals/phishing--gpt-4o-mini/20261129T1800Z
  sv heldout verify published/metadata.json --secret-file ~/sv-heldout.key

A maintainer builds and publishes a set with `sv data build ENV --heldout --secret-file KEY --record` and
evaluates a submission with `sv eval ENV --model M --heldout --secret-file KEY` (README: "Gated held-out sets").
"""


def _metadata(path: Path) -> dict[str, Any]:
    file = path / "metadata.json" if path.is_dir() else path
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ConfigError(f"{file}: not a readable run metadata file ({err})") from err
    if not isinstance(data, dict) or not isinstance((data.get("env") or {}).get("name"), str):
        raise ConfigError(f"{file} is not a run's metadata.json (it names no environment)")
    return data


def cmd_verify(args: argparse.Namespace) -> int:
    from security_verifiers.core.heldout import read_key, verify_run
    from security_verifiers.envs.base import get_env

    metadata = _metadata(Path(args.run))
    env_meta = metadata["env"]
    env = get_env(env_meta["name"], env_meta.get("config") or {})
    key = read_key(args.secret_file) if args.secret_file is not None else None
    problems = verify_run(metadata, env, key)
    claim = metadata.get("heldout") or {}
    if problems:
        for problem in problems:
            print(f"NOT VERIFIED: {problem}")
        return 1
    how = "items rebuilt with the key and compared one by one" if key is not None else "without the key"
    print(f"VERIFIED: {env.name} run {metadata.get('run_id')} scored the published held-out set {claim['id']} "
          f"({metadata['dataset']['n']} items, hash {metadata['dataset']['hash']}; {how})")
    return 0


def register(sub: Any) -> None:
    """Add ``sv heldout`` to the command line's subcommands."""
    heldout = sub.add_parser("heldout", help="Gated held-out sets: verify a run against a published commitment.")
    heldout_sub = heldout.add_subparsers(dest="heldout_command", required=True, metavar="HELDOUT_COMMAND")
    verify = heldout_sub.add_parser("verify", help="Check that a run was scored on a published gated set.",
                                    description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    verify.add_argument("run", metavar="RUN", help="A run directory, or its metadata.json.")
    verify.add_argument("--secret-file", default=None, metavar="KEY",
                        help="The set's secret key: also rebuild the items and compare them with the run's.")
    verify.set_defaults(func=cmd_verify)
