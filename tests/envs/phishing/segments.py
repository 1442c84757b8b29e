"""A stand-in for the rendering the model sees (e4_common: one header value, one attachment line, one link line or
one body sentence per segment), used to check that every planted quote lies inside one segment. When
``phishing.render`` lands, the tests check against it too."""

from __future__ import annotations

import email
import email.policy
import re
from email.message import EmailMessage
from html.parser import HTMLParser

HEADERS = ("From", "Reply-To", "Return-Path", "To", "Cc", "Date", "Subject", "Authentication-Results",
           "Received-SPF")


def collapse(text: str) -> str:
    return " ".join(text.split())


class _Html(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.links: list[tuple[str, str]] = []
        self._href: str | None = None
        self._anchor: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self._href, self._anchor = dict(attrs).get("href") or "", []
        if tag in ("p", "br", "div", "blockquote"):
            self.text.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._href is not None:
            self.links.append((collapse("".join(self._anchor)), self._href))
            self._href = None
        if tag in ("p", "div"):
            self.text.append("\n")

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._href is not None:
            self._anchor.append(data)


def segments(raw: str) -> list[str]:
    msg = email.message_from_bytes(raw.encode("utf-8"), policy=email.policy.default)
    assert isinstance(msg, EmailMessage)
    out = [collapse(str(msg[h])) for h in HEADERS if msg[h] is not None]
    plain = html = None
    for part in msg.walk():
        if part.is_multipart():
            continue
        if part.get_filename():
            out.append(part.get_filename())
        elif part.get_content_type() == "text/plain" and plain is None:
            plain = part.get_content()
        elif part.get_content_type() == "text/html" and html is None:
            html = part.get_content()
    body = plain
    if html is not None:
        parser = _Html()
        parser.feed(html)
        out += [f"{t} → {h}" for t, h in parser.links]
        body = body if body is not None else "".join(parser.text)
    for line in (body or "").splitlines():
        out += [collapse(s) for s in re.split(r"(?<=[.!?])\s+", line) if s.strip()]
    return out


def quote_in_one_segment(quote: str, raw: str) -> bool:
    q = collapse(quote)
    return any(q in s for s in segments(raw))
