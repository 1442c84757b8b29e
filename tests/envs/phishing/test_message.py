"""Parsing and rendering real and hostile mail: what the prompt shows, within caps, and never a crash."""

from __future__ import annotations

import base64
import os

import pytest

from security_verifiers.envs.phishing.message import (
    MAX_ATTACHMENTS,
    MAX_BODY_CHARS,
    MAX_HEADER_CHARS,
    MAX_LINKS,
    parse,
)
from security_verifiers.envs.phishing.render import MAX_SEGMENT_CHARS, render
from tests.envs.phishing.mail import message

CRLF_QP = (b"From: =?utf-8?q?J=C3=BCrgen_M=C3=BCller?= <juergen@example.de>\r\n"
           b"To: kim@contoso-foods.com\r\nSubject: =?iso-8859-1?b?UmVjaG51bmcgZvxyIE3kcno=?=\r\n"
           b"Authentication-Results: mx.contoso-foods.com;\r\n spf=pass smtp.mailfrom=example.de;\r\n dkim=pass\r\n"
           b"Received: from a.example.net by b.example.net; Mon, 2 Mar 2026 10:00:00 +0000\r\n"
           b"Received: from origin.example.de (origin.example.de [192.0.2.5]) by a.example.net\r\n"
           b"MIME-Version: 1.0\r\nContent-Type: multipart/alternative; boundary=\"b1\"\r\n\r\n"
           b"--b1\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n"
           b"Gr=C3=BC=C3=9Fe, die Rechnung ist f=C3=A4llig.=\r\n Bitte zahlen.\r\n"
           b"--b1\r\nContent-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n"
           + base64.encodebytes(b'<p>Gr\xc3\xbc\xc3\x9fe <a href="https://pay.example.de/r/1">Rechnung</a></p>')
           + b"\r\n--b1--\r\n")


def test_headers_encodings_and_parts_are_decoded() -> None:
    mail = parse(CRLF_QP)
    text = render(mail).text
    assert "From: Jürgen Müller <juergen@example.de>" in text
    assert "Subject: Rechnung für März" in text
    assert "Authentication-Results: mx.contoso-foods.com; spf=pass smtp.mailfrom=example.de; dkim=pass" in text
    assert "Received: 2 hops; earliest: from origin.example.de (origin.example.de [192.0.2.5]) by a.example.net" in text
    assert "Grüße, die Rechnung ist fällig. Bitte zahlen." in mail.body, "quoted-printable soft breaks joined"
    assert "- Rechnung → https://pay.example.de/r/1" in text, "links come from the HTML part too"
    assert mail.sender is not None and mail.sender.domain == "example.de"


def test_html_only_mail_is_shown_as_text_without_scripts() -> None:
    raw = message("x", html="<html><head><style>p{}</style><script>alert(1)</script></head><body><p>Dear user,</p>"
                  "<div>Your <b>mailbox</b> is full.<br>Click <a href='http://198.51.100.9/q'>here</a>.</div>"
                  "<img src='x.png' alt='Microsoft logo'></body></html>")
    raw = raw.replace(b"Content-Type: text/plain", b"Content-Type: text/x-ignored", 1)
    mail = parse(raw)
    assert "alert(1)" not in mail.body and "p{}" not in mail.body
    assert "Dear user," in mail.body and "Your mailbox is full." in mail.body and "[image: Microsoft logo]" in mail.body
    assert [(link.text, link.href) for link in mail.links] == [("here", "http://198.51.100.9/q")]


def test_attachments_are_listed_by_name_type_and_size() -> None:
    raw = message("See attached.", attachments=(("Invoice 2291.pdf", "application/pdf", b"%PDF-1.7" + b"0" * 992),
                                                ("scan.png", "image/png", b"\x89PNG" + b"0" * 96)))
    text = render(parse(raw)).text
    assert "- Invoice 2291.pdf (application/pdf, 1,000 bytes)" in text
    assert "- scan.png (image/png, 100 bytes)" in text


