"""E4's label-preserving rewrites (the ``robust`` split, :mod:`..kits.robust`): the same message in the envelope
another mail system would have written, rebuilt with the standard library's ``email`` package.

- ``header_order``: the message's own header fields shuffled and their names' case changed (one style a message:
  ``subject``, ``SUBJECT`` or ``Message-id``). The trace fields (Return-Path, Received, Authentication-Results,
  Received-SPF, DKIM and ARC signatures, Resent-*) stay on top in their order, since each hop prepends its own and
  their order is the delivery path (RFC 5322 3.6.7, RFC 8601 5); fields of one name keep their relative order
  (a reader joins them in it). Field names are case-insensitive (RFC 5322 1.2.2); values are kept as written.
- ``base64_body`` and ``quoted_printable_body``: every part E4 reads as the message's text (text/plain or
  text/html, not an attachment) re-encoded with that Content-Transfer-Encoding; the decoded bytes are the same.
- ``html_alternative``: a message whose only text is one text/plain part gets an HTML alternative
  (multipart/alternative, text first as RFC 2046 5.1.4 orders it) that shows the same text, each web address a
  link to itself, as a client links the addresses of plain text. Not where the text has an address with no
  scheme (``www.example.com``): a client links it to ``http://www.example.com``, another target than the one E4
  reads in the text.
- ``text_alternative``: a message whose only text is one text/html part gets a text alternative: the HTML's text
  as E4 reads it (:func:`.message.html_to_text`), anchors by their text. Writing each anchor's target after it,
  as some clients do, would add links the original does not show.

A kind does not apply to a message it has nothing to change in (base64 on a message whose text is all base64
already; an alternative for one that has both parts or none): that item has no rewrite of that kind.

The check (:func:`rewrite_problem`) reads the rewritten message as the scorer does and requires what the target is
judged on to be unchanged: the recipient's organisation; the headers the prompt shows and the verifiers read (From,
Reply-To, Authentication-Results...), the sender, reply and recipient addresses; the links (text and target), the
attachments and the forms; the structural indicators code finds, with their quotes (imported mail's evidence
target and the heuristic's reading); and every planted piece of evidence still confirmed by its verifier on the
rewritten message (the target's evidence stays true and findable).

Not shipped, because no wrapper keeps the target:

- ``forwarded``: a forward's From, Reply-To and Authentication-Results are the forwarder's. The original's sender
  evidence, which the target plants on 46 of the 75 phishing test items (``display_name_spoof``,
  ``reply_to_mismatch``, ``auth_failure``, and ``lookalike_domain`` quoted from From), would then be body text of an
  inline "Forwarded message" block, or the headers of an attached message/rfc822, which no verifier reads as the
  sender's: the planted evidence could not be confirmed. And the label does not carry over: a colleague forwarding
  a lure is not deceiving anyone, while a "forward" sent by the original sender itself is a phishing technique (a
  made-up thread), so wrapping legitimate mail in one adds a lure.
- ``replied``: a reply by the recipient's side changes the sender as a forward does; a "Re:" from the original
  sender quoting its own message is the made-up thread of reply-chain hijacking (one of E4's ood phishing
  families), a lure on legitimate mail.

What the split can measure: the prompt shows E4's parsed reading of the message (:mod:`.render`), not its bytes,
and each shipped rewrite leaves that reading whole (the tests check the parsed message is identical, body and notes
included). So a policy that reads the prompt sees the same text, and its change is 0 up to its own sampling: the
split guards the parser (a reading that changed with the encoding or the layout would fail the check and stop the
split from building) more than it tests a model.
"""

from __future__ import annotations

import base64
import binascii
import email.parser
import email.policy
import html
import random
import re
from collections.abc import Callable, Iterator
from email.message import EmailMessage, Message
from typing import Any

from security_verifiers.core.types import Item
from security_verifiers.envs.kits.robust import Rewrite
from security_verifiers.envs.phishing.items import PhishingInput, PhishingTarget
from security_verifiers.envs.phishing.message import URL, html_to_text, parse
from security_verifiers.envs.phishing.verifiers import Context, confirm

#: Read and written with the modern policy, whose MIME helpers (``make_alternative``, ``add_alternative``) the
#: alternatives use; header values it read are written back as they were, never refolded.
_POLICY = email.policy.default.clone(refold_source="none")
_TRACE = frozenset({"return-path", "received", "authentication-results", "received-spf", "dkim-signature"})
_TRACE_PREFIXES = ("arc-", "resent-")
_CASES = (str.lower, str.upper, str.capitalize)
#: What the parser strips from the end of a bare URL of the text (:func:`.message.parse`).
_URL_TAIL = ".,;:!?'\""


