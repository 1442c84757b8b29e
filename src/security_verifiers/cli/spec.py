"""``sv spec``: write (or check) SVBENCH.md, the benchmark's versioned specification."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def cmd_spec(args: argparse.Namespace) -> int:
    from security_verifiers.report.svbench import render

    text = render()
    out = Path(args.out)
    if args.check:
        current = out.read_text(encoding="utf-8") if out.exists() else ""
        if current != text:
            print(f"{out} differs from what the code specifies now; run `sv spec --out {out}` and commit it",
                  file=sys.stderr)
            return 1
        print(f"{out} is up to date")
        return 0
    out.write_text(text, encoding="utf-8")
    print(f"wrote {out}")
    return 0


def register(sub: Any) -> None:
    """Add ``sv spec`` to the command line's subcommands."""
    spec = sub.add_parser("spec", help="Write SVBENCH.md, the benchmark's versioned specification.",
                          description="Writes SVBENCH.md from the code and the committed data files: per "
                          "environment its version, the public splits' hashes, the gated sets' commitments, the "
                          "reward's components and weights, the headline metrics, the scoring engines' versions "
                          "and the baselines' recorded public scores. --check exits 1 when the file differs.")
    spec.add_argument("--out", default="SVBENCH.md", help="The file to write or check.")
    spec.add_argument("--check", action="store_true", help="Compare instead of writing; exit 1 on a difference.")
    spec.set_defaults(func=cmd_spec)
