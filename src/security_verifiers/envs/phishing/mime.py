"""Building one raw RFC 5322 message as real mail systems write it: headers added along the delivery path
(Received, Authentication-Results), multipart/alternative text and HTML in quoted-printable or base64, RFC 2047
display names, and attachments with real content types and plausible sizes; and reading one back with a cap on its
MIME parts (:func:`read`).

The standard library's :class:`email.message.EmailMessage` writes the message, so what the generator produces is
what a parser of real mail reads. Attachment payloads are real formats (a one-page PDF, an iCalendar invite, a PNG,
a ZIP archive, a macro-enabled Word package), kept small so a data set of thousands of items stays light.
"""

from __future__ import annotations

import datetime as dt
import email.feedparser
import email.policy
import hashlib
import html
import io
import random
import struct
import zipfile
import zlib
from dataclasses import dataclass, field
from email.headerregistry import Address
from email.message import EmailMessage, Message
from email.utils import format_datetime

_POLICY = email.policy.default


@dataclass(frozen=True)
class Link:
    """An anchor: its visible text and where it points."""

    text: str
    href: str


@dataclass(frozen=True)
class Attachment:
    filename: str
    content_type: str
    data: bytes


Block = str | Link


@dataclass
class Spec:
    """Everything one message carries; :func:`build` writes it."""

    sender: tuple[str, str]  # (display name, address)
    to: list[tuple[str, str]]
    subject: str
    date: dt.datetime
    message_id: str
    blocks: list[Block]
    cc: list[tuple[str, str]] = field(default_factory=list)
    reply_to: tuple[str, str] | None = None
    return_path: str | None = None
    in_reply_to: str | None = None
    references: list[str] = field(default_factory=list)
    received: list[str] = field(default_factory=list)  # top (last hop) first
    auth_results: str | None = None
    received_spf: str | None = None
    extra_headers: list[tuple[str, str]] = field(default_factory=list)
    quoted: list[str] = field(default_factory=list)  # an earlier message quoted under a reply
    attachments: list[Attachment] = field(default_factory=list)
    parts: str = "alternative"  # alternative | plain | html
    cte: str | None = None  # quoted-printable | base64 | None (the library's choice)


def _addr(pair: tuple[str, str]) -> Address:
    return Address(display_name=pair[0], addr_spec=pair[1])


def address_text(pair: tuple[str, str]) -> str:
    """The address as a decoded header shows it (quoted when the name holds specials)."""
    return str(_addr(pair))


def plain_text(blocks: list[Block], quoted: list[str]) -> str:
    lines: list[str] = []
    for b in blocks:
        if isinstance(b, Link):
            lines.append(b.href if b.text == b.href else f"{b.text}: {b.href}")
        else:
            lines.append(b)
    text = "\n\n".join(lines)
    if quoted:
        text += "\n\n" + "\n".join(quoted)
    return text + "\n"


def html_text(blocks: list[Block], quoted: list[str]) -> str:
    out = ['<html><head><meta charset="utf-8"></head>',
           '<body style="font-family:Segoe UI,Arial,sans-serif;font-size:14px;color:#222">']
    for b in blocks:
        if isinstance(b, Link):
            out.append(f'<p><a href="{html.escape(b.href)}" style="color:#0b5cad">{html.escape(b.text, False)}</a></p>')
        else:
            out.append("<p>" + html.escape(b, False).replace("\n", "<br>\n") + "</p>")
    if quoted:
        body = "<br>\n".join(html.escape(q.lstrip("> "), False) for q in quoted[1:])
        out.append(f"<div>{html.escape(quoted[0], False)}</div>")
        out.append(f'<blockquote style="border-left:2px solid #ccc;padding-left:8px">{body}</blockquote>')
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def build(spec: Spec) -> str:
    """The message's text, as it sits in the recipient's mailbox."""
    msg = EmailMessage(policy=_POLICY)
    if spec.return_path:
        msg["Return-Path"] = f"<{spec.return_path}>"
    for hop in spec.received:
        msg["Received"] = hop
    if spec.auth_results is not None:
        msg["Authentication-Results"] = spec.auth_results
    if spec.received_spf is not None:
        msg["Received-SPF"] = spec.received_spf
    msg["From"] = _addr(spec.sender)
    msg["To"] = [_addr(p) for p in spec.to]
    if spec.cc:
        msg["Cc"] = [_addr(p) for p in spec.cc]
    if spec.reply_to:
        msg["Reply-To"] = _addr(spec.reply_to)
    msg["Subject"] = spec.subject
    msg["Date"] = format_datetime(spec.date)
    msg["Message-ID"] = spec.message_id
    if spec.in_reply_to:
        msg["In-Reply-To"] = spec.in_reply_to
        msg["References"] = " ".join(spec.references or [spec.in_reply_to])
    for name, value in spec.extra_headers:
        msg[name] = value
    msg["MIME-Version"] = "1.0"
    plain, rich = plain_text(spec.blocks, spec.quoted), html_text(spec.blocks, spec.quoted)
    if spec.parts == "html":
        msg.set_content(rich, subtype="html", cte=spec.cte)
    else:
        msg.set_content(plain, cte=spec.cte)
        if spec.parts == "alternative":
            msg.add_alternative(rich, subtype="html", cte=spec.cte)
    for att in spec.attachments:
        maintype, subtype = att.content_type.split("/", 1)
        msg.add_attachment(att.data, maintype=maintype, subtype=subtype, filename=att.filename)
    # The library draws boundaries from the global random state: derive them from the message instead.
    token = hashlib.sha256(spec.message_id.encode()).hexdigest()[:24]
    for i, part in enumerate(p for p in msg.walk() if p.is_multipart()):
        part.set_boundary(f"----=_Part_{i}_{token}")
    return msg.as_string()


