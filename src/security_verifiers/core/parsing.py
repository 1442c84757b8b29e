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


#: The first window a decode attempt reads; it grows fourfold while the window's end may be what cut it short.
_FIRST_WINDOW = 32
#: Where a JSON object can start: ``{``, optional whitespace, then ``}`` or a key (a string without raw control
#: characters) and its colon. An exact necessary condition, so the positions it skips could never start an
#: object; its alternatives are disjoint, so it cannot backtrack more than the length of one key.
_OBJECT_START = re.compile(r'\{[ \t\n\r]*(?:\}|"(?:[^"\\\x00-\x1f]|\\.)*"[ \t\n\r]*:)')
#: A failure this far before a window's end cannot be the window's cut (JSON reports a truncation at the end).
_CUT_MARGIN = 16


@dataclass
class ScanStats:
    """What a scan of a reply cost: characters handed to the decoder, over all attempts (linear in the reply)."""

    attempts: int = 0
    chars: int = 0


class _TooDeep(Exception):
    """JSON nested beyond the interpreter's recursion limit: not an answer."""


def _read_object(body: str, start: int, stats: ScanStats) -> tuple[Any, int]:
    """``(value, end)`` of the JSON value at ``start``, or ``(None, failure position)``.

    The decoder reads a window of the text, not the whole remainder: the standard library computes a failure's
    line number by counting newlines from the start of the string it was given, which made one failed attempt
    cost its offset and the whole scan quadratic. In a window an attempt costs what it reads. A failure close to
    a window's end (or an unterminated string, reported where the string starts) may be the window's own cut;
    then the window grows fourfold and the attempt is repeated (geometric: at most ~2x the text read)."""
    window = _FIRST_WINDOW
    stats.attempts += 1
    while True:
        stop = min(len(body), start + window)
        chunk = body[start:stop]
        stats.chars += len(chunk)
        try:
            value, end = _DECODER.raw_decode(chunk)
            return value, start + end
        except json.JSONDecodeError as err:
            cut = stop < len(body) and (err.pos >= len(chunk) - _CUT_MARGIN or err.msg.startswith("Unterminated"))
            if not cut:
                return None, start + max(err.pos, 1)
            window *= 4
        except RecursionError as err:
            raise _TooDeep from err


def scan_json_objects(body: str, stats: ScanStats | None = None) -> tuple[dict[str, Any] | None, bool]:
    """The last JSON object of ``body`` as a left-to-right reader finds it, and whether any ``{`` was seen.

    At each ``{`` the reader decodes the JSON object there and continues after it. After a malformed fragment it
    continues at the last ``{`` inside the fragment (an object nested in broken text is still found), or after the
    fragment when it holds none. Every character is read a bounded number of times: linear time, whatever the
    reply (``stats`` counts the work)."""
    stats = stats if stats is not None else ScanStats()
    last: dict[str, Any] | None = None
    pos = 0
    while True:
        match = _OBJECT_START.search(body, pos)
        if match is None:
            return last, "{" in body
        start = match.start()
        value, end = _read_object(body, start, stats)
        if isinstance(value, dict):
            last = value
            pos = end
            continue
        inner = body.rfind("{", start + 1, end)  # a nested '{' before the failure point, if any
        pos = inner if inner > start else max(end, start + 1)


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
    try:
        last_object, saw_brace = scan_json_objects(body)
    except _TooDeep:
        return ParseFailure(ParseStatus.INVALID_JSON, "the reply nests JSON too deeply to be an answer")
    if last_object is not None:
        return last_object
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
