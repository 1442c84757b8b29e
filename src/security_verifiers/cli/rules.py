"""``sv rules``: an environment's rule catalog."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from pydantic import BaseModel

from security_verifiers.cli.common import (
    abbreviated,
    chosen,
)
from security_verifiers.core.errors import ConfigError


def _rule_row(rule: BaseModel) -> dict[str, Any]:
    """One rule as data: the implementing engine first in ``engines``, then Checkov when checks are mapped."""
    raw = rule.model_dump(mode="json")
    engines = [raw["engine"], *(["checkov"] if raw["checkov"] and raw["engine"] != "checkov" else [])]
    return {"id": raw["id"], "title": raw["title"], "severity": raw["severity"], "platforms": raw["platforms"],
            "resource_types": raw["resource_types"], "engines": engines, "checkov": raw["checkov"],
            "reference": raw["reference"], "remediation": raw["remediation"]}


def cmd_rules(args: argparse.Namespace) -> int:
    from security_verifiers.engines.findings import PLATFORMS, Severity
    from security_verifiers.envs.base import get_env, registry

    env = get_env(args.env)
    rules = env.rules()
    if rules is None:
        having = sorted(name for name, cls in registry().items() if cls().rules() is not None)
        raise ConfigError(f"environment {env.name} has no rule catalog (environments with one: {', '.join(having)})")
    platforms = chosen("--platform", args.platform, PLATFORMS)
    severities = chosen("--severity", args.severity, tuple(s.value for s in Severity))
    rows = sorted((_rule_row(r) for r in rules), key=lambda r: r["id"])
    rows = [r for r in rows if (platforms is None or platforms & set(r["platforms"]))
            and (severities is None or r["severity"] in severities)]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{env.name} rules", caption=f"{len(rows)} rule(s); --json for references and remediations")
    for column in ("id", "severity", "platforms", "engines", "Checkov", "resource types", "title"):
        table.add_column(column, overflow="fold")
    for r in rows:
        table.add_row(r["id"], r["severity"], ", ".join(r["platforms"]), ", ".join(r["engines"]),
                      ", ".join(r["checkov"]), abbreviated(r["resource_types"]), r["title"])
    console = Console() if sys.stdout.isatty() else Console(width=200)
    console.print(table)
    return 0


# -- parser ----------------------------------------------------------------------------------
def register(sub: Any) -> None:
    """Add ``sv rules`` to the command line's subcommands."""
    rules = sub.add_parser("rules", help="List an environment's rule catalog.",
                           description="The rules the scorer checks: id, title, severity, platforms, resource "
                           "types, engines (the implementing one first, then checkov when Checkov checks are mapped "
                           "onto the rule), Checkov ids, reference and remediation.")
    rules.add_argument("env", help="Environment name (config-audit).")
    rules.add_argument("--json", action="store_true", help="A JSON list of objects (sorted by id) instead of a table.")
    rules.add_argument("--platform", default=None, help="Only rules of these platforms (comma-separated: kubernetes, "
                       "terraform).")
    rules.add_argument("--severity", default=None,
                       help="Only rules of these severities (comma-separated: low, medium, high, critical).")
    rules.set_defaults(func=cmd_rules)