# --------------------------------------------------------------------------------------------------
# Reading a message back, with a cap on its parts
# --------------------------------------------------------------------------------------------------
#: How much of the raw message the parser is given at a time (so a capped parse stops reading soon after the cap).
_READ_CHUNK = 64 * 1024


class _TooManyParts(Exception):
    """Raised by the counting factory of :func:`read` to stop the parser once the cap is passed."""


def read(raw: bytes, max_parts: int) -> tuple[Message, bool]:
    """``raw`` parsed as :func:`email.message_from_bytes` does (``compat32`` policy), but stopped once the parser
    has made more than ``max_parts`` + 1 :class:`~email.message.Message` objects; returns the root and whether the
    parse was cut.

    The standard parser has no limit on parts, so a message of 100,000 parts took seconds to parse before a cap
    applied afterwards could drop them. The parser makes one object per part (the root, each multipart and each
    attached message included) in document order and attaches it to its parent at once, so the tree of a cut parse
    is the first ``max_parts`` + 1 parts of the full tree: every leaf among the first ``max_parts`` is complete (the
    next part is only made once it has ended) and the last part made may be cut short. A walk in document order
    that stops after ``max_parts`` parts therefore sees what it would have seen in the full parse. A message of at
    most ``max_parts`` + 1 parts is parsed exactly as the standard parser does. Errors other than the cap (e.g. a
    ``RecursionError``) propagate as from the standard parser.

    >>> parts = b"".join(b"--b\\nContent-Type: text/plain\\n\\npart %d\\n" % i for i in range(1000))
    >>> root, cut = read(b"Content-Type: multipart/mixed; boundary=b\\n\\n" + parts + b"--b--\\n", 10)
    >>> cut, len(root.get_payload()), root.get_payload(0).get_payload()
    (True, 10, 'part 0')
    """
    made: list[Message] = []
    counting = False

    def factory(*, policy: email.policy.Policy) -> Message:
        if counting:
            if len(made) > max_parts:
                raise _TooManyParts
            made.append(Message(policy=policy))
            return made[-1]
        return Message(policy=policy)

    parser = email.feedparser.BytesFeedParser(factory, policy=email.policy.compat32)  # calls factory once to probe
    counting = True
    try:
        for start in range(0, len(raw), _READ_CHUNK):
            parser.feed(raw[start:start + _READ_CHUNK])
        return parser.close(), False
    except _TooManyParts:
        return made[0], True


# --------------------------------------------------------------------------------------------------
# The delivery path
# --------------------------------------------------------------------------------------------------
_DOC_NETS = ("192.0.2", "198.51.100", "203.0.113")
_MTA = ("Postfix", "Exim 4.96", "Microsoft SMTP Server (version=TLS1_2, cipher=TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384)",
        "Google Transport Security", "OpenSMTPD")


def doc_ip(rng: random.Random) -> str:
    """An address from the documentation ranges (RFC 5737): realistic shape, never a real host."""
    return f"{rng.choice(_DOC_NETS)}.{rng.randint(2, 254)}"


