"""What every ``sv`` command shares: the one-line usage errors, exit codes, and the options derived from the
pydantic configs (:class:`Endpoint`, :class:`Sampling`, :class:`RunConfig`), so their help, defaults and
validation are written once."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel, ValidationError

from security_verifiers.core.errors import ConfigError, plain_errors
from security_verifiers.core.logging_setup import DEFAULT_LEVEL, LEVELS

EXIT_USAGE = 2
#: The split ``sv eval`` evaluates when neither --split nor --data is given.
DEFAULT_SPLIT = "test"
EXIT_ERROR_RATE = 3


DEFAULT_TRAIN_OUT = str(Path("outputs") / "train")


class Parser(argparse.ArgumentParser):
    """argparse with its usage errors on one line (the usage itself is one ``--help`` away), exit status 2."""

    def error(self, message: str) -> Any:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {' '.join(message.split())} (see `{self.prog} --help`)\n")


def check_text_file(path: Path, option: str) -> None:
    """A ConfigError unless ``path`` is a readable UTF-8 text file (checked before anything reads it)."""
    if not path.is_file():
        raise ConfigError(f"{option} {path}: {'a directory' if path.is_dir() else 'no such file'}")
    try:
        path.read_bytes().decode("utf-8")
    except OSError as err:
        raise ConfigError(f"{option} {path}: cannot read it ({err.strerror or err})") from err
    except UnicodeDecodeError as err:
        raise ConfigError(f"{option} {path}: not UTF-8 text ({err.reason})") from err


def add_config_options(parser: argparse.ArgumentParser, model: type[BaseModel], title: str) -> None:
    """One ``--kebab-case`` option per field of ``model``, with the field's description as help.

    A field that may be ``None`` also takes the value ``none`` (leave it unset: e.g. send no temperature);
    a ``Literal`` field lists its choices. An option not given keeps the model's default."""
    group = parser.add_argument_group(title)
    for name, field in model.model_fields.items():
        annotation = field.annotation
        members = get_args(annotation)
        kind: Any = str
        for candidate in (bool, int, float):
            if annotation is candidate or candidate in members:
                kind = candidate
                break
        optional = type(None) in members
        flag = "--" + name.replace("_", "-")
        unset = "; 'none' leaves it unset" if optional else ""
        help_text = f"{field.description} (default: {field.default}{unset})"
        if kind is bool:
            group.add_argument(flag, dest=name, action=argparse.BooleanOptionalAction, default=argparse.SUPPRESS,
                               help=help_text)
            continue
        choices = list(members) if get_origin(annotation) is Literal else None
        group.add_argument(flag, dest=name, type=_or_none(kind) if optional else kind, choices=choices,
                           default=argparse.SUPPRESS, help=help_text)


def _or_none(kind: Callable[[str], Any]) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        return None if text.strip().lower() == "none" else kind(text)

    parse.__name__ = getattr(kind, "__name__", "value")  # argparse names the type in its error messages
    return parse


def config_from_args(model: type[BaseModel], args: argparse.Namespace) -> Any:
    values = {k: getattr(args, k) for k in model.model_fields if hasattr(args, k)}
    try:
        return model.model_validate(values)
    except ValidationError as err:
        raise ConfigError(plain_errors(err, model, _flag_of)) from err


def _flag_of(loc: tuple[int | str, ...]) -> str:
    """The option of a config field at ``loc``, as ``add_config_options`` spells it."""
    return "--" + ".".join(map(str, loc)).replace("_", "-")


def parse_env_options(pairs: list[str]) -> dict[str, Any]:
    """``key=value`` pairs; values are read as JSON when they parse, else as strings."""
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise ConfigError(f"--env-option expects key=value, got {pair!r}")
        try:
            options[key] = json.loads(raw)
        except json.JSONDecodeError:
            options[key] = raw
    return options


def chosen(option: str, given: str | None, known: tuple[str, ...]) -> set[str] | None:
    if given is None:
        return None
    chosen = {c.strip().lower() for c in given.split(",") if c.strip()}
    unknown = sorted(chosen - set(known))
    if unknown or not chosen:
        raise ConfigError(f"{option}: unknown value(s) {', '.join(unknown) or repr(given)}; "
                          f"choose from {', '.join(known)}")
    return chosen


def abbreviated(types: list[str], shown: int = 3) -> str:
    """Resource types for the table (the full list is in --json)."""
    if not types:
        return "any"
    more = f" +{len(types) - shown} more" if len(types) > shown + 1 else ""
    return ", ".join(types if not more else types[:shown]) + more


def add_executor_options(parser: argparse.ArgumentParser, actors: str = "") -> None:
    """``--executor`` and ``--ray-address`` of the commands that score without a RunConfig (``sv bench``, ``sv
    serve``); ``sv eval`` has them from :class:`~security_verifiers.harness.runner.RunConfig`. ``actors`` says
    how many actors (a command's own option), where the command has one."""
    parser.add_argument("--executor", choices=("local", "ray"), default="local",
                        help="Where rollouts are scored: local (worker processes of this machine) or ray (actors on "
                        f"a Ray cluster{actors}, under the same per-rollout limits; the extra "
                        "security-verifiers[ray]) (default: local).")
    parser.add_argument("--ray-address", default=None,
                        help="With --executor ray, the cluster to join (host:port, or auto). Default: $RAY_ADDRESS, "
                        "else a local cluster of this machine.")


def add_log_level(parser: argparse.ArgumentParser, default: Any = argparse.SUPPRESS) -> None:
    """``--log-level`` before the command or after it (a command's own copy leaves the value alone unless given)."""
    parser.add_argument("--log-level", default=default, type=str.upper, choices=LEVELS,
                        help="What the libraries log on stderr: INFO names the model client's retries, DEBUG every "
                        f"request (default: {DEFAULT_LEVEL}).")


