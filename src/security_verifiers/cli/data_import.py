"""``sv data import ENV``: a user's own files into a dataset that ``sv eval ENV --data FILE`` takes.

One generic command: each environment that imports declares an :class:`~security_verifiers.core.importing.
Importer` (:meth:`~security_verifiers.envs.base.Environment.importer`, in its ``importer.py``) with its arguments
and readers; this module adds the arguments every import shares, shows the progress, checks the items against the
environment's item contract as they stream by, writes them and reports. An import leaves out what cannot be
read, reports it (file, line, reason) on stderr with a summary, and exits 0; ``--strict`` turns any problem into
exit status 1 with nothing written. Items are written to ``OUT.partial`` as they come and moved into place at the
end, so an interrupted import never leaves a file that looks complete.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from security_verifiers.core.errors import ConfigError, DatasetError

if TYPE_CHECKING:
    from security_verifiers.envs.base import Environment


class _Bar:
    """An importer's progress as a rich bar on stderr (nothing at all with ``--quiet``); ``columns`` are the
    importer's extra text columns, filled from the fields of :meth:`begin` and :meth:`update`."""

    def __init__(self, quiet: bool, columns: tuple[str, ...]) -> None:
        self._quiet = quiet
        self._task: Any = None
        self._bar: Any = None
        if not quiet:
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn

            self._bar = Progress(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(),
                                 *(TextColumn(c) for c in columns), TimeElapsedColumn(),
                                 console=Console(stderr=True), refresh_per_second=4)

    def __enter__(self) -> _Bar:
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()

    def begin(self, description: str, total: float | None = None, **fields: Any) -> None:
        if self._bar is not None:
            self._task = self._bar.add_task(description, total=total, **fields)

    def update(self, completed: float | None = None, **fields: Any) -> None:
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, completed=completed, **fields)

    def say(self, line: str) -> None:
        if not self._quiet:
            print(line, file=sys.stderr, flush=True)


#: The environments that declare an importer, as ``sv data import --help`` names them (a test keeps it equal to the
#: registry's: the list is written out so that the CLI's parser is built without importing every environment).
IMPORTING = ("config-audit", "network-logs", "code-repair", "phishing", "redteam-defense")


def add_import_command(data_sub: Any) -> None:
    """``sv data import ENV ARGS...``: ``ENV``'s own arguments are parsed by the parser built from its importer
    (:func:`import_parser`), once ``ENV`` is known: every ``sv`` command builds its parser, and building this one
    for every environment would import them all (half a second) for any command."""
    imp = data_sub.add_parser(
        "import", help="Turn your own files (configs, flow captures, mail, JBB requests) into a dataset.",
        usage="sv data import ENV [--help] ARGS...",
        description="Read real files into items that `sv eval ENV --data FILE` takes. What cannot be read is left "
        "out and reported (file, line, reason) on stderr; the exit status is 0 unless --strict. "
        f"ENV is one of {', '.join(IMPORTING)} (or a registered environment that declares an importer); "
        "`sv data import ENV --help` shows its formats and arguments.")
    imp.add_argument("import_env", metavar="ENV", help="The environment to import into.")
    imp.add_argument("import_args", nargs=argparse.REMAINDER, metavar="ARGS",
                     help="ENV's arguments (see `sv data import ENV --help`).")
    imp.set_defaults(func=cmd_data_import)


def import_parser(env: type[Environment]) -> argparse.ArgumentParser:
    """The parser of ``sv data import ENV``: the arguments ``ENV``'s importer declares and those every import
    shares."""
    importer = env.importer()
    if importer is None:
        raise ConfigError(f"{env.name} imports nothing")
    from security_verifiers.cli.common import Parser

    parser = Parser(
        prog=f"sv data import {env.name}", description=importer.description,
        formatter_class=argparse.RawDescriptionHelpFormatter if importer.raw_description else argparse.HelpFormatter)
    for argument in importer.arguments:
        parser.add_argument(*argument.flags, **argument.options)
    parser.add_argument("--out", required=True, help="Output JSONL file.")
    parser.add_argument("--split", default="local", help="Split name written into every item.")
    parser.add_argument("--strict", action="store_true",
                        help="Any unreadable file or row is a failure: exit 1 and write nothing.")
    parser.add_argument("--quiet", action="store_true", help="No progress bar.")
    return parser


