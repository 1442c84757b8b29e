"""``sv envs``: environments, their splits, baselines and options."""

from __future__ import annotations

import argparse
import json
from typing import Any, Literal, get_args, get_origin


def _print_options(name: str) -> int:
    """An environment's options (``--env-option KEY=VALUE``): name, type, default and description of each field of
    its pydantic config class."""
    from security_verifiers.envs.base import get_env

    env = get_env(name)
    defaults = env.config.model_dump(mode="json")  # nested defaults (a cost profile) as the JSON an option takes
    print(f"{name} options (--env-option KEY=VALUE, values read as JSON):")
    for key, field in type(env.config).model_fields.items():
        annotation = field.annotation
        if get_origin(annotation) is Literal:
            kind = " | ".join(map(str, get_args(annotation)))
        else:
            kind = getattr(annotation, "__name__", None) or str(annotation).replace("typing.", "")
        print(f"  {key} ({kind}; default {json.dumps(defaults[key])}): {' '.join((field.description or '').split())}")
    return 0


def cmd_envs(args: argparse.Namespace) -> int:
    from security_verifiers.envs.base import registry

    if args.options is not None:
        return _print_options(args.options)

    if args.json:
        rows = []
        for name, cls in sorted(registry().items()):
            rows.append({"name": name, "version": cls.version, "splits": list(cls.splits),
                         "public_splits": list(cls.public_splits),
                         "baselines": [f"baseline:{b}" for b in cls().baselines()],
                         "config": cls.config_class.model_json_schema(),
                         "schemas": cls.item_contract.schemas(name)})
        print(json.dumps(rows, indent=2))
        return 0
    for name, cls in sorted(registry().items()):
        env = cls()
        print(f"{name} (v{cls.version}): splits {', '.join(cls.splits)} (public: {', '.join(cls.public_splits)})")
        print(f"  baselines: {', '.join('baseline:' + b for b in env.baselines())}")
    return 0


# -- parser ----------------------------------------------------------------------------------
def register(sub: Any) -> None:
    """Add ``sv envs`` to the command line's subcommands."""
    envs = sub.add_parser("envs", help="List environments, their splits and baselines.",
                          description="Each environment's version, splits and baselines; with --json also the JSON "
                          "Schemas of its options, of its items (one line of a dataset file, with its input and "
                          "target) and of its answers, for writing your own items.")
    envs.add_argument("--json", action="store_true", help="A JSON list with the item, input, target, answer and "
                      "config schemas of every environment.")
    envs.add_argument("--options", default=None, metavar="ENV",
                      help="List ENV's options (--env-option KEY=VALUE): name, type, default and description.")
    envs.set_defaults(func=cmd_envs)
