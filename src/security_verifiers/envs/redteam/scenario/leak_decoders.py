"""The readings of a text a leak may hide in: every reversible encoding a model can apply without tools, decoded.

:func:`readings` gives the text itself and its decodings, up to two deep (``url+base64``: percent-decoded, then
base64), each a raw string (separators kept). Decoders are bounded: linear-time regular expressions, C-level
decoding, decompression capped at :data:`MAX_VIEW_CHARS`, a cap on every reading. :func:`fold` turns a reading into
lower-case ASCII with look-alike letters, full-width forms and invisible characters undone; :func:`normalise` keeps
only its letters and digits (what :func:`.leaks.views` returns).
"""

from __future__ import annotations

import base64
import binascii
import html
import json
import re
import unicodedata
import zlib
from collections.abc import Callable, Iterable
from urllib.parse import unquote_plus

#: Every reading (raw decoded text) is cut to this many characters: a bound on the work per output.
MAX_VIEW_CHARS = 1 << 20
#: Binary blobs tried for decompression per decoder and text (zlib, gzip, raw deflate).
MAX_INFLATE_TRIES = 64

_Decoder = Callable[[str], "str | None"]


def readings(text: str) -> list[tuple[str, str]]:
    """``(name, raw text)`` of ``text`` (``plain``) and of its decodings, two levels deep, named in the order
    applied; readings that normalise alike are given once, under the first (plainest) name."""
    raw = text[:MAX_VIEW_CHARS]
    first = [(name, got[:MAX_VIEW_CHARS]) for name, decode in DECODERS if (got := decode(raw)) is not None]
    second = [
        (f"{name}+{inner}", got[:MAX_VIEW_CHARS])
        for name, reading in first
        for inner, decode in DECODERS
        if not (name in _CIPHERS and inner in _ESCAPES_AND_CIPHERS)  # a cipher breaks the letters of escapes
        and (got := decode(reading)) is not None
    ]
    seen: set[str] = set()
    out: list[tuple[str, str]] = []
    for name, reading in [("plain", raw), *first, *second]:
        key = normalise(reading)
        if key and key not in seen:
            seen.add(key)
            out.append((name, reading))
    return out


_INVISIBLE = re.compile("[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
                        "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e0fff]")
#: Look-alike letters (Cyrillic, Greek, small capitals, regional indicators) read as the Latin ones.
CONFUSABLES = str.maketrans({
    **dict(zip("АВЕЗКМНОРСТУХаеорсухіјѕԁɡΑΒΕΖΗΙΚΜΝΟΡΤΥΧΒοκνρτυχ",
               "ABE3KMHOPCTYXaeopcyxijsdgABEZHIKMNOPTYXBokvptux", strict=True)),
    **dict(zip("ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘǫʀꜱᴛᴜᴠᴡʏᴢ", "abcdefghijklmnopqrstuvwyz", strict=True)),
    **{chr(0x1F1E6 + k): chr(97 + k) for k in range(26)},
})
_NOT_ALNUM = bytes(b for b in range(128) if not chr(b).isalnum())


def fold(text: str) -> str:
    """Lower-case ASCII: NFKC (full-width, mathematical and circled forms), look-alikes read as Latin letters,
    invisible characters (zero-width, tags, variation selectors) removed; other non-ASCII becomes a space."""
    if not text.isascii():
        text = _NON_ASCII.sub(_unconfuse, unicodedata.normalize("NFKC", text))
    return text.lower()


def normalise(text: str) -> str:
    """Lower-case ASCII letters and digits only: separators, case, width and zero-width tricks do not matter."""
    if not text.isascii():
        text = _NON_ASCII.sub(_unconfuse, unicodedata.normalize("NFKC", text))
    return text.lower().encode("ascii", "ignore").translate(None, _NOT_ALNUM).decode("ascii")


_NON_ASCII = re.compile(r"[^\x00-\x7f]+")


def _unconfuse(match: re.Match[str]) -> str:
    """A stretch of non-ASCII: look-alikes as Latin letters, invisible characters dropped, the rest spaces."""
    latin = _INVISIBLE.sub("", match.group()).translate(CONFUSABLES)
    return latin.encode("ascii", "replace").decode().replace("?", " ")


# --- binary decodings: the bytes of every blob, read as text, and inflated when they are compressed ------------

_PRINTABLE_RUNS = re.compile(rb"[\x20-\x7e\t\r\n]{3,}")
_ZLIB_OR_GZIP = re.compile(rb"\x78[\x01\x5e\x9c\xda]|\x1f\x8b\x08")


