"""One vocabulary of infrastructure errors, attributed at each boundary.

A failed rollout is data: the runner records its :class:`ErrorKind` and message and leaves the
reward empty, so the failure never looks like a model's wrong answer (a reward of 0). Code at a
boundary wraps its work in :func:`boundary`, which turns any exception into an :class:`InfraError`
carrying the kind of that boundary.
"""

from __future__ import annotations

import json
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails


class ErrorKind(StrEnum):
    PROVIDER = "provider"  # the model endpoint failed (HTTP error, connection, bad response)
    TIMEOUT = "timeout"  # a request or tool call exceeded its time limit
    TOOL = "tool"  # a tool (scanner, policy engine) crashed
    SANDBOX = "sandbox"  # the sandbox could not start or run
    SCORER = "scorer"  # the scorer itself failed: a bug or a broken checker, never the model's fault


class InfraError(Exception):
    """An infrastructure failure, recorded with the rollout and kept out of the model's score."""

    def __init__(self, kind: ErrorKind, message: str) -> None:
        super().__init__(f"{kind.value}: {message}")
        self.kind = kind
        self.message = message

    def __reduce__(self) -> tuple[type[InfraError], tuple[ErrorKind, str]]:
        """Pickle as (kind, message): errors come back from scoring worker processes."""
        return (InfraError, (self.kind, self.message))


@contextmanager
def boundary(kind: ErrorKind) -> Iterator[None]:
    """Attribute any exception raised inside to ``kind`` (timeouts keep their own kind)."""
    try:
        yield
    except InfraError:
        raise
    except TimeoutError as err:
        raise InfraError(ErrorKind.TIMEOUT, str(err) or "timed out") from err
    except Exception as err:  # noqa: BLE001 - this is the one place that classifies them
        raise InfraError(kind, f"{type(err).__name__}: {err}") from err


class ConfigError(ValueError):
    """A user-facing configuration problem (unknown option, bad value); the CLI prints it and exits 2."""


class DatasetError(ValueError):
    """A dataset that cannot be trusted: a malformed file, a hash mismatch, an unknown split."""


class EngineUnavailable(RuntimeError):
    """An executable checker (policy engine, scanner, sandbox) cannot be loaded or started.

    A reward computed without one of its checkers is a different reward, so this is never caught and
    replaced by a stand-in: a run that needs the checker stops with this error."""


# -- validation errors in our own words ----------------------------------------------------------------------------
#: What a field expected, by pydantic's error type, for the errors that say the value has the wrong type.
_EXPECTED = {
    "int_type": "a whole number", "int_parsing": "a whole number", "int_from_float": "a whole number",
    "float_type": "a number", "float_parsing": "a number", "bool_type": "true or false",
    "bool_parsing": "true or false", "string_type": "a string", "dict_type": "a JSON object",
    "model_type": "a JSON object", "model_attributes_type": "a JSON object", "list_type": "a JSON list",
    "none_required": "null", "enum": "one of {expected}",
}
#: What a value must be, by pydantic's error type, for the errors that say it is out of bounds.
_BOUND = {
    "greater_than": "be above {gt}", "greater_than_equal": "be at least {ge}", "less_than": "be below {lt}",
    "less_than_equal": "be at most {le}", "multiple_of": "be a multiple of {multiple_of}",
    "literal_error": "be {expected}", "string_pattern_mismatch": "match {pattern}",
    "string_too_short": "be at least {min_length} characters long",
    "string_too_long": "be at most {max_length} characters long", "too_short": "hold at least {min_length}",
    "too_long": "hold at most {max_length}", "finite_number": "be a finite number",
}


def shown(value: Any, limit: int = 60) -> str:
    """A value as the user gave it, short: text in quotes (noting when it is not JSON, the only way an option
    value is text), anything else as JSON.

    >>> shown("{bad"), shown("x"), shown(1.5), shown([1])
    ("the text '{bad' (not JSON)", "the text 'x'", '1.5', '[1]')
    """
    if isinstance(value, str):
        text = value if len(value) <= limit else value[:limit] + "..."
        try:
            json.loads(value)
        except ValueError:
            return f"the text {text!r}" + (" (not JSON)" if value[:1] in "{[\"" and value else "")
        return f"the text {text!r}"
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _fields_at(model: type[BaseModel], loc: tuple[int | str, ...]) -> list[str] | None:
    """The field names of the model found at ``loc`` inside ``model`` (through optional and union types), or
    ``None`` when no single model is there."""
    for part in loc:
        field = model.model_fields.get(str(part))
        if field is None:
            return None
        annotation = field.annotation
        members = get_args(annotation) if get_origin(annotation) in (Union, types.UnionType) else (annotation,)
        nested = [m for m in members if isinstance(m, type) and issubclass(m, BaseModel)]
        if len(nested) != 1:
            return None
        model = nested[0]
    return list(model.model_fields)


def _problem(error: ErrorDetails, model: type[BaseModel], label: Callable[[tuple[int | str, ...]], str],
             owner: str) -> str:
    """One pydantic error as ``<label>: <what is wrong>``."""
    kind, loc, ctx = error["type"], tuple(error["loc"]), error.get("ctx") or {}
    if kind == "extra_forbidden":
        where, key = loc[:-1], loc[-1]
        keys = _fields_at(model, where)
        known = f"; valid keys: {', '.join(keys)}" if keys is not None else ""
        return f"{label(where)}: unknown key {str(key)!r}{'' if where else ' for ' + owner}{known}"
    if kind == "missing":
        return f"{label(loc)}: required"
    if kind in ("value_error", "assertion_error"):  # a validator's own message, already in our words
        return f"{label(loc)}: {' '.join(str(ctx.get('error', error['msg'])).split())}"
    if kind == "json_invalid":
        return f"{label(loc)}: not JSON ({ctx.get('error', 'invalid')})"
    given = shown(error.get("input"))
    if kind in _EXPECTED:
        return f"{label(loc)}: expected {_EXPECTED[kind].format(**ctx)}, got {given}"
    if kind in _BOUND:
        return f"{label(loc)}: must {_BOUND[kind].format(**ctx)}, got {given}"
    return f"{label(loc)}: {' '.join(str(error['msg']).split())}, got {given}"  # pydantic's words, without its URL


def plain_errors(err: ValidationError, model: type[BaseModel], label: Callable[[tuple[int | str, ...]], str],
                 owner: str = "") -> str:
    """Every problem in ``err`` (raised validating ``model``) on one line, in our words: what was given and what
    was expected (the valid keys, the choices, the bounds), each labelled as the user wrote it (``label`` maps a
    location, ``()`` for the whole, to a flag). ``owner`` names what an unknown top-level key is not a key of.

    >>> from pydantic import Field
    >>> class Config(BaseModel, extra="forbid"):
    ...     window: int = Field(20, ge=0)
    >>> try:
    ...     Config.model_validate({"window": -1, "foo": 1})
    ... except ValidationError as err:
    ...     print(plain_errors(err, Config, lambda loc: " ".join(["--opt", *map(str, loc)]), "demo"))
    --opt window: must be at least 0, got -1; --opt: unknown key 'foo' for demo; valid keys: window
    """
    return "; ".join(_problem(error, model, label, owner) for error in err.errors())