# -- reading and writing the message --------------------------------------------------------------------------------
def _message(item_input: dict[str, Any]) -> EmailMessage:
    data = PhishingInput.model_validate(item_input).message_bytes()
    message = email.parser.BytesParser(policy=_POLICY).parsebytes(data)
    assert isinstance(message, EmailMessage)
    return message


def _stored(item_input: dict[str, Any], message: Message) -> dict[str, Any]:
    """``item_input`` holding ``message``: as text when its bytes are UTF-8, else in base64 (as the item contract
    stores a message)."""
    data = message.as_bytes(policy=_POLICY)
    try:
        item_input["raw"], encoding = data.decode("utf-8"), "text"
    except UnicodeDecodeError:
        item_input["raw"], encoding = base64.b64encode(data).decode("ascii"), "base64"
    if encoding != "text" or "raw_encoding" in item_input:
        item_input["raw_encoding"] = encoding
    return item_input


def _text_parts(message: Message) -> Iterator[tuple[Message, Message | None]]:
    """The parts E4 reads as the message's text (text/plain or text/html, no file name, not an attachment: as
    :func:`.message.parse` does), each with the multipart that holds it (None for the message itself)."""
    stack: list[tuple[Message, Message | None]] = [(message, None)]
    while stack:
        part, parent = stack.pop()
        payload = part.get_payload() if part.is_multipart() else None
        if isinstance(payload, list):
            stack.extend((child, part) for child in reversed(payload) if isinstance(child, Message))
        elif part.get_content_type() in ("text/plain", "text/html") and part.get_filename() is None \
                and part.get_content_disposition() != "attachment":
            yield part, parent


def _boundary(rng: random.Random, message: Message) -> str:
    """A boundary drawn from the item's stream (the library would draw one from the global one) that the message
    does not hold."""
    data = message.as_bytes(policy=_POLICY)
    while True:
        boundary = f"----=_Alt_{rng.getrandbits(96):024x}"
        if boundary.encode() not in data:
            return boundary


# -- header_order -----------------------------------------------------------------------------------------------------
def _trace(name: str) -> bool:
    lowered = name.lower()
    return lowered in _TRACE or lowered.startswith(_TRACE_PREFIXES)


def reorder_headers(item_input: dict[str, Any], rng: random.Random) -> dict[str, Any] | None:
    message = _message(item_input)
    fields = list(message.raw_items())
    trace = [f for f in fields if _trace(f[0])]
    rest = [f for f in fields if not _trace(f[0])]
    if not rest:
        return None
    names = [name.lower() for name, _ in rest]
    shuffled = names[:]
    for _ in range(20):  # another order, where there is one (fields of one name keep theirs)
        rng.shuffle(shuffled)
        if shuffled != names:
            break
    queues: dict[str, list[tuple[str, str]]] = {}
    for name, value in rest:
        queues.setdefault(name.lower(), []).append((name, value))
    case = rng.choice(_CASES)
    reordered = [queues[name].pop(0) for name in shuffled]
    for name in {name for name, _ in fields}:
        del message[name]
    for name, value in trace:
        message.set_raw(name, value)
    for name, value in reordered:
        message.set_raw(case(name), value)
    return _stored(item_input, message)


# -- base64_body, quoted_printable_body -------------------------------------------------------------------------------
def _encoded(data: bytes, cte: str) -> str:
    if cte == "base64":
        return base64.encodebytes(data).decode("ascii")
    return binascii.b2a_qp(data, istext=True).decode("ascii")


def _reencode(cte: str) -> Callable[[dict[str, Any], random.Random], dict[str, Any] | None]:
    """The rewrite that puts every text part in ``cte`` (its decoded bytes kept), where one is not already."""

    def apply(item_input: dict[str, Any], rng: random.Random) -> dict[str, Any] | None:
        message = _message(item_input)
        parts = [part for part, _ in _text_parts(message) if part.get("Content-Transfer-Encoding", "7bit").strip()
                 .lower() != cte]
        if not parts:
            return None
        for part in parts:
            data = part.get_payload(decode=True)
            assert isinstance(data, bytes)
            part.set_payload(_encoded(data, cte))
            if "Content-Transfer-Encoding" in part:
                part.replace_header("Content-Transfer-Encoding", cte)
            else:
                part["Content-Transfer-Encoding"] = cte
        return _stored(item_input, message)

    return apply


