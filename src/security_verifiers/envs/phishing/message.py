"""One raw email, parsed once into what the prompt shows and the verifiers check: headers, addresses, results of
authentication, the Received chain, the text, the links and the attachments.

The standard library's ``email`` package reads the message. Its MIME structure and transfer encodings are read
with the ``compat32`` policy and the headers the prompt shows are decoded by the modern policy's header registry
(``policy.default``: RFC 2047 words decoded, address lists parsed). Reading the structure with the modern policy
too parses every Content-Type header of every part through the same registry, which took 5 times as long
(1.3 ms against 0.25 ms a message here) for nothing the prompt shows: E4 must read hundreds of messages a second.

Real mail is often broken and hostile mail is built to break parsers, so every step here is bounded and falls
back instead of raising: a header the modern policy cannot parse is shown decoded as well as it can be; a part
whose charset is unknown is decoded as UTF-8 with replacement characters; the walk over parts is iterative, with
a cap on depth and count (a thousand nested multiparts do not recurse); text, links and attachments are capped.
What was cut or could not be read is listed in ``Email.notes``, which the prompt shows, so the model is told
rather than misled.
"""

from __future__ import annotations

import email
import email.header
import email.parser
import email.policy
import email.utils
import re
from dataclasses import dataclass, field
from email.message import EmailMessage, Message
from html.parser import HTMLParser

from security_verifiers.envs.phishing.mime import read

#: Caps on what one message may contribute (beyond them the rest is dropped and a note says so).
MAX_PARTS = 200
MAX_DEPTH = 12
MAX_HEADER_CHARS = 600
MAX_BODY_CHARS = 12_000
MAX_PART_CHARS = 400_000
MAX_LINKS = 40
MAX_ATTACHMENTS = 20
MAX_RECEIVED = 50

#: Headers the prompt shows, in its order (values of the same name joined by " | ").
SHOWN_HEADERS = ("From", "Sender", "Reply-To", "Return-Path", "To", "Cc", "List-Id", "Date", "Subject",
                 "Authentication-Results", "Received-SPF")

#: A URL written in text (a mail client makes it a link); the verifiers find URLs in body sentences with it too.
URL = re.compile(r"""\b(?:https?://|www\.)[^\s<>"'()\[\]{}]+""", re.IGNORECASE)
_BLOCK_TAGS = frozenset({"p", "div", "br", "tr", "li", "ul", "ol", "table", "h1", "h2", "h3", "h4", "h5", "h6",
                         "blockquote", "hr", "section", "article", "header", "footer", "center", "pre", "td"})
_SKIPPED_TAGS = frozenset({"script", "style", "head", "title", "noscript", "template", "svg"})
_FIELD_TAGS = frozenset({"input", "select", "textarea"})
#: Input types that ask for nothing a person types.
_SILENT_TYPES = frozenset({"hidden", "submit", "button", "image", "reset", "checkbox", "radio", "file", "range",
                           "color"})
MAX_FORMS = 10


def collapse(text: str) -> str:
    """Whitespace runs as one space, trimmed: how headers are shown and how quotes are compared."""
    return " ".join(text.split())


@dataclass(frozen=True)
class Address:
    display_name: str
    address: str

    @property
    def domain(self) -> str:
        return self.address.rpartition("@")[2].lower().strip(".") if "@" in self.address else ""


@dataclass(frozen=True)
class Link:
    """An anchor of the HTML (its visible text and its target) or a bare URL of the text (text = the URL)."""

    text: str
    href: str


@dataclass(frozen=True)
class Form:
    """An HTML form of the body or of an attached page: where it sends what is typed, and what it asks for (the
    type of each visible field, or its name when the type says nothing: ``password``, ``email``, ``pin``)."""

    action: str
    fields: tuple[str, ...]
    #: The attachment that holds it, or "" for the body.
    source: str = ""


@dataclass(frozen=True)
class Attachment:
    name: str
    content_type: str
    size: int


