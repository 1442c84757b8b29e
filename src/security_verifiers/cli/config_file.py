"""``sv eval --config FILE``: every flag of the command from a YAML file; a flag on the command line wins.

Keys are the flags' names without the dashes, spelled with ``-`` or ``_`` (``max-error-rate`` or
``max_error_rate``), plus ``env`` for the positional environment. Values are what the flag takes: a number, a
string, ``true``/``false`` for switches; ``env-option`` a mapping (or a list of ``KEY=VALUE``). An unknown key is
an error that lists the valid ones, so a typo never silently falls back to a default. The run records the file's
path, hash and settings in its ``metadata.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path
from typing import Any

import yaml

from security_verifiers.core.errors import ConfigError

#: Set on every destination before the command line is parsed again: still there afterwards means not given.
_NOT_GIVEN = object()
#: Flags a config file cannot set: they choose the file or only print.
_NOT_IN_FILES = frozenset({"config", "help", "func", "command", "command_parser"})


def read_config_file(path: Path) -> dict[str, Any]:
    """The file's settings, keys normalised to destinations (``max-error-rate`` -> ``max_error_rate``)."""
    if not path.is_file():
        raise ConfigError(f"--config {path}: {'a directory' if path.is_dir() else 'no such file'}")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"--config {path}: cannot read it ({err})") from err
    except yaml.YAMLError as err:
        where = getattr(err, "problem_mark", None)
        line = f" (line {where.line + 1})" if where is not None else ""
        raise ConfigError(f"--config {path}: not valid YAML{line}: {getattr(err, 'problem', None) or err}") from err
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"--config {path}: expected a mapping of flag names to values, got a {type(data).__name__}")
    settings: dict[str, Any] = {}
    for key, value in data.items():
        name = str(key).strip().lstrip("-").replace("-", "_")
        if name in settings:
            raise ConfigError(f"--config {path}: {key!r} is given twice")
        settings[name] = value
    return settings


def _actions(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {action.dest: action for action in parser._actions  # noqa: SLF001 (argparse has no public listing)
            if action.dest not in _NOT_IN_FILES and action.dest != argparse.SUPPRESS}


def _flag(action: argparse.Action) -> str:
    return action.option_strings[-1] if action.option_strings else action.dest.upper()


def _value(action: argparse.Action, value: Any, path: Path) -> Any:
    """``value`` as the flag would have produced it from the command line."""
    where = f"--config {path}: {action.dest.replace('_', '-')}"
    if isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction,  # noqa: SLF001
                           argparse.BooleanOptionalAction)):
        if not isinstance(value, bool):
            raise ConfigError(f"{where} is a switch: give true or false, not {value!r}")
        if isinstance(action, argparse._StoreFalseAction):  # noqa: SLF001
            return not value
        return value
    if isinstance(action, argparse._AppendAction):  # noqa: SLF001
        if isinstance(value, dict):  # env-option as a mapping: KEY=<JSON>
            return [f"{key}={json.dumps(item)}" for key, item in value.items()]
        items = value if isinstance(value, list) else [value]
        return [_value(argparse.Action([], action.dest, type=action.type), item, path) for item in items]
    if isinstance(value, (dict, list)) or value is None:
        raise ConfigError(f"{where}: expected a single value, got {value!r}")
    text = str(value).lower() if isinstance(value, bool) else str(value)
    converted: Any = text
    if action.type is not None:
        try:
            converted = action.type(text)
        except (TypeError, ValueError, argparse.ArgumentTypeError) as err:
            raise ConfigError(f"{where}: invalid value {value!r} ({err})") from err
    if action.choices is not None and converted not in action.choices:
        raise ConfigError(f"{where}: {value!r} is not one of {', '.join(map(str, action.choices))}")
    return converted


def apply_config_file(parser: argparse.ArgumentParser, argv: list[str], args: argparse.Namespace,
                      path: Path) -> dict[str, Any]:
    """Fill ``args`` (parsed from ``argv`` by ``parser``, the command's own parser) with the file's settings for
    every flag the command line did not give; returns what the run records about the file."""
    settings = read_config_file(path)
    actions = _actions(parser)
    unknown = sorted(set(settings) - set(actions))
    if unknown:
        raise ConfigError(f"--config {path}: unknown setting(s) {', '.join(unknown)}; valid: "
                          f"{', '.join(sorted(name.replace('_', '-') for name in actions))}")
    given = parser.parse_args(argv, namespace=argparse.Namespace(**{dest: _NOT_GIVEN for dest in actions}))
    for dest, value in settings.items():
        action = actions[dest]
        if getattr(given, dest, _NOT_GIVEN) is not _NOT_GIVEN and not (action.nargs == "?" and
                                                                      getattr(given, dest) is None):
            continue  # the command line wins
        setattr(args, dest, _value(action, value, path))
    raw = path.read_bytes()
    return {"path": str(path.resolve()), "sha256": hashlib.sha256(raw).hexdigest(), "settings": settings}
