"""Reading a message with a cap on its MIME parts (:func:`mime.read`): the parser stops once the cap is passed, so a
message of 100,000 parts costs what one of 200 does, and a walk within the cap sees what it sees in a full parse."""

from __future__ import annotations

import email
import email.policy
import time
from email.message import Message

import pytest

from security_verifiers.envs.phishing.message import MAX_PARTS, _walk
from security_verifiers.envs.phishing.mime import read
from tests.envs.phishing.mail import message
from tests.envs.phishing.test_message import CRLF_QP, HOSTILE


def _many(n: int, nested_at: int | None = None) -> bytes:
    """A multipart/mixed of ``n`` text parts (one of them, ``nested_at``, a multipart/alternative of two)."""
    parts = []
    for i in range(n):
        if i == nested_at:
            parts.append(b"--b\r\nContent-Type: multipart/alternative; boundary=c\r\n\r\n"
                         b"--c\r\nContent-Type: text/plain\r\n\r\nalt plain\r\n"
                         b"--c\r\nContent-Type: text/html\r\n\r\n<p>alt</p>\r\n--c--\r\n")
        else:
            parts.append(b"--b\r\nContent-Type: text/plain\r\n\r\npart %d\r\n" % i)
    return (b"From: a@example.com\r\nSubject: many\r\nMIME-Version: 1.0\r\n"
            b"Content-Type: multipart/mixed; boundary=b\r\n\r\n" + b"".join(parts) + b"--b--\r\n")


def _full(raw: bytes) -> Message:
    return email.message_from_bytes(raw, policy=email.policy.compat32)


def _dump(part: Message) -> tuple:
    """A part as the parser left it: headers, then the raw payload or the parts (``as_string`` would re-encode it,
    and fails on an unknown charset)."""
    payload = part.get_payload()
    body = [_dump(p) for p in payload] if isinstance(payload, list) else payload
    return tuple(part.items()), part.preamble, part.epilogue, [type(d) for d in part.defects], body


def _leaves(root: Message) -> tuple[list[tuple], list[str]]:
    notes: list[str] = []
    return [_dump(leaf) for leaf in _walk(root, notes)], notes


def test_100000_parts_are_cut_while_parsing() -> None:
    raw = _many(100_000)
    start = time.perf_counter()
    root, cut = read(raw, MAX_PARTS)
    print(f"100,000 parts ({len(raw):,} bytes) read in {time.perf_counter() - start:.4f}s")
    assert cut
    assert sum(1 for _ in root.walk()) == MAX_PARTS + 1  # the parser made the root and 200 parts, not 100,001
    assert root.get_payload(0).get_payload() == "part 0"
    leaves, notes = _leaves(root)
    assert len(leaves) == MAX_PARTS - 1 and notes == [f"more than {MAX_PARTS} MIME parts: the rest are not shown"]


@pytest.mark.parametrize(
    "raw",
    [
        _many(1_000),  # siblings only
        _many(1_000, nested_at=MAX_PARTS - 2),  # a multipart whose children straddle the cap
        _many(1_000, nested_at=MAX_PARTS - 1),  # a multipart that is the cap's last part
        _many(MAX_PARTS + 1),  # the smallest message that is cut
        HOSTILE["many parts"],
    ],
    ids=["siblings", "straddling", "multipart-last", "just-over", "hostile-many-parts"],
)
def test_a_cut_parse_walks_like_a_full_one(raw: bytes) -> None:
    root, cut = read(raw, MAX_PARTS)
    assert cut
    assert _leaves(root) == _leaves(_full(raw))


@pytest.mark.parametrize(
    "raw",
    [
        _many(MAX_PARTS - 1),  # the root and 199 parts: within the cap
        _many(MAX_PARTS),  # the root and 200 parts: read in full (the walk's own cap says so)
        _many(20, nested_at=3),
        CRLF_QP,
        message("Hello.", html="<p>Hello.</p>", attachments=(("a.pdf", "application/pdf", b"%PDF-1.7 ..."),)),
        *(raw for name, raw in HOSTILE.items() if name not in ("many parts", "nested multiparts")),
    ],
    ids=["199-parts", "200-parts", "one-nested", "crlf-qp", "with-attachment",
         *(name for name in HOSTILE if name not in ("many parts", "nested multiparts"))],
)
def test_below_the_cap_the_parse_is_the_standard_one(raw: bytes) -> None:
    root, cut = read(raw, MAX_PARTS)
    full = _full(raw)
    assert not cut
    assert _dump(root) == _dump(full)


def test_thousands_of_nested_multiparts_no_longer_exhaust_the_recursion_limit() -> None:
    # The standard parser recurses once per level and raises RecursionError on these 3,000 levels.
    root, cut = read(HOSTILE["nested multiparts"], MAX_PARTS)
    assert cut and sum(1 for _ in root.walk()) == MAX_PARTS + 1
