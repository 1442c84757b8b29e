"""Tool calls as text, for models run in this process (``hf:`` evaluation and ``sv train``'s episodes).

An API model returns tool calls as structured fields; a local causal LM only writes text. The convention here is
the one Qwen and Hermes-style chat templates render and their models are trained to write: each call is one JSON
object ``{"name": ..., "arguments": {...}}`` between ``<tool_call>`` and ``</tool_call>``. A model's own chat
template renders the conversation (tools offered, earlier calls, tool results), so a checkpoint trained here
reads the same text at evaluation as in training; :func:`parse_reply` reads the calls back out of a reply.

A block that is not valid JSON, or has no string ``name``, is not a call: it stays in the reply's text, so a
malformed call ends the episode as an answer (which its scorer judges) rather than running a tool the model did
not name.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from security_verifiers.core.types import Message, ToolCall

#: One call: what a chat template renders and a reply is parsed for.
_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)


def chat_dicts(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Messages in the form chat templates read: OpenAI's, with each call's ``arguments`` as a JSON object where
    they parse (templates ``tojson`` them) and as the raw text otherwise."""
    out: list[dict[str, Any]] = []
    for message in messages:
        entry: dict[str, Any] = {"role": message.role, "content": message.content}
        if message.tool_calls:
            entry["tool_calls"] = [{"id": call.id, "type": "function",
                                    "function": {"name": call.name, "arguments": _arguments(call.arguments)}}
                                   for call in message.tool_calls]
        if message.tool_call_id is not None:
            entry["tool_call_id"] = message.tool_call_id
        out.append(entry)
    return out


def _arguments(text: str) -> Any:
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return text
    return value if isinstance(value, dict) else text


def render(tokenizer: Any, messages: Sequence[Message], tools: list[dict[str, Any]] | None, *,
           add_generation_prompt: bool) -> str:
    """The conversation as the model reads it, through its own chat template (tools offered when given)."""
    return str(tokenizer.apply_chat_template(chat_dicts(messages), tools=tools or None, tokenize=False,
                                             add_generation_prompt=add_generation_prompt))


def parse_reply(text: str, call_prefix: str = "call") -> tuple[str, list[ToolCall]]:
    """(the reply's text without its calls, the calls) of one generated reply; ids are ``{call_prefix}_{k}``.

    >>> parse_reply('Checking. <tool_call>{"name": "run_tests", "arguments": {"patch": ""}}</tool_call>', "t1")
    ('Checking.', [ToolCall(id='t1_0', name='run_tests', arguments='{"patch": ""}')])
    >>> parse_reply("<tool_call>not json</tool_call>")
    ('<tool_call>not json</tool_call>', [])
    """
    calls: list[ToolCall] = []
    kept: list[str] = []
    position = 0
    for match in _CALL.finditer(text):
        call = _call(match.group(1), f"{call_prefix}_{len(calls)}")
        if call is None:
            continue
        kept.append(text[position:match.start()])
        position = match.end()
        calls.append(call)
    kept.append(text[position:])
    return "".join(kept).strip() if calls else text, calls


def _call(body: str, call_id: str) -> ToolCall | None:
    try:
        value = json.loads(body)
    except json.JSONDecodeError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return None
    arguments = value.get("arguments", {})
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return ToolCall(id=call_id, name=value["name"], arguments=text)