@dataclass
class Email:
    """What the prompt and the verifiers read of one message."""

    headers: dict[str, list[str]] = field(default_factory=dict)
    sender: Address | None = None
    reply_to: list[Address] = field(default_factory=list)
    return_path: str = ""
    to: list[Address] = field(default_factory=list)
    received: list[str] = field(default_factory=list)
    body: str = ""
    links: list[Link] = field(default_factory=list)
    attachments: list[Attachment] = field(default_factory=list)
    forms: list[Form] = field(default_factory=list)
    #: Images of the HTML body (``<img>`` tags): a body that is only an image hides its words from a reader.
    images: int = 0
    notes: list[str] = field(default_factory=list)

    def header(self, name: str) -> str:
        return " | ".join(self.headers.get(name, []))


def eight_bit(data: bytes) -> str:
    """Undeclared 8-bit text: UTF-8 when it is valid UTF-8 (what mailers write today), else Windows-1252 (what
    older mailers wrote, and a superset of Latin-1's printable characters)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


#: A run of bytes the parser kept as lone surrogates (``surrogateescape``: U+DC80-U+DCFF stand for 0x80-0xFF).
_ESCAPED_BYTES = re.compile("[\udc80-\udcff]+")
#: Any other lone surrogate (no text holds one: it cannot be written as UTF-8), and NULs.
_UNWRITABLE = re.compile("[\ud800-\udc7f\udd00-\udfff]|\x00")


def clean(text: str) -> str:
    r"""``text`` as valid Unicode that JSON, a terminal and a model's API all take: bytes the parser kept as
    surrogates are decoded as 8-bit text (:func:`eight_bit`), any other lone surrogate becomes U+FFFD and NULs
    are dropped. Every string :func:`parse` returns has been through it.

    >>> clean("ex\udcc3\udca4mple"), clean("caf\udce9"), clean("a\x00b\ud800")
    ('exämple', 'café', 'ab�')
    """
    if text.isascii() and "\x00" not in text:
        return text
    text = _ESCAPED_BYTES.sub(lambda m: eight_bit(bytes(ord(c) - 0xDC00 for c in m.group())), text)
    return _UNWRITABLE.sub(lambda m: "" if m.group() == "\x00" else "\ufffd", text)


def _header_text(msg: Message, name: str, raw: str) -> str:
    """A header's value decoded by the modern policy, or, where that fails, by the RFC 2047 decoder alone."""
    raw = clean("".join(raw.splitlines()))  # unfolded (a continuation keeps its leading whitespace), 8-bit decoded
    if raw.isascii() and "=?" not in raw:  # nothing to decode: the modern policy would give the value as it is
        value = raw
    else:
        try:
            value = str(email.policy.default.header_factory(name, raw))
        except Exception:  # noqa: BLE001 - a hostile header must never end the run
            try:
                value = str(email.header.make_header(email.header.decode_header(raw)))
            except Exception:  # noqa: BLE001
                value = raw
    value = collapse(clean(value))  # an encoded word of an unknown charset comes back as surrogates
    return value if len(value) <= MAX_HEADER_CHARS else value[:MAX_HEADER_CHARS] + " [...]"


def _addresses(value: str) -> list[Address]:
    """The addresses of a header value (``email.utils.getaddresses``: tolerant of broken lists)."""
    try:
        pairs = email.utils.getaddresses([value])
    except Exception:  # noqa: BLE001
        return []
    return [Address(collapse(name), collapse(addr)) for name, addr in pairs if addr or name][:50]