def test_a_forwarded_message_is_read_inside() -> None:
    inner = message("Verify your account at https://bit.ly/x1 now.", From="PayPal <service@paypa1.com>")
    outer = (b"From: kim@contoso-foods.com\nTo: abuse@contoso-foods.com\nSubject: Fwd: suspicious\n"
             b"MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=zz\n\n--zz\nContent-Type: text/plain\n\n"
             b"Look at this one.\n--zz\nContent-Type: message/rfc822\n\n" + inner + b"\n--zz--\n")
    mail = parse(outer)
    assert "Look at this one." in mail.body and "Verify your account" in mail.body
    assert any(link.href == "https://bit.ly/x1" for link in mail.links)


HOSTILE = {
    "empty": b"",
    "not mail": os.urandom(4096),
    "headers only, no blank line": b"From: a@b.c\nSubject: x",
    "broken address list": b"From: <<<@@@>>>, \"unterminated <x@y\nTo: ,,,;;;\nSubject: x\n\nbody\n",
    "bad encoded words": b"From: =?utf-8?b?!!!notbase64?= <a@b.c>\nSubject: =?x-unknown?q?caf=E9?=\n\nhi\n",
    "unknown charset": b"From: a@b.c\nContent-Type: text/plain; charset=x-klingon\n\ncaf\xe9 \xff\xfe\n",
    "broken base64 body": b"From: a@b.c\nContent-Type: text/plain\nContent-Transfer-Encoding: base64\n\n%%%***==\n",
    "8-bit headers": b"From: J\xfcrgen <j@b.c>\nSubject: R\xe9sum\xe9 \xff\n\nbody\n",
    "missing boundary": b"From: a@b.c\nContent-Type: multipart/mixed\n\n--x\nContent-Type: text/plain\n\nhi\n--x--\n",
    "nested multiparts": (b"From: a@b.c\n"
                          + b"".join(f"Content-Type: multipart/mixed; boundary=b{i}\n\n--b{i}\n".encode()
                                     for i in range(3000)) + b"Content-Type: text/plain\n\nhi\n"),
    "many parts": (b"From: a@b.c\nContent-Type: multipart/mixed; boundary=q\n\n"
                   + b"".join(b"--q\nContent-Type: application/octet-stream\nContent-Disposition: attachment; "
                              b"filename=f%d.bin\n\nxx\n" % i for i in range(1000)) + b"--q--\n"),
    "huge part": b"From: a@b.c\nContent-Type: text/plain\n\n" + b"All work and no play. " * 500_000,
    "huge header": b"From: a@b.c\nSubject: " + b"A" * 200_000 + b"\n\nbody\n",
    "html bomb": (b"From: a@b.c\nContent-Type: text/html\n\n" + b"<div>" * 200_000
                  + b"".join(b'<a href="https://x%d.example.com/">x%d.example.com</a>' % (i, i) for i in range(5000))),
    "unclosed html": b"From: a@b.c\nContent-Type: text/html\n\n<p><a href='https://x.example.com/'>open <!-- never",
    "nul bytes": b"From: a\x00@b.c\nSubject: x\x00y\n\nb\x00ody\n",
}


@pytest.mark.parametrize("raw", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_mail_is_rendered_within_caps_and_never_crashes(raw: bytes) -> None:
    mail = parse(raw)
    rendering = render(mail)
    assert len(mail.body) <= MAX_BODY_CHARS
    assert len(mail.links) <= MAX_LINKS and len(mail.attachments) <= MAX_ATTACHMENTS
    assert all(len(v) <= MAX_HEADER_CHARS + 6 for values in mail.headers.values() for v in values)
    assert all(len(s.text) <= MAX_SEGMENT_CHARS or s.kind != "body" for s in rendering.segments)
    assert len(rendering.text) < 60_000


def test_caps_are_said_in_the_rendering() -> None:
    nested = parse(HOSTILE["nested multiparts"])
    assert nested.headers["From"] == ["a@b.c"], "the headers survive a body the parser cannot read"
    assert any("could not be parsed" in n or "MIME parts" in n or "nested deeper" in n for n in nested.notes)
    assert any("is cut" in n for n in parse(HOSTILE["html bomb"]).notes)
    text = render(parse(HOSTILE["huge part"])).text
    assert f"Note: the text is cut after {MAX_BODY_CHARS:,} characters" in text
    text = render(parse(HOSTILE["many parts"])).text
    assert "Note: more than 200 MIME parts" in text or f"only the first {MAX_ATTACHMENTS} attachments" in text