# -- html_alternative, text_alternative -------------------------------------------------------------------------------
def _only_text(message: Message, subtype: str) -> tuple[EmailMessage, str] | None:
    """The one text part of ``message`` when it is of ``subtype`` and no multipart/alternative holds it, and the
    Content-Transfer-Encoding a new alternative beside it takes (base64 beside base64, else quoted-printable)."""
    parts = list(_text_parts(message))
    if len(parts) != 1:
        return None
    part, parent = parts[0]
    if part.get_content_subtype() != subtype or (parent is not None and parent.get_content_subtype() == "alternative"):
        return None
    assert isinstance(part, EmailMessage)
    cte = part.get("Content-Transfer-Encoding", "7bit").strip().lower()
    return part, "base64" if cte == "base64" else "quoted-printable"


def _linked(line: str) -> str:
    """One line of plain text as HTML, each web address a link to itself (the address as the parser reads it)."""
    out, at = [], 0
    for match in URL.finditer(line):
        url = match.group().rstrip(_URL_TAIL)
        out += [html.escape(line[at:match.start()], quote=False),
                f'<a href="{html.escape(url)}">{html.escape(url, quote=False)}</a>']
        at = match.start() + len(url)
    return "".join(out) + html.escape(line[at:], quote=False)


def html_of(text: str) -> str:
    """Plain text as a client's HTML alternative writes it: paragraphs, line breaks, addresses linked."""
    paragraphs = [p for p in re.split(r"\n[ \t]*\n", text.strip("\n")) if p.strip()]
    body = "\n".join("<p>" + "<br>\n".join(_linked(line) for line in p.split("\n")) + "</p>" for p in paragraphs)
    return f'<html><head><meta charset="utf-8"></head>\n<body>\n{body}\n</body></html>\n'


def add_html_alternative(item_input: dict[str, Any], rng: random.Random) -> dict[str, Any] | None:
    message = _message(item_input)
    found = _only_text(message, "plain")
    if found is None:
        return None
    part, cte = found
    text = part.get_content()
    if any(not m.lower().startswith(("http://", "https://")) for m in URL.findall(text)):
        return None  # a client links www.example.com to http://www.example.com: another target
    boundary = _boundary(rng, message)
    part.make_alternative()
    part.add_alternative(html_of(text), subtype="html", cte=cte)
    part.set_boundary(boundary)
    return _stored(item_input, message)


def add_text_alternative(item_input: dict[str, Any], rng: random.Random) -> dict[str, Any] | None:
    message = _message(item_input)
    found = _only_text(message, "html")
    if found is None:
        return None
    part, cte = found
    text, _ = html_to_text(part.get_content())
    boundary = _boundary(rng, message)
    part.make_alternative()
    part.add_alternative(text + "\n", subtype="plain", cte=cte)
    rich, plain = part.iter_parts()
    part.set_payload([plain, rich])  # the plainest first (RFC 2046 5.1.4)
    part.set_boundary(boundary)
    return _stored(item_input, message)


REWRITES = (
    Rewrite("header_order", "the header fields shuffled below the trace fields (which keep their order), their names' "
            "case changed", reorder_headers),
    Rewrite("base64_body", "every text part re-encoded in base64", _reencode("base64")),
    Rewrite("quoted_printable_body", "every text part re-encoded in quoted-printable", _reencode("quoted-printable")),
    Rewrite("html_alternative", "a text-only message given an HTML alternative of the same text and links",
            add_html_alternative),
    Rewrite("text_alternative", "an HTML-only message given a text alternative of the HTML's text",
            add_text_alternative),
)


# -- the check --------------------------------------------------------------------------------------------------------
def _reading(item: Item) -> tuple[Context, dict[str, Any]]:
    """The item's context and what of it the target is judged on (each shown header by its name)."""
    data = PhishingInput.model_validate(item.input)
    ctx = Context(parse(data.message_bytes()), data.mailbox)
    mail = ctx.mail
    return ctx, {"mailbox": data.mailbox, "sender": mail.sender, "reply_to": mail.reply_to,
                 "return_path": mail.return_path, "to": mail.to,
                 **{f"{name} header": values for name, values in mail.headers.items()}, "links": mail.links,
                 "attachments": mail.attachments, "forms": mail.forms, "detected": ctx.detected}


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 160 else text[:157] + "..."


def rewrite_problem(original: Item, rewritten: Item) -> str | None:
    _, before = _reading(original)
    ctx, after = _reading(rewritten)
    for key in dict.fromkeys([*before, *after]):
        if before.get(key) != after.get(key):
            return f"{key} changes ({_short(before.get(key))} -> {_short(after.get(key))})"
    target = PhishingTarget.model_validate(original.target)
    judged = ctx.judged(target.planted, imported=target.source == "imported")
    lost = [p for p in target.planted if not confirm(p.indicator, p.quote, judged)]
    if lost:
        return f"planted {lost[0].indicator} evidence {lost[0].quote!r} is no longer confirmed"
    return None