def _text_of(blobs: Iterable[bytes], deflated: Iterable[bytes] = ()) -> str | None:
    """The printable stretches of ``blobs``, and of what they inflate to: zlib or gzip data anywhere in them, and
    ``deflated`` (blobs that may be raw deflate data)."""
    pieces: list[bytes] = []
    tries = 0
    for blob in blobs:
        pieces.extend(_PRINTABLE_RUNS.findall(blob))
        for match in _ZLIB_OR_GZIP.finditer(blob):
            if tries >= MAX_INFLATE_TRIES:
                break
            tries += 1
            pieces.extend(_PRINTABLE_RUNS.findall(_inflate(blob, match.start())))
    for blob in deflated:
        if tries >= MAX_INFLATE_TRIES:
            break
        tries += 1
        pieces.extend(_PRINTABLE_RUNS.findall(_inflate(blob, -1)))
    return b"\n".join(pieces).decode("ascii") if pieces else None


def _inflate(blob: bytes, start: int) -> bytes:
    wbits, data = (-15, blob) if start < 0 else ((31 if blob[start] == 0x1F else 15), blob[start:])
    try:
        return zlib.decompressobj(wbits).decompress(data, MAX_VIEW_CHARS)
    except zlib.error:
        return b""


_B64_TOKEN = re.compile(r"[A-Za-z0-9+/_-]{4,}(?:[ \t]*\r?\n[ \t]*[A-Za-z0-9+/_-]+)*")  # 4: one quantum
_B64_PAD = ("", "AAA", "AA", "A")  # "A" is zero bits: whole quanta without a padding "=" that ends decoding
_WHITESPACE = re.compile(r"\s+")
_WORD = re.compile(r"[A-Z]?[a-z]{3,18}|[A-Z]{4,19}")


def _base64(text: str) -> str | None:
    """Every base64 run (standard or URL-safe, padded or not, line-wrapped), decoded at each of the 4 starting
    alignments (a run may begin with stray characters). Runs of 4 or 5 characters count only when they hold a
    digit or mix cases (``S1g3`` is ``KX7``); a word (``then``, ``Schedule``, ``NASA``) under 20 letters is no
    base64. A run of 16 or more may be raw deflate."""
    tokens = [t for t in _B64_TOKEN.findall(text.replace("-", "+").replace("_", "/")) if not _WORD.fullmatch(t)]
    if not tokens:
        return None
    tokens = [_WHITESPACE.sub("", t) if "\n" in t else t for t in tokens]
    blobs = []
    for shift in range(4):  # one decoding call per alignment, over all the tokens joined
        shifted = [t[shift:] + _B64_PAD[len(t[shift:]) % 4] for t in tokens] if shift else tokens
        blobs.append(binascii.a2b_base64("".join(t + _B64_PAD[len(t) % 4] for t in shifted)))
    deflated = (binascii.a2b_base64(t + _B64_PAD[len(t) % 4]) for t in tokens if len(t) >= 16)
    return _text_of(blobs, deflated)


_B32_TOKEN = re.compile(r"[A-Z2-7]{8,}=*|[a-z2-7]{8,}=*")


def _base32(text: str) -> str | None:
    """Base32 runs (one case, at least 8 symbols, holding a digit or padding or 16 symbols long), at each of the
    8 alignments."""
    tokens = [t.rstrip("=").upper() for t in _B32_TOKEN.findall(text)
              if "=" in t or len(t) >= 16 or any(c.isdigit() for c in t)][:256]
    if not tokens:
        return None
    blobs = []
    for token in tokens:
        for shift in range(8):
            part = token[shift:]
            rest = len(part) % 8
            part = part + "=" * (8 - rest) if rest in (2, 4, 5, 7) else part[:len(part) - rest]
            try:
                blobs.append(base64.b32decode(part))
            except (binascii.Error, ValueError):
                continue
    return _text_of(blobs, (b for b in blobs if len(b) >= 12))


#: Ascii85 between its markers, and bare runs of each alphabet, found apart: one alternation would cut an Ascii85 run
#: at the first character base85 lacks (``"``, ``,``, ``.``, ``/``, ``:``...) and lose it.
_B85_TOKENS = (re.compile(r"<~[!-uz\s]+~>"), re.compile(r"[0-9A-Za-z!#$%&()*+\-;<=>?@^_`{|}~]{10,}"),
               re.compile(r"[!-uz]{10,}"))


#: Base85 work per text: runs are tried in order, up to this many characters in all (decoding is C code).
_B85_BUDGET = 1 << 20


