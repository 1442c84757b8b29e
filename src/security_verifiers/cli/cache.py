"""``sv cache``: the response cache's contents, and clearing it."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from security_verifiers.cli.evaluate import response_cache_path


def cmd_cache(args: argparse.Namespace) -> int:
    from security_verifiers.core.cache import ResponseCache

    path = response_cache_path(args)
    fitted = sorted((path.parent / "phishing-classical").glob("*.pkl"))
    if args.cache_command == "clear" and args.model is None and fitted:  # models fitted by baselines: refitted
        for model in fitted:
            model.unlink(missing_ok=True)
        print(f"removed {len(fitted)} fitted baseline model{'s' if len(fitted) != 1 else ''} from "
              f"{path.parent / 'phishing-classical'}", file=sys.stderr)
    scans = path.parent / "config-audit-scans"
    stores = sorted([*scans.glob("scanners-*.sqlite*"), *scans.glob("parses-*.sqlite*")])
    if args.cache_command == "clear" and args.model is None and stores:  # config-audit's scans and parses: redone
        for store in stores:
            store.unlink(missing_ok=True)
        print(f"removed config-audit's stored scans and parses ({len(stores)} file(s)) from {scans}",
              file=sys.stderr)
    if not path.is_file():  # opening would create it
        print(f"no response cache at {path}", file=sys.stderr)
        return 0
    with ResponseCache(path) as cache:
        if args.cache_command == "clear":
            removed = cache.clear(args.model)
            print(f"removed {removed} entr{'y' if removed == 1 else 'ies'}"
                  f"{f' of {args.model}' if args.model else ''} from {path}", file=sys.stderr)
            return 0
        info = cache.info()
    if args.json:
        print(info.model_dump_json(indent=2))
        return 0
    print(f"{info.path}: {info.entries} entries, {info.bytes_on_disk / 1024:.1f} KiB on disk")
    for origin in info.origins:
        fingerprint = f", system_fingerprint {origin.system_fingerprint}" if origin.system_fingerprint else ""
        print(f"  {origin.model or '(model not recorded)'} at {origin.base_url or '(endpoint not recorded)'}"
              f"{fingerprint}: {origin.entries}")
    return 0


# -- parser ----------------------------------------------------------------------------------
def register(sub: Any) -> None:
    """Add ``sv cache`` to the command line's subcommands."""
    cache = sub.add_parser("cache", help="Inspect or clear the response cache of model answers.",
                           description="sv eval keeps every model answer in a sqlite file, keyed by model name, "
                           "endpoint, messages, tools, sampling and sample index, and answers an identical request "
                           "from it without asking the model. A model redeployed under the same name and URL "
                           "would still get its old answers: clear them (or run with --no-cache).")
    cache_sub = cache.add_subparsers(dest="cache_command", required=True, metavar="CACHE_COMMAND")
    info = cache_sub.add_parser("info", help="Path, entries, size on disk, and the models, endpoints and "
                                "deployments (system_fingerprint) whose answers it holds.")
    info.add_argument("--json", action="store_true", help="Print it as JSON.")
    clear = cache_sub.add_parser("clear", help="Remove every entry, or those of one model; without --model also the "
                                 "baseline models fitted and kept on disk (the phishing classical baseline's), which "
                                 "the next run fits again, and config-audit's stored scanner findings and parses "
                                 "(engines/scan_store.py, engines/parse_store.py), which the next run computes again.")
    clear.add_argument("--model", default=None, help="Only this model's entries (default: all).")
    for parser_ in (info, clear):
        parser_.add_argument("--cache-dir", default=None,
                             help="Response cache directory (default: $SV_CACHE_DIR or ~/.cache/security-verifiers).")
    cache.set_defaults(func=cmd_cache)
