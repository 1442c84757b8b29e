"""A tool's arguments: one pydantic model per tool gives both the JSON Schema the model is shown and the check of
what it sends, so the two cannot drift apart.

The schema keeps to what function calling needs (a type and a description per argument, which ones are
required, no others allowed) and the argument types tools acting on text take: strings, integers, numbers,
booleans, each optional with a ``None`` default. A model of any other shape is refused when the tool is
declared, not when a model first calls it. Every string argument is bounded in length by the toolbox, so no
call can make a tool read an unbounded text.
"""

from __future__ import annotations

import json
import types
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

_JSON_TYPES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


def _json_type(name: str, annotation: Any) -> tuple[str, bool]:
    """The JSON type of an argument and whether it may be omitted (``T | None``)."""
    if get_origin(annotation) in (Union, types.UnionType):
        members = [m for m in get_args(annotation) if m is not type(None)]
        if len(members) == 1 and len(get_args(annotation)) == 2 and members[0] in _JSON_TYPES:
            return _JSON_TYPES[members[0]], True
    elif annotation in _JSON_TYPES:
        return _JSON_TYPES[annotation], False
    raise TypeError(f"tool argument {name!r}: {annotation!r} is not a string, integer, number or boolean "
                    "(optionally `| None`)")


def parameters_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON Schema of a tool's ``parameters``, from its arguments model (``TypeError`` for unsupported ones).

    >>> from pydantic import Field
    >>> class Args(BaseModel):
    ...     config: str | None = Field(None, description="The text.")
    >>> parameters_schema(Args)
    {'type': 'object', 'properties': {'config': {'type': 'string', 'description': 'The text.'}}, \
'additionalProperties': False}
    """
    properties: dict[str, Any] = {}
    required = []
    for name, field in model.model_fields.items():
        kind, optional = _json_type(name, field.annotation)
        if optional and field.default is not None:
            raise TypeError(f"tool argument {name!r}: an optional argument defaults to None (the tool's default)")
        if not optional and not field.is_required():
            raise TypeError(f"tool argument {name!r}: give it a default of None and type `| None`, or none")
        properties[name] = {"type": kind, "description": field.description or ""}
        if not optional:
            required.append(name)
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    return schema


def parse_arguments(model: type[BaseModel], text: str, max_text_chars: int) -> BaseModel | str:
    """The call's ``text`` as ``model``, or what is wrong with it (the model is answered that, as a JSON error).

    Empty text means no arguments. A string argument that is not a string (``null`` included: leave it out to
    take the tool's default) or longer than ``max_text_chars`` is named in the answer, as is any key the tool
    does not take.
    """
    raw = _load(text)
    if isinstance(raw, _NotJson):
        return raw.reason
    names = list(model.model_fields)
    if not isinstance(raw, dict) or set(raw) - set(names):
        keys = ", ".join(repr(name) for name in names)
        return f"arguments must be an object with at most the key{'s' if len(names) > 1 else ''} {keys}"
    for name, value in raw.items():
        if _json_type(name, model.model_fields[name].annotation)[0] == "string" and (
                not isinstance(value, str) or len(value) > max_text_chars):
            return f"{name} must be a string of at most {max_text_chars} characters"
    try:
        return model.model_validate(raw, strict=True)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "arguments"
        return f"{where}: {first['msg']}"


def parse_object(text: str, max_chars: int) -> dict[str, Any] | str:
    """The call's ``text`` as a JSON object of any keys, or what is wrong with it: for tools whose own runtime
    checks their arguments (AgentDojo's, whose argument types no JSON Schema here describes). Empty text means
    no arguments; a text over ``max_chars`` is refused unread.

    >>> parse_object('{"n": [1]}', 100), parse_object("[1]", 100), parse_object("x" * 9, 8)
    ({'n': [1]}, 'arguments must be a JSON object', 'arguments over 8 characters')
    """
    if len(text) > max_chars:
        return f"arguments over {max_chars} characters"
    raw = _load(text)
    if isinstance(raw, _NotJson):
        return raw.reason
    if not isinstance(raw, dict):
        return "arguments must be a JSON object"
    return raw


class _NotJson:
    """Why a call's arguments are not JSON (a class of its own: ``null`` or a string are JSON values)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


def _load(text: str) -> Any:
    """The JSON value of ``text`` (empty text: no arguments, ``{}``), or why it is none."""
    try:
        return json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as err:
        return _NotJson(f"arguments are not valid JSON: {err.msg}")