def _host_of(rng: random.Random, domain: str) -> str:
    if domain in ("gmail.com", "google.com"):
        return f"mail-{rng.choice(('sor', 'wr1', 'ej1', 'pl1'))}-f{rng.randint(41, 199)}.google.com"
    if domain in ("outlook.com", "hotmail.com"):
        return f"{rng.choice(('EUR05', 'NAM12', 'APC01'))}-VI1-obe.outbound.protection.outlook.com"
    return rng.choice((f"mail.{domain}", f"smtp{rng.randint(1, 4)}.{domain}", f"mx-out.{domain}",
                       f"o{rng.randint(1, 40)}.email.{domain}"))


def received_chain(rng: random.Random, sender_domain: str, org_domain: str, recipient: str,
                   when: dt.datetime) -> list[str]:
    """2-5 Received hops from the sender's server to the organisation's mail store, newest first."""
    hops = rng.randint(2, 5)
    inbound = [f"mx{rng.randint(1, 2)}.{org_domain}"] + ([f"mailstore{rng.randint(1, 3)}.{org_domain}"]
                                                         if hops >= 3 else [])
    relays = [f"relay{i}.{sender_domain}" for i in range(1, hops - len(inbound) + 1)]
    hosts = [_host_of(rng, sender_domain), *relays, *inbound]
    out, t = [], when - dt.timedelta(seconds=rng.randint(20, 600))
    for i in range(1, len(hosts)):
        t += dt.timedelta(seconds=rng.randint(1, 40))
        frm, by = hosts[i - 1], hosts[i]
        sid = "".join(rng.choice("0123456789ABCDEFGHJKLMNPQRSTVWXYZ") for _ in range(10))
        out.append(f"from {frm} ({frm} [{doc_ip(rng)}]) by {by} ({rng.choice(_MTA)}) with ESMTPS id {sid} "
                   f"for <{recipient}>; {format_datetime(t)}")
    return out[::-1]


def auth_results(rng: random.Random, org_domain: str, mailfrom: str, header_from: str,
                 spf: str, dkim: str, dmarc: str) -> tuple[str, dict[str, str]]:
    """An Authentication-Results value and each method's clause (so a failing one can be quoted exactly)."""
    ip = doc_ip(rng)
    clauses = {
        "spf": f"spf={spf} (sender IP is {ip}) smtp.mailfrom={mailfrom}",
        "dkim": f"dkim={dkim} header.d={header_from}" + (f" header.s=s{rng.randint(1, 2)}" if dkim != "none" else ""),
        "dmarc": f"dmarc={dmarc} action={'quarantine' if dmarc == 'fail' else 'none'} header.from={header_from}",
    }
    return f"mx{rng.randint(1, 2)}.{org_domain}; " + "; ".join(clauses.values()), clauses


def received_spf(rng: random.Random, result: str, org_domain: str, mailfrom_addr: str) -> str:
    ip = doc_ip(rng)
    verb = "designates" if result == "pass" else "does not designate"
    return (f"{result.capitalize()} (mx1.{org_domain}: domain of {mailfrom_addr} {verb} {ip} as permitted sender) "
            f"client-ip={ip}; envelope-from={mailfrom_addr};")


def message_id(rng: random.Random, domain: str) -> str:
    return f"<{rng.getrandbits(64):016x}.{rng.getrandbits(32):08x}@{domain}>"


# --------------------------------------------------------------------------------------------------
# Attachments: real formats, small
# --------------------------------------------------------------------------------------------------
def pdf(rng: random.Random, lines: list[str]) -> bytes:
    """A one-page PDF showing ``lines``, with an embedded (random) font stream for a plausible size."""
    text = " ".join(f"({ln.replace('(', '[').replace(')', ']')}) Tj T*" for ln in lines)
    content = f"BT /F1 11 Tf 14 TL 72 720 Td {text} ET".encode("latin-1", "replace")
    font = rng.randbytes(rng.randint(2500, 9000))
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
            b"/Resources << /Font << /F1 5 0 R >> >> >>",
            b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /FontFile 6 0 R >>",
            b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(font) + font + b"\nendstream"]
    out, offsets = io.BytesIO(), []
    out.write(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    for i, body in enumerate(objs, 1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % i + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1))
    out.write(b"".join(b"%010d 00000 n \n" % o for o in offsets))
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref))
    return out.getvalue()