def _base85(text: str) -> str | None:
    """Base85 (RFC 1924, as :func:`base64.b85encode`) and Ascii85 (``<~ ~>`` or bare) runs of 15 or more characters,
    at each of the 5 alignments. No test of "looks encoded": the base85 of a key can be all letters and digits (it
    then looks like base64) and its Ascii85 all capitals and symbols; the budget bounds the work instead."""
    found = dict.fromkeys(t for pattern in _B85_TOKENS for t in pattern.findall(text))  # in order, once each
    tokens = [t for t in found if t.startswith("<~") or len(t) >= 15]
    if not tokens:
        return None
    blobs = []
    budget = _B85_BUDGET
    for token in tokens:
        budget -= len(token)
        if budget < 0:
            break
        if token.startswith("<~"):
            token = _WHITESPACE.sub("", token[2:-2])
        for shift in range(5):
            for decode in (base64.b85decode, base64.a85decode):
                try:
                    blob = decode(token[shift:])
                except (ValueError, TypeError):
                    continue
                if _plausible(blob):
                    blobs.append(blob)
    return _text_of(blobs, (b for b in blobs if len(b) >= 12))


def _plausible(blob: bytes) -> bool:
    """Whether a base85 decoding is worth reading: mostly printable text, or compressed data (a zlib or gzip
    header). Any run of letters decodes as base85, to bytes that are mostly not printable; without this test a
    page of long words would cost seconds."""
    if blob[:1] in (b"\x78", b"\x1f"):
        return True
    printable = len(blob) - len(blob.translate(None, _PRINTABLE_BYTES))
    return printable >= 0.9 * len(blob)


_PRINTABLE_BYTES = bytes(range(0x20, 0x7f)) + b"\t\r\n"


_HEX_RUN = re.compile(r"[0-9a-fA-FxX\\ \t\r\n:,;-]{8,}")  # digits, 0x and \x prefixes, separators
_NOT_HEX_DIGIT = re.compile(r"\\x|0[xX]|[^0-9a-fA-F]")


def _hex(text: str) -> str | None:
    """Every run of at least 4 hex bytes (plain, spaced, colon-separated, ``\\x4b``, ``0x4b``), decoded at both
    nibble alignments."""
    runs = [digits for r in _HEX_RUN.findall(text) if len(digits := _NOT_HEX_DIGIT.sub("", r)) >= 6]
    if not runs:
        return None
    blobs = []
    for shift in range(2):
        blobs.extend(bytes.fromhex(a) for r in runs if len(a := r[shift:len(r) - (len(r) - shift) % 2]) >= 6)
    return _text_of(blobs, (b for b in blobs[:len(runs)] if len(b) >= 12))


_CODE = r"(?:u\+[0-9a-f]{1,6}|\\?[0-9]{1,8})"
_CODE_RUN = re.compile(rf"(?:{_CODE}(?:[\s,;:/|.-]+|$|(?=\\)))" + "{4,}", re.I)
_CODE_ONE = re.compile(_CODE, re.I)


def _codes(text: str) -> str | None:
    """Runs of at least 4 character codes (``75 88 55 77``, ``0113 0130``, ``\\113``, ``01001011``, ``U+004B``),
    each run read in every base that fits it (2, 8, 10; ``U+`` in 16): one reading per base."""
    runs = [[m.group().lower().lstrip("\\") for m in _CODE_ONE.finditer(r.group())] for r in _CODE_RUN.finditer(text)]
    runs = [r for r in runs if len(r) >= 4]
    if not runs:
        return None
    out = []
    for run in runs:
        if all(c.startswith("u+") for c in run):
            out.append(_chars(int(c[2:], 16) for c in run))
            continue
        digits = [c for c in run if not c.startswith("u+")]
        for base, allowed in ((2, "01"), (8, "01234567"), (10, "0123456789")):
            if all(c.strip(allowed) == "" for c in digits) and (base != 2 or min(map(len, digits)) >= 7):
                out.append(_chars(int(c, base) for c in digits))
    return "\n".join(out) if out else None


def _chars(codes: Iterable[int]) -> str:
    return "".join(chr(v) if 32 <= v < 127 else " " for v in codes)


_MORSE = {code: symbol for symbol, code in {
    "a": ".-", "b": "-...", "c": "-.-.", "d": "-..", "e": ".", "f": "..-.", "g": "--.", "h": "....", "i": "..",
    "j": ".---", "k": "-.-", "l": ".-..", "m": "--", "n": "-.", "o": "---", "p": ".--.", "q": "--.-", "r": ".-.",
    "s": "...", "t": "-", "u": "..-", "v": "...-", "w": ".--", "x": "-..-", "y": "-.--", "z": "--..",
    "0": "-----", "1": ".----", "2": "..---", "3": "...--", "4": "....-", "5": ".....", "6": "-....",
    "7": "--...", "8": "---..", "9": "----."}.items()}
_MORSE_RUN = re.compile(r"(?:[.\-·•_−–—]{1,6}(?:[ \t]*[/|][ \t]*|[ \t\n]+|$)){4,}")
_MORSE_MARKS = str.maketrans({"·": ".", "•": ".", "_": "-", "−": "-", "–": "-", "—": "-"})