class _HTMLText(HTMLParser):
    """HTML to text and links, in one linear pass (no tree: deep nesting costs nothing)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.links: list[Link] = []
        self._skip = 0
        self._anchor: list[str] | None = None
        self._href = ""
        self._chars = 0
        self.forms: list[Form] = []
        self.images = 0
        self._form: tuple[str, list[str]] | None = None

    def _field(self, tag: str, attrs: dict[str, str]) -> None:
        kind = attrs.get("type", "text").lower() if tag == "input" else tag
        if kind in _SILENT_TYPES:
            return
        name = collapse(attrs.get("name") or attrs.get("id") or attrs.get("placeholder") or "")[:40]
        label = kind if kind in ("password", "email", "tel") or not name else name
        if self._form is None:  # a field outside any form still asks
            self._form = ("", [])
        if len(self._form[1]) < 20:
            self._form[1].append(label)

    def close_form(self) -> None:
        if self._form is not None and self._form[1] and len(self.forms) < MAX_FORMS:
            self.forms.append(Form(self._form[0], tuple(dict.fromkeys(self._form[1]))))
        self._form = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIPPED_TAGS:
            self._skip += 1
        elif tag in _BLOCK_TAGS:
            self._emit("\n")
        elif tag == "a":
            href = next((v for k, v in attrs if k == "href" and v), "")
            self._anchor, self._href = ([], href.strip()) if href else (None, "")
        elif tag == "img":
            self.images += 1
            alt = next((v for k, v in attrs if k == "alt" and v), "")
            if alt:
                self._emit(f" [image: {collapse(alt)}] ")
        elif tag == "form":
            self.close_form()
            self._form = (collapse(next((v for k, v in attrs if k == "action" and v), ""))[:300], [])
        elif tag in _FIELD_TAGS:
            self._field(tag, {k: v or "" for k, v in attrs})

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIPPED_TAGS:
            self._skip = max(0, self._skip - 1)
        elif tag in _BLOCK_TAGS:
            self._emit("\n")
        elif tag == "form":
            self.close_form()
        elif tag == "a" and self._anchor is not None:
            text = collapse("".join(self._anchor))
            if len(self.links) < MAX_LINKS * 4:
                self.links.append(Link(text or self._href, self._href))
            self._anchor = None

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        self._emit(data)
        if self._anchor is not None and sum(map(len, self._anchor)) < 1000:
            self._anchor.append(data)

    def _emit(self, text: str) -> None:
        if self._chars < MAX_BODY_CHARS * 2:
            self.out.append(text)
            self._chars += len(text)

    def text(self) -> str:
        lines = (collapse(line) for line in "".join(self.out).split("\n"))
        return "\n".join(line for line in lines if line)


def html_to_text(html: str) -> tuple[str, list[Link]]:
    """The visible text of an HTML part and its anchors; malformed HTML gives what was read before it broke."""
    parser = _read_html(html)
    return parser.text(), parser.links


def _read_html(html: str) -> _HTMLText:
    parser = _HTMLText()
    try:
        parser.feed(html[:MAX_PART_CHARS])
        parser.close()
    except Exception:  # noqa: BLE001 - html.parser raises on some malformed declarations
        pass
    parser.close_form()  # a form left open at the end still asks
    return parser


def _content(part: Message) -> str:
    """A text part's content: by its declared charset, else UTF-8 with replacement characters."""
    try:
        payload = part.get_payload(decode=True)
    except Exception:  # noqa: BLE001 - broken base64 or quoted-printable
        payload = None
    if not isinstance(payload, bytes):
        raw = part.get_payload()
        return clean(raw[:MAX_PART_CHARS]) if isinstance(raw, str) else ""
    payload = payload[: MAX_PART_CHARS * 4]
    charset = part.get_content_charset() or "us-ascii"
    try:
        text = payload.decode(charset, errors="replace")
    except (LookupError, ValueError):  # an unknown or malformed charset name
        text = payload.decode("utf-8", errors="replace")
    if charset in ("us-ascii", "ascii") and not payload.isascii():  # undeclared 8-bit text
        text = eight_bit(payload)
    return clean(text[:MAX_PART_CHARS])


