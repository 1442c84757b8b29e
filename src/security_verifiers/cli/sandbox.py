"""``sv sandbox run``: a command in exactly the sandbox that runs model-written code (``engines/sandbox``).

For trying a program, or an escape, by hand: the limits are the scorer's options of the same names
(derived from :class:`SandboxLimits`), the output is the command's, and so is the exit status.
"""

from __future__ import annotations

import argparse
import signal
import sys
from typing import Any

from security_verifiers.core.errors import ConfigError, InfraError

#: Exit status when the sandbox itself failed (like coreutils ``timeout`` when it cannot run the command).
EXIT_SANDBOX_FAILED = 125

DESCRIPTION = """\
Run CMD in the sandbox the scorers use for model-written code, with WORKDIR as its only writable
directory, and exit with CMD's exit status: 124 when the wall-clock timeout killed it, 128+N when
signal N ended it (137: SIGKILL, e.g. the CPU-time limit), 125 when the sandbox could not start.
CMD's stdout and stderr are printed when it ends, each cut at --output-bytes.

Isolation (bubblewrap, Debian package bubblewrap):
  - no network: a private loopback only; the host's servers, even on 127.0.0.1, are out of reach
  - a fresh PID namespace: when CMD exits or times out every process it started is killed,
    setsid daemons included; host processes are not visible
  - CMD runs as uid/gid 65534 (nobody) with no capabilities; as root, also on the host
  - read-only: /usr, the Python runtime running sv (stdlib only: site-packages hidden, no virtualenv),
    the loader cache; generated /etc/passwd, group, hosts; nothing else of the host: no home, no
    project checkout, no host /tmp (a private tmpfs instead)
  - WORKDIR is /work inside, CMD's working directory and HOME; as root its entries are lent to
    uid 65534 for the run and handed back after it
  - a fixed environment: PATH, HOME, LANG=C.UTF-8, PYTHONDONTWRITEBYTECODE=1, PYTHONHASHSEED=0,
    PYTHONNOUSERSITE=1; stdin is empty
  - limits, soft = hard so CMD cannot raise them: CPU time, address space, processes, file size,
    open files (see below)

Example: sv sandbox run --timeout 5 ./work -- python3 main.py"""


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:  # a real-time signal has no name
        return f"signal {number}"


def add_sandbox_parser(sub: Any) -> None:
    """``sv sandbox run``, on the top-level subparsers ``sub``."""
    from security_verifiers.cli.common import add_config_options
    from security_verifiers.engines.sandbox import SandboxLimits

    sandbox = sub.add_parser("sandbox", help="Run a command in the sandbox that runs model-written code.")
    sandbox_sub = sandbox.add_subparsers(dest="sandbox_command", required=True, metavar="SANDBOX_COMMAND")
    run = sandbox_sub.add_parser("run", help="Run CMD in the sandbox with WORKDIR as its writable directory.",
                                 description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter,
                                 usage="sv sandbox run [OPTIONS] WORKDIR -- CMD [ARGS...]")
    run.add_argument("workdir", metavar="WORKDIR", help="Directory the command may write; /work inside.")
    run.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- CMD [ARGS...]",
                     help="The command and its arguments, after `--` (looked up on the sandbox's PATH).")
    run.add_argument("--ro", action="append", default=[], metavar="PATH",
                     help="A host path to show read-only at the same path (repeatable; default: none).")
    add_config_options(run, SandboxLimits, "limits")
    run.set_defaults(func=cmd_sandbox_run)


def cmd_sandbox_run(args: argparse.Namespace) -> int:
    from security_verifiers.cli.common import config_from_args
    from security_verifiers.engines.sandbox import SandboxLimits, SandboxUnavailable, run

    command = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if command is args.cmd and command and command[0].startswith("-"):
        raise ConfigError(f"sv sandbox run: {command[0]} after WORKDIR; options go before it: "
                          "sv sandbox run [OPTIONS] WORKDIR -- CMD [ARGS...]")
    if not command:
        raise ConfigError("sv sandbox run: no command; give it after WORKDIR and --, e.g. "
                          "sv sandbox run ./work -- python3 main.py")
    limits = config_from_args(SandboxLimits, args)
    try:
        result = run(command, args.workdir, limits, args.ro)
    except (SandboxUnavailable, InfraError) as err:
        print(f"sv: error: {err}", file=sys.stderr)
        return EXIT_SANDBOX_FAILED
    sys.stdout.buffer.write(result.stdout)
    sys.stdout.flush()
    sys.stderr.buffer.write(result.stderr)
    for name, cut in (("stdout", result.stdout_truncated), ("stderr", result.stderr_truncated)):
        if cut:
            print(f"\nsv sandbox: {name} cut at {limits.output_bytes} bytes", file=sys.stderr)
    if result.timed_out:
        print(f"sv sandbox: timed out after {limits.timeout:g} s; the sandbox was killed", file=sys.stderr)
    elif result.signal is not None:
        print(f"sv sandbox: killed by {_signal_name(result.signal)}", file=sys.stderr)
    sys.stderr.flush()
    return result.exit_code