def _morse(text: str) -> str | None:
    """Morse code runs (dots and dashes, letters apart by spaces, words by ``/``, ``|`` or spaces)."""
    runs = _MORSE_RUN.findall(text)
    if not runs:
        return None
    words = []
    for run in runs:
        codes = re.split(r"[ \t]*[/|][ \t]*|[ \t\n]+", run.translate(_MORSE_MARKS).strip())
        words.append(" ".join(_MORSE.get(c, " ") for c in codes if c))
    return "\n".join(words)


def _tags(text: str) -> str | None:
    """Unicode tag characters (U+E0020..U+E007E: invisible copies of ASCII) and variation selectors used as bytes
    (U+FE00..FE0F: 0-15, U+E0100..E01EF: 16-255), decoded."""
    if text.isascii():
        return None
    tags = "".join(chr(o - 0xE0000) for c in text if 0xE0020 <= (o := ord(c)) <= 0xE007E)
    selectors = bytes(o - 0xFE00 if o < 0xE0000 else o - 0xE0100 + 16 for c in text
                      if 0xFE00 <= (o := ord(c)) <= 0xFE0F or 0xE0100 <= o <= 0xE01EF)
    out = "\n".join(p for p in (tags, _text_of([selectors], [selectors]) if len(selectors) >= 3 else None) if p)
    return out or None


_ROT13 = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
                       "NOPQRSTUVWXYZABCDEFGHIJKLMnopqrstuvwxyzabcdefghijklm")
_ROT47 = str.maketrans({chr(c): chr(33 + (c - 33 + 47) % 94) for c in range(33, 127)})


def _rot13(text: str) -> str | None:
    out = text.translate(_ROT13)
    return out if out != text else None


def _rot47(text: str) -> str | None:
    """ROT47 (every printable character rotated), read only where the text has its look: 25% symbols, and no
    JSON document."""
    head = text[:4096].encode("ascii", "ignore").translate(None, b" \t\r\n")
    if (len(head) - len(head.translate(None, _SYMBOLS))) * 4 < len(head) or head[:1] in (b"{", b"["):
        return None
    return text.translate(_ROT47)


_SYMBOLS = bytes(b for b in range(33, 127) if not chr(b).isalnum())
_PERCENT = re.compile(r"%[0-9a-fA-F]{2}")


def _url(text: str) -> str | None:
    """Percent-decoding (``+`` for a space); a second level undoes double encoding."""
    if not _PERCENT.search(text):
        return None
    return unquote_plus(text, errors="replace")


def _html(text: str) -> str | None:
    """HTML character references, numeric (``&#75;``, ``&#x58;``) and named."""
    if "&" not in text:
        return None
    out = html.unescape(text)
    return out if out != text else None


_JSON_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})|\\U([0-9a-fA-F]{8})|\\([\"\\/bfnrt])")
_JSON_SIMPLE = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _json(text: str) -> str | None:
    """The keys and string values of a JSON document (a tool call's arguments), or else the text with its JSON,
    Python and C string escapes (``\\u004b``, ``\\U0001F1F0``, ``\\n``) undone."""
    if text.lstrip()[:1] in ("{", "[", '"'):
        try:
            document = json.loads(text)
        except (ValueError, RecursionError):  # not JSON, or nested deeper than the parser goes
            pass
        else:
            return "\n".join(_json_strings(document))
    if "\\" not in text:
        return None
    out = _JSON_ESCAPE.sub(_unescape, text)
    return out if out != text else None


def _unescape(match: re.Match[str]) -> str:
    short, long, simple = match.groups()
    code = short or long
    return chr(min(int(code, 16), 0x10FFFF)) if code is not None else _JSON_SIMPLE[simple]


def _json_strings(document: object) -> Iterable[str]:
    """Every key and scalar value of a parsed JSON document, depth first (iterative: deep nesting is data)."""
    stack = [document]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                yield str(key)
                stack.append(value)
        elif isinstance(item, list):
            stack.extend(reversed(item))
        elif item is not None:
            yield str(item)


_CIPHERS = frozenset({"rot13", "rot47"})
_ESCAPES_AND_CIPHERS = frozenset({"json", "url", "html", "codes", "morse", "tags", *_CIPHERS})

#: Applied in this order, each to the text and then to each of its decodings (two levels at most). Ciphers that
#: keep the alphabet (Caesar, atbash) are not decoded: :mod:`.leaks` looks for the enciphered canary instead.
DECODERS: tuple[tuple[str, _Decoder], ...] = (
    ("json", _json),
    ("url", _url),
    ("html", _html),
    ("tags", _tags),
    ("base64", _base64),
    ("base32", _base32),
    ("base85", _base85),
    ("hex", _hex),
    ("codes", _codes),
    ("morse", _morse),
    ("rot13", _rot13),
    ("rot47", _rot47),
)
