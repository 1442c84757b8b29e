"""``sv data build`` and ``sv data import``: datasets generated, rebuilt from a run, or imported."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from security_verifiers.cli.common import (
    add_log_level,
)
from security_verifiers.cli.data_import import add_import_command, remove_file, write_partial
from security_verifiers.core.errors import ConfigError


def _write_dataset(items: Any, out: Path, header: dict[str, Any]) -> str:
    """Write a dataset file through ``OUT.partial``, so that a failure leaves no file that looks complete."""
    partial = out.with_name(out.name + ".partial")
    try:
        digest = write_partial(items, partial, header)  # removes the partial itself when writing fails
        partial.replace(out)
    except OSError as err:  # the move into place
        remove_file(partial)
        raise ConfigError(f"cannot write {out}: {err.strerror or err}") from err
    except KeyboardInterrupt:
        remove_file(partial)
        raise
    return digest


def cmd_data_build(args: argparse.Namespace) -> int:
    from security_verifiers.envs.base import get_env

    env = get_env(args.env)
    if args.heldout:
        return _build_heldout(env, args)
    if args.secret_file is not None or args.record:
        raise ConfigError("--secret-file and --record go with --heldout")
    if args.public:
        return _build_public(env, args)
    if args.from_run is not None:
        return _build_from_run(env, args)
    missing = [f"--{name}" for name in ("split", "n", "seed", "out") if getattr(args, name) is None]
    if missing:
        raise ConfigError(f"sv data build {env.name} needs {', '.join(missing)} (or --public, to rebuild the "
                          "committed public splits)")
    from security_verifiers.core.datasets import dataset_header

    if args.split not in env.splits:
        raise ConfigError(f"unknown split {args.split!r} for {env.name}; choose from {', '.join(env.splits)}")
    if args.n <= 0:
        raise ConfigError("--n must be positive")
    out = Path(args.out)
    if out.is_dir():
        raise ConfigError(f"--out {out} is a directory; give a file name")
    t0 = time.perf_counter()
    from security_verifiers.core.progress import progress_to

    with progress_to(f"sv data build {env.name} {args.split}"):
        items = env.generate(args.split, args.n, args.seed)
    env.check_items(items, None, f"the {env.name} generator")
    header = dataset_header(env.name, env.version, split=args.split, n=len(items), seed=args.seed,
                            written_by="sv data build")
    digest = _write_dataset(items, out, header)
    print(json.dumps({"env": env.name, "split": args.split, "n": len(items), "seed": args.seed,
                      "file": args.out, "hash": digest, "seconds": round(time.perf_counter() - t0, 2)}))
    return 0


def _build_from_run(env: Any, args: argparse.Namespace) -> int:
    """``sv data build redteam-defense --from-run RUN_DIR --out FILE``: self-play items from an E5 run."""
    from security_verifiers.core.datasets import dataset_header

    if env.items_from_runs_of is None:
        from security_verifiers.envs.base import registry

        builders = [f"{name} (from {cls.items_from_runs_of} runs)" for name, cls in sorted(registry().items())
                    if cls.items_from_runs_of is not None]
        raise ConfigError(f"{env.name} builds no items from runs (--from-run); environments that do: "
                          f"{', '.join(builders) or 'none'}")
    if args.out is None or any(getattr(args, name) is not None for name in ("split", "n", "seed")):
        raise ConfigError("--from-run takes --out FILE and none of --split, --n, --seed")
    out = Path(args.out)
    if out.is_dir():
        raise ConfigError(f"--out {out} is a directory; give a file name")
    items, problems = env.items_from_run(Path(args.from_run))
    for problem in problems[:20]:
        print(f"left out: {problem}", file=sys.stderr)
    if not items:
        raise ConfigError(f"{args.from_run} has no successful attack to turn into an item"
                          + (f" ({len(problems)} rollouts could not be read)" if problems else ""))
    header = dataset_header(env.name, env.version, split="selfplay", n=len(items),
                            written_by="sv data build --from-run")
    digest = _write_dataset(items, out, header)
    print(json.dumps({"env": env.name, "from_run": args.from_run, "n": len(items), "left_out": len(problems),
                      "naive_breached": sum(bool(i.meta.get("naive_breached")) for i in items), "file": args.out,
                      "hash": digest}))
    return 0


def _build_heldout(env: Any, args: argparse.Namespace) -> int:
    """``sv data build ENV --heldout --secret-file KEY [--record] [--out FILE]``: the gated held-out set."""
    from security_verifiers.core.datasets import canonical_json, dataset_header
    from security_verifiers.core.heldout import build_heldout, read_key, record

    given = [f"--{name.replace('_', '-')}" for name in ("split", "n", "seed", "from_run")
             if getattr(args, name) is not None] + (["--public"] if args.public else [])
    if given:
        raise ConfigError(f"--heldout builds the public splits' definition under the key's seed; it takes no "
                          f"{', '.join(given)}")
    if args.secret_file is None:
        raise ConfigError("--heldout needs --secret-file KEY (make one with: head -c 32 /dev/urandom | base64 > KEY; "
                          "keep it out of the repository)")
    key = read_key(args.secret_file)
    out = Path(args.out) if args.out is not None else None
    if out is not None and out.is_dir():
        raise ConfigError(f"--out {out} is a directory; give a file name")
    t0 = time.perf_counter()
    from security_verifiers.core.progress import progress_to

    with progress_to(f"sv data build {env.name} --heldout"):
        dataset, commitment = build_heldout(env, key)
    public = {canonical_json(i.input) for split in env.public_splits for i in env.dataset(split).items}
    report: dict[str, Any] = {"env": env.name, "commitment_id": commitment.id,
                              "commitment": commitment.model_dump(mode="json"), "n": len(dataset),
                              "inputs_also_in_public_sets": sum(canonical_json(i.input) in public
                                                                for i in dataset.items)}
    if out is not None:
        header = dataset_header(env.name, env.version, split="heldout", n=len(dataset), written_by="sv data build "
                                "--heldout (private: never publish this file)")
        _write_dataset(dataset.items, out, header)
        report["file"] = str(out)
    if args.record:
        report["recorded_in"] = str(record(env, commitment))
    report["seconds"] = round(time.perf_counter() - t0, 2)
    print(json.dumps(report))
    return 0


def _build_public(env: Any, args: argparse.Namespace) -> int:
    """``sv data build ENV --public``: the committed public splits, manifest and data card, rebuilt."""
    from security_verifiers.envs.kits.public_sets import build_public_sets
    from security_verifiers.harness.conformance import baseline_rewards

    given = [f"--{name}" for name in ("split", "n", "seed") if getattr(args, name) is not None]
    if given:
        raise ConfigError(f"--public rebuilds the committed public splits from their fixed sizes and seed; it takes "
                          f"no {', '.join(given)}")
    out = Path(args.out) if args.out is not None else env.data_dir
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is a file; --public writes a directory (the splits, manifest.json, "
                          "DATA_CARD.md)")
    blocked = next((p for p in out.parents if p.exists() and not p.is_dir()), None)
    if blocked is not None:  # found before the generation and the card's figures, which take a while
        raise ConfigError(f"cannot write {out}: {blocked} is a file")
    t0 = time.perf_counter()
    from security_verifiers.core.progress import progress_to

    try:
        with progress_to(f"sv data build {env.name} --public"):
            built = build_public_sets(env, out, baseline_rewards(env))
    except OSError as err:
        raise ConfigError(f"cannot write {out}: {err.strerror or err}") from err
    print(json.dumps({"env": env.name, "out": str(out), "manifest": built.manifest,
                      "files": [str(path) for path in built.files], "seconds": round(time.perf_counter() - t0, 2)}))
    return 0


# -- parser ----------------------------------------------------------------------------------
def register(sub: Any) -> None:
    """Add ``sv data`` to the command line's subcommands."""
    data = sub.add_parser("data", help="Build or import datasets.")
    data_sub = data.add_subparsers(dest="data_command", required=True, metavar="DATA_COMMAND")
    build = data_sub.add_parser("build", help="Generate a dataset deterministically (same seed, same hash).",
                                description="Generate one split (--split, --n, --seed, --out FILE), or with --public "
                                "rebuild an environment's committed public splits, manifest.json and DATA_CARD.md "
                                "(byte-identical to the committed files), or with --heldout --secret-file KEY build "
                                "the gated held-out set and its commitment.")
    build.add_argument("env", help="Environment name.")
    build.add_argument("--public", action="store_true",
                       help="Rebuild the committed public splits with their manifest and data card, into --out DIR "
                       "(default: the environment's own data/ directory).")
    build.add_argument("--split", default=None, help="Split to generate (train, dev, test, ood).")
    build.add_argument("--n", type=int, default=None, help="Number of items.")
    build.add_argument("--seed", type=int, default=None, help="Generator seed.")
    build.add_argument("--out", default=None, help="Output JSONL file (with --public: a directory).")
    build.add_argument("--heldout", action="store_true",
                       help="Build the gated held-out set: the public splits' sizes generated from a seed derived "
                       "from --secret-file; prints its commitment (--record adds it to the environment's committed "
                       "data/heldout.json; --out FILE writes the items, which must stay private).")
    build.add_argument("--secret-file", default=None, metavar="KEY",
                       help="With --heldout: the file holding the secret key (at least 16 bytes).")
    build.add_argument("--record", action="store_true",
                       help="With --heldout: add the commitment to the environment's data/heldout.json (a "
                       "maintainer's step, committed with the project).")
    build.add_argument("--from-run", default=None, metavar="RUN_DIR",
                       help="redteam-defense only: build the items from the successful attacks of an `sv eval "
                       "redteam-attack` run (self-play), into --out FILE.")
    add_log_level(build)
    build.set_defaults(func=cmd_data_build)

    add_import_command(data_sub)
