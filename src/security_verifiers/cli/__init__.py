"""The ``sv`` command line: eval, report, view, compare, gate, merge, train, bench, data (build, import), rules,
cache, envs, engines, serve, sandbox; one module per command, each adding its subcommand with ``register``."""

from __future__ import annotations

import argparse
import atexit
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any, NoReturn

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
    except BrokenPipeError:  # the reader went away (`sv envs | head -1`): stop quietly, as other commands do
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # what is still buffered goes nowhere instead of failing again
        return 141  # 128 + SIGPIPE, the status a shell reports for a command its pipe stopped
    except Exception as err:  # a bug or an environment failure: one line; the traceback when asked for
        if os.environ.get("SV_DEBUG"):
            raise
        print(f"sv: error: {type(err).__name__}: {' '.join(str(err).split())[:500]} (set SV_DEBUG=1 for the "
              "traceback)", file=sys.stderr)
        return 1


def run() -> NoReturn:
    """The ``sv`` command (and ``python -m security_verifiers.cli``): :func:`main`, then :func:`exit_now`."""
    exit_now(main())


def exit_now(code: int) -> NoReturn:
    """End the process with ``code`` once everything it owes is done, without the interpreter's teardown.

    The teardown frees every object one by one: after a config-audit run (150 items) that was 1.7 s of 15.4 s, the
    engines' parsed trees and Checkov's registries, with nothing left to write. This does what the interpreter does
    before it: waits for the threads that are not daemons (``threading._shutdown``, which first lets the thread
    pools stop their idle workers), runs the ``atexit`` callbacks (logging's flush, multiprocessing's children,
    trackers such as wandb's finish), flushes stdout and stderr, then ``os._exit``. Every file the run writes is
    closed or flushed by then (results.jsonl is fsynced when a run ends; the stores commit each write). Where
    ``threading._shutdown`` does not exist (another Python), the ordinary exit is taken."""
    shutdown = getattr(threading, "_shutdown", None)
    if shutdown is None:
        sys.exit(code)
    shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more can be written to it anyway
            pass
    os._exit(code)
