"""``sv serve ENV``: the environment's scorer as an HTTP reward endpoint (:mod:`..adapters.reward_server`)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from security_verifiers.cli.common import add_executor_options, add_log_level, parse_env_options
from security_verifiers.core.errors import ConfigError


def cmd_serve(args: argparse.Namespace) -> int:
    from aiohttp import web

    from security_verifiers.adapters.reward_server import RewardService, build_app
    from security_verifiers.envs.base import get_env
    from security_verifiers.harness.scoring_pool import make_pool

    env = get_env(args.env, parse_env_options(args.env_option))
    if args.workers is not None and args.workers < 1:
        raise ConfigError(f"--workers must be at least 1, got {args.workers}")
    if args.max_batch < 1:
        raise ConfigError(f"--max-batch must be at least 1, got {args.max_batch}")
    items = []
    for split in (s.strip() for s in (args.split or ",".join(env.public_splits)).split(",") if s.strip()):
        items += env.dataset(split, seed=None if split in env.public_splits else args.data_seed).items
    for path in args.data:
        items += env.read_dataset(Path(path)).items
    if args.executor == "ray":  # actors on the cluster: a trainer's GPU nodes do not score on their own CPUs
        pool = make_pool(env, "ray", args.workers, args.ray_address)
        where = "Ray actor(s)"
    else:
        pool = make_pool(env, "local", args.workers or max(1, env.score_workers))
        where = "scoring worker(s)"
    assert pool is not None
    print(f"sv serve: {env.name} {env.version}, {len(items)} items by id; {pool.workers} {where}", file=sys.stderr)
    pool.warm_up()
    service = RewardService(env, items, pool, max_batch=args.max_batch)

    async def serve() -> None:
        runner = web.AppRunner(build_app(service))
        await runner.setup()
        try:
            await web.TCPSite(runner, args.host, args.port).start()
            host, port = runner.addresses[0][:2]
            print(f"sv serve: listening on http://{host}:{port} (POST /score, POST /openrlhf, GET /info); Ctrl-C "
                  "stops it", file=sys.stderr, flush=True)
            await asyncio.Event().wait()
        finally:
            await runner.cleanup()

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        print("sv serve: stopped", file=sys.stderr)
    finally:
        pool.close()
    return 0


def register(sub: Any) -> None:
    """Add ``sv serve`` to the command line's subcommands."""
    sv = sub.add_parser("serve", help="Serve an environment's scorer as an HTTP reward endpoint for remote "
                        "trainers (veRL, OpenRLHF, slime).",
                        description="POST /score {\"requests\": [{\"item_id\" or \"item\", \"completion\" or "
                        "\"transcript\"}]} returns each rollout's reward, components, outcome and parse status "
                        "(reward null with an error when the scorer itself failed); POST /openrlhf takes "
                        "OpenRLHF's --remote_rm_url shape (labels are item ids); GET /info. Scoring runs in worker "
                        "processes under the environment's per-rollout time and memory limits, the same scorer "
                        "as sv eval. Ctrl-C stops it.")
    sv.add_argument("env", help="Environment name (see `sv envs`).")
    add_executor_options(sv, actors=", --workers of them, by default one per CPU of the cluster")
    sv.add_argument("--split", default=None,
                    help="Split(s) whose items can be named by id, comma-separated (default: the public splits); "
                    "items not loaded can be sent whole.")
    sv.add_argument("--data", action="append", default=[],
                    help="Also load the items of this dataset file (JSONL from `sv data build`), repeatable "
                    "(default: none).")
    sv.add_argument("--data-seed", type=int, default=None,
                    help="Seed for generated (non-public) splits (default: 0).")
    sv.add_argument("--env-option", action="append", default=[], metavar="KEY=VALUE",
                    help="Environment config option (JSON value), repeatable (default: the environment's defaults; "
                    "see `sv envs --options ENV`).")
    sv.add_argument("--host", default="127.0.0.1",
                    help="Address to listen on (default: 127.0.0.1; 0.0.0.0 for other machines).")
    sv.add_argument("--port", type=int, default=8000, help="Port (default: 8000; 0 picks a free one, printed).")
    sv.add_argument("--workers", type=int, default=None,
                    help="Scoring worker processes (default: the environment's own count, at least 1).")
    sv.add_argument("--max-batch", type=int, default=1024,
                    help="Most rollouts in one request; a larger one is refused with 413 (default: 1024).")
    add_log_level(sv)
    sv.set_defaults(func=cmd_serve)
