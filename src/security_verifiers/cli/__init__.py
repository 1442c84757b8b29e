"""The ``sv`` command line: eval, report, view, compare, gate, merge, train, bench, data (build, import), rules,
cache, envs, engines, serve, sandbox; one module per command, each adding its subcommand with ``register``."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path
from typing import Any

from security_verifiers.cli import (
    bench,
    cache,
    data,
    engines,
    envs,
    evaluate,
    gate,
    heldout,
    merge,
    report,
    rules,
    serve,
    spec,
    train,
)
from security_verifiers.cli.common import EXIT_USAGE, Parser, add_log_level
from security_verifiers.cli.sandbox import add_sandbox_parser
from security_verifiers.core.errors import ConfigError, DatasetError
from security_verifiers.core.logging_setup import DEFAULT_LEVEL, configure_logging


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="sv", description="Security Verifiers: security RL environments scored by executable checks.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    from security_verifiers.core.rundir import code_version

    parser.add_argument("--version", action="version", version=f"sv {code_version()['package'] or 'unknown'}")
    add_log_level(parser, DEFAULT_LEVEL)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    evaluate.register(sub)
    report.register(sub)
    train.register(sub)
    report.register_compare(sub)
    gate.register(sub)
    merge.register(sub)
    bench.register(sub)
    data.register(sub)
    heldout.register(sub)
    spec.register(sub)
    rules.register(sub)
    cache.register(sub)
    envs.register(sub)
    serve.register(sub)
    engines.register(sub)
    add_sandbox_parser(sub)
    return parser


def _sigterm_to_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("MPLBACKEND", "Agg")
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _sigterm_to_interrupt)
    configure_logging(args.log_level)
    try:
        if getattr(args, "command_parser", None) is not None and args.config is not None:  # fills what flags left out
            from security_verifiers.cli.config_file import apply_config_file

            args.config_file = apply_config_file(args.command_parser, argv[argv.index(args.command) + 1:], args,
                                                 Path(args.config))
        return int(args.func(args))
    except (ConfigError, DatasetError) as err:
        print(f"sv: error: {' '.join(str(err).split())}", file=sys.stderr)  # one line, whatever the message holds
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("sv: interrupted; finished rollouts are saved, continue with --resume", file=sys.stderr)
        return 130
    except Exception as err:  # a bug or an environment failure: one line; the traceback when asked for
        if os.environ.get("SV_DEBUG"):
            raise
        print(f"sv: error: {type(err).__name__}: {' '.join(str(err).split())[:500]} (set SV_DEBUG=1 for the "
              "traceback)", file=sys.stderr)
        return 1