def importing_environments() -> dict[str, type[Environment]]:
    """The registered environments that declare an importer."""
    from security_verifiers.envs.base import registry

    return {name: env for name, env in registry().items() if env.importer() is not None}


def _checked(env: type[Environment], items: Iterable[Any], where: str) -> Iterable[Any]:
    """The items, each checked against the environment's item contract: a list at once (the first bad item
    named with the count of the others), a stream as each goes by (an import may hold millions)."""
    if isinstance(items, list):
        env.check_items(items, None, where)
        return items
    return _each_checked(env, items, where)


def _each_checked(env: type[Environment], items: Iterable[Any], where: str) -> Iterator[Any]:
    for item in items:
        env.check_items([item], None, where)
        yield item


def cmd_data_import(args: argparse.Namespace) -> int:
    """Import with the environment's declared importer (see the module's docstring)."""
    envs = importing_environments()
    if args.import_env not in envs:
        raise ConfigError(f"sv data import: invalid choice: {args.import_env!r} (choose from "
                          f"{', '.join(sorted(envs))}: the environments that import files)")
    env = envs[args.import_env]
    importer = env.importer()
    assert importer is not None
    args = import_parser(env).parse_args(args.import_args)
    _out_path(args)
    t0 = time.perf_counter()
    values = vars(args)
    partial = Path(args.out + ".partial")
    with _Bar(args.quiet, importer.progress_columns) as bar:
        run = importer.run(values, bar)
        digest = write_partial(_checked(env, run.items, f"sv data import {env.name}"), partial,
                               _header(env.name, args))
    summary = run.summary()
    for line in summary.lines:
        print(line, file=sys.stderr)
    return _finish_import(args, env.name, partial, summary.n, digest, summary.problems, t0, **summary.counts)


def _out_path(args: argparse.Namespace) -> Path:
    out = Path(args.out)
    if out.is_dir():
        raise ConfigError(f"--out {out} is a directory; give a file name")
    return out


def _header(env: str, args: argparse.Namespace) -> dict[str, Any]:
    """The header line of an imported dataset: the environment and version its items are for."""
    from security_verifiers.core.datasets import dataset_header
    from security_verifiers.envs.base import registry

    return dataset_header(env, registry()[env].version, split=args.split, written_by="sv data import")


def write_partial(items: Any, partial: Path, header: dict[str, Any]) -> str:
    """Write the items to ``partial``; on a failure (not an interrupt) nothing is left behind."""
    from security_verifiers.core.datasets import write_jsonl

    try:
        return write_jsonl(items, partial, header)
    except OSError as err:
        remove_file(partial)
        raise ConfigError(f"cannot write {partial}: {err.strerror or err}") from err
    except Exception:
        remove_file(partial)
        raise


def remove_file(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError:  # a path through a file, say: there is nothing to remove
        pass


def _finish_import(args: argparse.Namespace, env: str, partial: Path, n: int, digest: str, problems: int,
                   t0: float, **counts: int) -> int:
    """Move the written items into place and say what was imported; ``--strict`` fails on any problem."""
    out = Path(args.out)
    if args.strict and problems:
        partial.unlink(missing_ok=True)
        print(f"sv: {problems} problem(s) and --strict: nothing written to {out}", file=sys.stderr)
        return 1
    if n == 0:
        partial.unlink(missing_ok=True)
        raise DatasetError(f"nothing to import: no item could be built ({problems} problem(s)); see above")
    partial.replace(out)
    print(json.dumps({"env": env, "split": args.split, "n": n, "file": str(out), "hash": digest,
                      "problems": problems, **counts, "seconds": round(time.perf_counter() - t0, 2)}))
    return 0