def _size(part: Message) -> int:
    try:
        payload = part.get_payload(decode=True)
    except Exception:  # noqa: BLE001
        payload = None
    if isinstance(payload, bytes):
        return len(payload)
    raw = part.get_payload()
    return len(raw) if isinstance(raw, str) else 0


def _filename(part: Message) -> str | None:
    try:
        name = part.get_filename()
    except Exception:  # noqa: BLE001
        name = part.get_param("name") if hasattr(part, "get_param") else None  # type: ignore[assignment]
    if not name:
        return None
    name = str(name)
    if "=?" in name:  # an RFC 2047 encoded-word, as some mailers write file names
        try:
            name = str(email.header.make_header(email.header.decode_header(name)))
        except Exception:  # noqa: BLE001
            pass
    return collapse(clean(name))[:200]


def _walk(msg: Message, notes: list[str]) -> list[Message]:
    """The leaf parts (and attached messages' leaves) in document order, iteratively, within the caps."""
    leaves: list[Message] = []
    stack: list[tuple[Message, int]] = [(msg, 0)]
    seen = 0
    while stack:
        part, depth = stack.pop()
        seen += 1
        if seen > MAX_PARTS:
            notes.append(f"more than {MAX_PARTS} MIME parts: the rest are not shown")
            break
        payload = part.get_payload() if part.is_multipart() else None
        if isinstance(payload, list):
            if depth >= MAX_DEPTH:
                notes.append(f"MIME parts nested deeper than {MAX_DEPTH} levels are not shown")
                continue
            stack.extend((child, depth + 1) for child in reversed(payload) if isinstance(child, Message))
        else:
            leaves.append(part)
    return leaves


def parse(raw: bytes) -> Email:
    """Parse one message; never raises (a message that cannot be read at all is an empty :class:`Email` with a
    note)."""
    out = Email()
    try:
        msg, cut = read(raw, MAX_PARTS)  # the parser stops making parts past the cap
    except Exception as err:  # noqa: BLE001 - e.g. RecursionError on thousands of nested multiparts
        out.notes.append(f"the message's body could not be parsed ({type(err).__name__}): only its headers are shown")
        try:
            msg = email.parser.BytesParser(policy=email.policy.compat32).parsebytes(raw, headersonly=True)
        except Exception:  # noqa: BLE001
            return out
        _read_headers(msg, out)
        return out
    if not isinstance(msg, EmailMessage | Message):
        return out
    if msg.defects:
        defects = "; ".join(sorted({type(d).__name__ for d in msg.defects}))
        out.notes.append(f"the message is malformed: {defects[:300]}")
    _read_headers(msg, out)
    _read_parts(msg, out)
    if cut and not any(n.startswith(f"more than {MAX_PARTS} MIME parts") for n in out.notes):
        out.notes.append(f"more than {MAX_PARTS} MIME parts: the rest are not shown")
    return out


def _read_headers(msg: Message, out: Email) -> None:
    wanted = {h.lower(): h for h in (*SHOWN_HEADERS, "Received")}
    for name, raw in msg.raw_items():  # type: ignore[attr-defined]
        key = wanted.get(name.lower())
        if key is None:
            continue
        if key == "Received":  # ASCII by RFC 5321, but real relays write 8-bit host names: decoded, not parsed
            if len(out.received) < MAX_RECEIVED:
                out.received.append(collapse(clean(raw))[:MAX_HEADER_CHARS])
            continue
        values = out.headers.setdefault(key, [])
        if len(values) < 5:
            values.append(_header_text(msg, name, raw))
    first = out.header("From").split(" | ")[0] if "From" in out.headers else ""
    out.sender = _sender(first)
    if out.sender is not None and "@" not in out.sender.address:  # a bare name ("Coinbase Security"): all name
        out.sender = Address(collapse(first.replace("<", " ").replace(">", " ").strip('" ')), "")
    out.reply_to = _addresses(out.header("Reply-To"))
    path = _addresses(out.header("Return-Path"))
    out.return_path = path[0].address if path else ""
    out.to = _addresses(" , ".join(out.headers.get("To", []) + out.headers.get("Cc", [])))