def ics(rng: random.Random, summary: str, organiser: tuple[str, str], attendee: str, start: dt.datetime,
        location: str) -> bytes:
    end = start + dt.timedelta(minutes=rng.choice((30, 45, 60, 90)))
    fmt = "%Y%m%dT%H%M%SZ"
    lines = ["BEGIN:VCALENDAR", "PRODID:-//Microsoft Corporation//Outlook 16.0 MIMEDIR//EN", "VERSION:2.0",
             "METHOD:REQUEST", "BEGIN:VEVENT", f"UID:{rng.getrandbits(96):024x}",
             f"DTSTAMP:{start.strftime(fmt)}", f"DTSTART:{start.strftime(fmt)}", f"DTEND:{end.strftime(fmt)}",
             f"SUMMARY:{summary}", f"LOCATION:{location}",
             f"ORGANIZER;CN={organiser[0]}:mailto:{organiser[1]}",
             f"ATTENDEE;ROLE=REQ-PARTICIPANT;PARTSTAT=NEEDS-ACTION;RSVP=TRUE:mailto:{attendee}",
             "STATUS:CONFIRMED", "END:VEVENT", "END:VCALENDAR"]
    return ("\r\n".join(lines) + "\r\n").encode("utf-8")


def _png(width: int, height: int, rows: list[bytes]) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    raw = b"".join(b"\x00" + r for r in rows)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


def qr_png(rng: random.Random, modules: int = 29, scale: int = 5) -> bytes:
    """A grayscale PNG that looks like a QR code (finder patterns, random data modules)."""
    grid = [[rng.random() < 0.5 for _ in range(modules)] for _ in range(modules)]
    for oy, ox in ((0, 0), (0, modules - 7), (modules - 7, 0)):
        for y in range(7):
            for x in range(7):
                ring = max(abs(y - 3), abs(x - 3))
                grid[oy + y][ox + x] = ring != 2
    quiet = 4
    size = (modules + 2 * quiet) * scale
    rows = []
    for y in range(size):
        my = y // scale - quiet
        row = bytearray(b"\xff" * size)
        if 0 <= my < modules:
            for mx in range(modules):
                if grid[my][mx]:
                    start = (mx + quiet) * scale
                    row[start:start + scale] = b"\x00" * scale
        rows.append(bytes(row))
    return _png(size, size, rows)


def html_lure(brand: str, action_url: str, user: str) -> bytes:
    """A local HTML page imitating a sign-in form that posts to ``action_url``."""
    page = (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(brand)} | Secure Document"
            f"</title><style>body{{font-family:Segoe UI,Arial;background:#f3f3f3}}.box{{width:340px;margin:80px "
            f"auto;background:#fff;padding:36px}}</style></head><body><div class='box'><h2>Sign in to view the "
            f"document</h2><form method='POST' action='{html.escape(action_url)}'><input name='login' value='"
            f"{html.escape(user)}'><input name='passwd' type='password' placeholder='Password'>"
            f"<button type='submit'>Sign in</button></form></div><script>document.forms[0].login.focus()</script>"
            f"</body></html>")
    return page.encode("utf-8")


_EPOCH = (2024, 1, 1, 0, 0, 0)


def zip_of(files: dict[str, bytes]) -> bytes:
    """A deterministic ZIP archive (fixed timestamps) of ``files``."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(zipfile.ZipInfo(name, date_time=_EPOCH), data)
    return out.getvalue()


def office_package(rng: random.Random, kind: str, text: str, macros: bool) -> bytes:
    """A minimal OOXML package (``docx``/``docm``/``xlsm``), with a VBA project part when ``macros``."""
    main = {"docx": "word/document.xml", "docm": "word/document.xml", "xlsm": "xl/workbook.xml"}[kind]
    files = {"[Content_Types].xml": b'<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.'
             b'openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/'
             b'xml"/></Types>',
             main: f'<?xml version="1.0" encoding="UTF-8"?><document><body><p>{html.escape(text)}</p></body>'
                   f'</document>'.encode()}
    if macros:
        files[main.split("/")[0] + "/vbaProject.bin"] = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + rng.randbytes(6000)
    return zip_of(files)


CONTENT_TYPES = {
    "pdf": "application/pdf", "ics": "text/calendar", "png": "image/png", "jpg": "image/jpeg",
    "htm": "text/html", "html": "text/html", "shtml": "text/html", "svg": "image/svg+xml", "zip": "application/zip",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "docm": "application/vnd.ms-word.document.macroEnabled.12",
    "xlsm": "application/vnd.ms-excel.sheet.macroEnabled.12",
}


def attachment(filename: str, data: bytes) -> Attachment:
    return Attachment(filename, CONTENT_TYPES[filename.rsplit(".", 1)[-1].lower()], data)
