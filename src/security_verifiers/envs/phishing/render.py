"""The email as the model reads it, and the segments a quote must fall inside.

The rendering is the only text a quote is checked against, so what the model sees and what counts as evidence
cannot differ: one header value, one attachment line, one link line, or one sentence of the body is a
*segment*, and a quote counts only inside one of them. That bounds a quote to "a sentence or a header value"
(the issue's words) without a length threshold to tune, and it tells the verifier what the quote is: a From
header, a link, an attachment.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from security_verifiers.envs.phishing.message import SHOWN_HEADERS, Email, Form, collapse

SegmentKind = Literal["header", "attachment", "link", "form", "body", "received"]
#: A sentence ends at ., ! or ? followed by whitespace (or at a line break).
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
#: The longest segment a quote may come from: a longer body sentence is cut into pieces of this size.
MAX_SEGMENT_CHARS = 400


@dataclass(frozen=True)
class Segment:
    """One quotable unit: its kind, the header name, and its collapsed text as shown (a header's with its name,
    ``Reply-To: ...``, so a quote may or may not include the name)."""

    kind: SegmentKind
    name: str
    text: str
    #: Index into ``Email.links``, ``Email.attachments`` or ``Email.forms`` for those kinds, else -1.
    index: int = -1


@dataclass(frozen=True)
class Rendering:
    text: str
    segments: tuple[Segment, ...]

    def locate(self, quote: str) -> list[Segment]:
        """The segments that hold ``quote`` (whitespace-collapsed, exact otherwise)."""
        needle = collapse(quote)
        if not needle:
            return []
        return [s for s in self.segments if needle in s.text]


def _sentences(line: str) -> list[str]:
    out = []
    for sentence in _SENTENCE_END.split(line):
        sentence = sentence.strip()
        while len(sentence) > MAX_SEGMENT_CHARS:
            out.append(sentence[:MAX_SEGMENT_CHARS])
            sentence = sentence[MAX_SEGMENT_CHARS:]
        if sentence:
            out.append(sentence)
    return out


def _size(n: int) -> str:
    return f"{n:,} bytes"


def form_line(form: Form) -> str:
    """A form as the prompt lists it: ``form in page.html sends to https://x/post.php: email, password``."""
    where = f"form in {form.source}" if form.source else "form"
    return f"{where} sends to {form.action or '(no address)'}: {', '.join(form.fields)}"


def render(mail: Email) -> Rendering:
    """The prompt's text of ``mail`` and its segments."""
    lines: list[str] = []
    segments: list[Segment] = []
    for name in SHOWN_HEADERS:
        for value in mail.headers.get(name, []):
            lines.append(f"{name}: {value}")
            segments.append(Segment("header", name, f"{name}: {value}"))
    if mail.received:
        earliest = mail.received[-1]
        summary = f"{len(mail.received)} hop{'s' if len(mail.received) != 1 else ''}; earliest: {earliest[:300]}"
        lines.append(f"Received: {summary}")
        segments.append(Segment("received", "Received", f"Received: {collapse(earliest[:300])}"))
    if mail.attachments:
        lines.append("Attachments:")
        for i, a in enumerate(mail.attachments):
            line = f"{a.name} ({a.content_type}, {_size(a.size)})"
            lines.append(f"- {line}")
            segments.append(Segment("attachment", "attachment", collapse(line), i))
    if mail.links:
        lines.append("Links:")
        for i, link in enumerate(mail.links):
            line = link.href if link.text == link.href else f"{link.text} → {link.href}"
            lines.append(f"- {line}")
            segments.append(Segment("link", "link", collapse(line), i))
    if mail.forms:
        lines.append("Forms:")
        for i, form in enumerate(mail.forms):
            line = form_line(form)
            lines.append(f"- {line}")
            segments.append(Segment("form", "form", collapse(line), i))
    for note in mail.notes:
        lines.append(f"Note: {note}")
    lines.append("Body:")
    lines.append(mail.body if mail.body else "(no text)")
    for body_line in mail.body.split("\n"):
        segments.extend(Segment("body", "body", collapse(s)) for s in _sentences(body_line))
    return Rendering("\n".join(lines), tuple(segments))