_MAILBOX = re.compile(r"<\s*([^<>@\s()]+@[^<>@\s()]+?)\s*>")


def _sender(value: str) -> Address | None:
    """The From header's mailbox. A display name with an unquoted comma (``Microsoft account team ,_<x@y.com>``,
    ``Smith, John <john@x.com>``) parses as a bare name then a mailbox; a reader's client shows the whole as one
    sender, so the name is everything before the first address and the address is that one."""
    senders = _addresses(value)
    if not senders:
        return None
    first = senders[0]
    if "@" not in first.address:
        later = next((a.address for a in senders[1:] if "@" in a.address and a.address in value), None)
        found = _MAILBOX.search(value)  # inside a comment, ``Name,(<x@y.com>)``, the parser sees no address at all
        address = later or (found.group(1) if found else None)
        if address is not None:
            return Address(collapse(value[:value.find(address)].strip(' <>()"\',_;:')), address)
    return first


def _read_parts(msg: Message, out: Email) -> None:
    plain: list[str] = []
    html_text: list[str] = []
    links: list[Link] = []
    for part in _walk(msg, out.notes):
        content_type = clean(part.get_content_type())
        name = _filename(part)
        if content_type in ("text/plain", "text/html") and name is None \
                and part.get_content_disposition() != "attachment":
            content = _content(part)
            if len(content) >= MAX_PART_CHARS:
                out.notes.append(f"a text part longer than {MAX_PART_CHARS:,} characters is cut")
            if content_type == "text/html":
                parsed = _read_html(content)
                html_text.append(parsed.text())
                links.extend(parsed.links)
                out.forms.extend(parsed.forms)
                out.images += parsed.images
            else:
                plain.append(content)
        elif content_type.startswith("multipart/"):
            continue  # an empty multipart: nothing to show
        elif len(out.attachments) < MAX_ATTACHMENTS:
            out.attachments.append(Attachment(name or "(unnamed)", content_type, _size(part)))
            if content_type.startswith("image/"):
                out.images += 1
            elif content_type in ("text/html", "application/xhtml+xml") \
                    or re.search(r"\.(s?html?|xht(ml)?)$", name or "", re.IGNORECASE):
                out.forms.extend(Form(f.action, f.fields, name or "(unnamed)")
                                 for f in _read_html(_content(part)).forms)
        else:
            out.notes.append(f"only the first {MAX_ATTACHMENTS} attachments are listed")
            break
    texts = [t for t in plain if t.strip()] or html_text
    body = "\n".join("\n".join(collapse(line) for line in t.splitlines()) for t in texts)
    body = re.sub(r"\n{3,}", "\n\n", body).strip()
    if len(body) > MAX_BODY_CHARS:
        body = body[:MAX_BODY_CHARS]
        out.notes.append(f"the text is cut after {MAX_BODY_CHARS:,} characters")
    out.body = body
    anchor_texts = {collapse(link.text) for link in links}
    for text in [*plain, *html_text]:  # bare URLs (a client makes them links), unless an anchor shows them
        for url in (m.rstrip(".,;:!?'\"") for m in URL.findall(text[:MAX_BODY_CHARS])):
            if url not in anchor_texts:
                links.append(Link(url, url))
    unique: dict[tuple[str, str], Link] = {}
    for link in links:
        if link.href and not link.href.lower().startswith(("mailto:", "#", "cid:", "tel:")):
            key = (collapse(link.text)[:200], collapse(link.href)[:500])
            unique.setdefault(key, Link(*key))
    out.links = list(unique.values())[:MAX_LINKS]
    out.forms = out.forms[:MAX_FORMS]
    if len(unique) > MAX_LINKS:
        out.notes.append(f"only the first {MAX_LINKS} of {len(unique)} links are listed")
