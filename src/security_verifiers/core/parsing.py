"""Strict reading of a model's answer: the final JSON object of the reply.

Every environment reads answers through :func:`parse_answer`, so one grammar holds everywhere:
anything inside ``<think>…</think>`` is ignored, code fences are allowed, and the *last* complete
top-level JSON object in the remaining text is the answer. Nothing here raises on bad text; a
failure is a typed :class:`ParseFailure` that the scorer turns into the minimum reward.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from security_verifiers.core.types import ParseStatus

_THINK_TAG = re.compile(r"<(/?)think>", re.IGNORECASE)
_DECODER = json.JSONDecoder()
#: Replies longer than this are not searched; they cannot be a well-formed short answer anyway.
MAX_REPLY_CHARS = 200_000

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class ParseFailure:
    status: ParseStatus
    message: str


@dataclass(frozen=True)
class Parsed(Generic[M]):
    value: M


def strip_thinking(text: str) -> str:
    """Remove reasoning blocks; an unclosed ``<think>`` hides everything after it.

    Each ``<think>`` runs to the next ``</think>``; a stray ``</think>`` outside a block is kept. One pass
    over the tags, so the cost is linear: the regex ``<think>.*?</think>`` is quadratic on a reply made of
    many unclosed ``<think>`` tags (26 s for 200,000 characters), which a policy could send on purpose.

    >>> strip_thinking('<think>{"a": 1}</think>{"b": 2}')
    '{"b": 2}'
    >>> strip_thinking('a</think>b<think>c<think>d</think>e<think>f')
    'a</think>be'
    """
    kept: list[str] = []
    pos = 0
    inside = False
    for tag in _THINK_TAG.finditer(text):
        closing = bool(tag.group(1))
        if not inside and not closing:
            kept.append(text[pos:tag.start()])
            inside = True
        elif inside and closing:
            pos = tag.end()
            inside = False
    if not inside:
        kept.append(text[pos:])
    return "".join(kept)


def final_json_object(text: str) -> dict[str, Any] | ParseFailure:
    """The last complete top-level JSON object in ``text`` (after removing thinking blocks).

    >>> final_json_object('Sure.\\n```json\\n{"label": "Benign"}\\n```')
    {'label': 'Benign'}
    >>> final_json_object('no answer').status
    <ParseStatus.NO_JSON: 'no_json'>
    """
    if not isinstance(text, str) or not text.strip():
        return ParseFailure(ParseStatus.EMPTY, "the reply is empty")
    if len(text) > MAX_REPLY_CHARS:
        return ParseFailure(ParseStatus.NO_JSON, f"the reply is longer than {MAX_REPLY_CHARS} characters")
    body = strip_thinking(text)
    if not body.strip():
        return ParseFailure(ParseStatus.EMPTY, "the reply has nothing outside its <think> block")
    last_object: dict[str, Any] | None = None
    last_other: str | None = None
    saw_brace = False
    pos = 0
    while True:
        start = body.find("{", pos)
        if start < 0:
            break
        saw_brace = True
        try:
            value, end = _DECODER.raw_decode(body, start)
        except (json.JSONDecodeError, RecursionError):
            pos = start + 1
            continue
        if isinstance(value, dict):
            last_object = value
        else:  # pragma: no cover - raw_decode at '{' always yields a dict
            last_other = type(value).__name__
        pos = end
    if last_object is not None:
        return last_object
    if last_other is not None:  # pragma: no cover
        return ParseFailure(ParseStatus.NOT_OBJECT, f"the final JSON value is a {last_other}")
    if saw_brace:
        return ParseFailure(ParseStatus.INVALID_JSON, "the reply contains '{' but no valid JSON object")
    stripped = body.strip()
    if stripped[:1] in ('"', "[") or stripped[:1].isdigit():
        return ParseFailure(ParseStatus.NOT_OBJECT, "the answer must be a JSON object")
    return ParseFailure(ParseStatus.NO_JSON, "the reply contains no JSON object")


def parse_answer(text: str, schema: type[M]) -> Parsed[M] | ParseFailure:
    """Read the final JSON object of ``text`` and validate it against an environment's answer schema."""
    obj = final_json_object(text)
    if isinstance(obj, ParseFailure):
        return obj
    try:
        return Parsed(schema.model_validate(obj))
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "<root>"
        return ParseFailure(ParseStatus.SCHEMA, f"{where}: {first['msg']}")
    except (RecursionError, ValueError, TypeError) as err:  # defensive: validators must never crash scoring
        return ParseFailure(ParseStatus.SCHEMA, f"{type(err).__name__}: {err}")
