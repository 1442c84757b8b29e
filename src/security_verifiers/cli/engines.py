"""``sv engines``: the scanners the rewards rest on, where they were found, and semgrep's own virtualenv."""

from __future__ import annotations

import argparse
import json
import sys
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path
from typing import Any

#: The scanners installed as Python packages beside this one (pinned in pyproject.toml).
PACKAGED = ("regopy", "checkov", "kubernetes-validate", "bandit")


def _semgrep_row() -> dict[str, Any]:
    from security_verifiers.core.errors import EngineUnavailable
    from security_verifiers.engines.semgrep import SEMGREP_VERSION, checked_semgrep, locate_semgrep, semgrep_home

    found = locate_semgrep()
    row: dict[str, Any] = {"name": "semgrep", "pinned": SEMGREP_VERSION, "version": None,
                           "path": found[0] if found else None, "found_by": found[1] if found else None,
                           "home": str(semgrep_home()), "ok": False, "problem": None}
    try:
        row["path"], row["version"] = checked_semgrep()
        row["ok"] = True
    except EngineUnavailable as err:
        row["problem"] = str(err)
    return row


def _package_row(name: str) -> dict[str, Any]:
    try:
        dist = distribution(name)
    except PackageNotFoundError:
        return {"name": name, "version": None, "path": None, "found_by": None, "ok": False,
                "problem": f"{name} is not installed; install the project (pip install -e .)"}
    return {"name": name, "version": dist.version, "path": str(Path(str(dist.locate_file(""))).resolve()),
            "found_by": "this interpreter's packages", "ok": True, "problem": None}


def cmd_status(args: argparse.Namespace) -> int:
    rows = [_semgrep_row(), *(_package_row(name) for name in PACKAGED)]
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        for row in rows:
            if row["ok"]:
                print(f"{row['name']} {row['version']}: {row['path']} ({row['found_by']})")
            else:
                print(f"{row['name']}: unavailable: {row['problem']}")
    return 0 if all(row["ok"] for row in rows) else 1


def cmd_install(args: argparse.Namespace) -> int:
    import os

    from security_verifiers.engines.semgrep import BINARY_VARIABLE, install_semgrep

    binary, _ = install_semgrep(Path(args.home) if args.home else None)
    print(binary)
    if os.environ.get(BINARY_VARIABLE) and Path(os.environ[BINARY_VARIABLE]).expanduser() != binary:
        print(f"note: ${BINARY_VARIABLE} is set ({os.environ[BINARY_VARIABLE]}) and is used instead of it",
              file=sys.stderr)
    return 0


# -- parser ----------------------------------------------------------------------------------
def register(sub: Any) -> None:
    """Add ``sv engines`` to the command line's subcommands."""
    from security_verifiers.engines.semgrep import BINARY_VARIABLE, HOME_VARIABLE, SEMGREP_VERSION

    engines = sub.add_parser(
        "engines", help="The scanners the rewards rest on: their versions and where they are; install semgrep.",
        description=f"The policy engines and static analysers are pinned: their findings are part of the reward. "
        f"regopy, Checkov, kubernetes-validate and bandit are Python dependencies of the project. semgrep "
        f"({SEMGREP_VERSION}) is not: its own pins clash with other libraries (Prime Intellect's verifiers), so "
        f"`sv engines install` gives it a virtualenv of its own (`make` runs it). semgrep is looked for at "
        f"${BINARY_VARIABLE} (a path to the binary), in that virtualenv (${HOME_VARIABLE}, default "
        f"engines/semgrep inside this virtualenv), next to this interpreter, then on PATH; any version but "
        f"{SEMGREP_VERSION} is refused.")
    engines_sub = engines.add_subparsers(dest="engines_command", required=True, metavar="ENGINES_COMMAND")
    status_help = ("Each scanner's version and where it was found; exit status 1 when one is missing or, for semgrep, "
                   "not the pinned version.")
    status = engines_sub.add_parser("status", help=status_help, description=status_help)
    status.add_argument("--json", action="store_true", help="Print it as JSON.")
    status.set_defaults(func=cmd_status)
    install_help = (f"Create semgrep's own virtualenv and install semgrep=={SEMGREP_VERSION} into it with pip (needs "
                    "the package index; pip's progress on stderr); does nothing when that version is already there. "
                    "Prints the binary's path.")
    install = engines_sub.add_parser("install", help=install_help, description=install_help)
    install.add_argument("--home", default=None, metavar="DIR",
                         help=f"The virtualenv to create (default: ${HOME_VARIABLE}, else engines/semgrep inside "
                         "this interpreter's virtualenv, else ~/.local/share/security-verifiers/engines/semgrep); "
                         f"semgrep is found there only when it is the default, or {HOME_VARIABLE} names it.")
    install.set_defaults(func=cmd_install)
