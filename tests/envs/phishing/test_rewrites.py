"""E4's robustness split: the same messages in other envelopes (header order, transfer encodings, alternatives),
each rewrite checked to keep what the target is judged on, paired by `sv robust`."""

from __future__ import annotations

import base64
import email
import email.policy
import json
import random
from collections import Counter
from email.message import EmailMessage, Message
from pathlib import Path
from typing import Any

import pytest

from security_verifiers.cli import main
from security_verifiers.core.errors import DatasetError
from security_verifiers.core.types import Item
from security_verifiers.envs.kits.robust import Rewrite, clean_id
from security_verifiers.envs.phishing import rewrites as rw
from security_verifiers.envs.phishing.env import Phishing
from security_verifiers.envs.phishing.items import PhishingInput
from security_verifiers.envs.phishing.message import URL, collapse, html_to_text, parse
from tests.envs.phishing.mail import MAILBOX, message

ENV = Phishing()
CLEAN = {i.id: i for i in ENV.dataset("test").items}
ROBUST = ENV.dataset("robust").items
KINDS = {r.kind for r in rw.REWRITES}


def _bytes(item: Item) -> bytes:
    return PhishingInput.model_validate(item.input).message_bytes()


def _message(item: Item) -> EmailMessage:
    parsed = email.message_from_bytes(_bytes(item), policy=email.policy.default)
    assert isinstance(parsed, EmailMessage)
    return parsed


def _text_parts(item: Item) -> list[Message]:
    return [part for part, _ in rw._text_parts(_message(item))]


def _other_parts(item: Item) -> list[tuple[str, Any]]:
    """The leaves that are not text parts (attachments), by content type and decoded content."""
    msg = _message(item)
    text = [id(part) for part, _ in rw._text_parts(msg)]
    return [(p.get_content_type(), p.get_payload(decode=True)) for p in msg.walk()
            if not p.is_multipart() and id(p) not in text]


def _of(kind: str) -> list[tuple[Item, Item]]:
    return [(CLEAN[clean_id(i.id)[0]], i) for i in ROBUST if clean_id(i.id)[1] == kind]


def _header_block(data: bytes) -> tuple[list[str], bytes]:
    """The header fields (each unfolded, whitespace collapsed) and everything after the header block."""
    head, _, body = data.partition(b"\n\n")
    fields: list[str] = []
    for line in head.decode().split("\n"):
        if line[:1] in (" ", "\t"):
            fields[-1] += line
        else:
            fields.append(line)
    return [collapse(f) for f in fields], body


def test_every_rewrite_keeps_the_whole_reading_of_the_message() -> None:
    counts = Counter(clean_id(i.id)[1] for i in ROBUST)
    assert set(counts) == KINDS and counts["header_order"] == len(CLEAN)  # the headers of any message reorder
    assert all(n >= 40 for n in counts.values()), counts  # each kind applies to a real share of the test set
    for item in ROBUST:
        of, kind = clean_id(item.id)
        original = CLEAN[of]
        assert item.split == "robust" and item.meta == {**original.meta, "rewrite": kind, "of": of}
        assert item.target == original.target and item.input["mailbox"] == original.input["mailbox"]
        assert _bytes(item) != _bytes(original)
        assert ENV.rewrite_problem(original, item) is None
        # stronger than the check: the parsed message (text, notes, images included) is identical, so the prompt is
        assert parse(_bytes(item)) == parse(_bytes(original))
        assert ENV.prompt(item) == ENV.prompt(original)
    again = ENV.dataset("robust").items
    assert [(i.id, i.input) for i in again] == [(i.id, i.input) for i in ROBUST]  # deterministic


def test_header_order_moves_the_fields_below_the_trace_and_recases_their_names() -> None:
    for original, item in _of("header_order"):
        before, body_before = _header_block(_bytes(original))
        after, body_after = _header_block(_bytes(item))
        assert body_after == body_before
        trace = [f for f in before if rw._trace(f.split(":", 1)[0])]
        assert after[:len(trace)] == trace  # the delivery path on top, as it was
        moved_before, moved_after = before[len(trace):], after[len(trace):]
        assert moved_after != moved_before

        def names(fields: list[str]) -> list[str]:
            return [f.split(":", 1)[0] for f in fields]

        assert sorted(f.lower() for f in moved_after) == sorted(f.lower() for f in moved_before)
        assert set(names(moved_after)) != set(names(moved_before))  # names written in another case
        for name in {n.lower() for n in names(moved_before)}:  # fields of one name keep their order
            assert [f.lower() for f in moved_after if f.lower().startswith(f"{name}:")] \
                == [f.lower() for f in moved_before if f.lower().startswith(f"{name}:")]


@pytest.mark.parametrize("kind, cte", [("base64_body", "base64"), ("quoted_printable_body", "quoted-printable")])
def test_a_transfer_encoding_rewrite_reencodes_every_text_part_and_nothing_else(kind: str, cte: str) -> None:
    pairs = _of(kind)
    for original, item in pairs:
        before, after = _text_parts(original), _text_parts(item)
        assert len(after) == len(before) and any(p.get("Content-Transfer-Encoding") != cte for p in before)
        for old, new in zip(before, after, strict=True):
            assert new.get("Content-Transfer-Encoding") == cte
            assert new.get_payload(decode=True) == old.get_payload(decode=True)
            assert new.get_content_type() == old.get_content_type()
        assert _other_parts(item) == _other_parts(original)
    # a message whose text is all in that encoding already has no rewrite of this kind
    done = [i for i in CLEAN.values() if all(p.get("Content-Transfer-Encoding") == cte for p in _text_parts(i))]
    assert done and not {i.id for i in done} & {o.id for o, _ in pairs}


def test_an_html_alternative_shows_the_same_text_with_each_address_linked_to_itself() -> None:
    for original, item in _of("html_alternative"):
        assert [p.get_content_type() for p in _text_parts(original)] == ["text/plain"]
        plain, rich = _text_parts(item)
        assert (plain.get_content_type(), rich.get_content_type()) == ("text/plain", "text/html")
        assert plain.get_payload(decode=True) == _text_parts(original)[0].get_payload(decode=True)
        text = plain.get_content()  # type: ignore[attr-defined]
        shown, links = html_to_text(rich.get_content())  # type: ignore[attr-defined]
        assert shown == "\n".join(collapse(line) for line in text.splitlines() if line.strip())
        urls = [u.rstrip(rw._URL_TAIL) for u in URL.findall(text)]
        assert [(link.text, link.href) for link in links] == [(u, u) for u in urls]
        assert _message(item).get_body(("html", "plain")) is not None


def test_a_text_alternative_gives_the_html_s_text_before_it() -> None:
    for original, item in _of("text_alternative"):
        (html_before,) = _text_parts(original)
        assert html_before.get_content_type() == "text/html"
        plain, rich = _text_parts(item)
        assert (plain.get_content_type(), rich.get_content_type()) == ("text/plain", "text/html")
        assert rich.get_payload(decode=True) == html_before.get_payload(decode=True)
        assert plain.get_content().rstrip("\n") == html_to_text(rich.get_content())[0]  # type: ignore[attr-defined]
        body = _message(item).get_body(("html", "plain"))  # what a client shows: the HTML, as before
        assert body is not None and body.get_content_type() == "text/html"


def test_an_alternative_applies_only_to_a_message_with_one_text_part_of_the_other_kind() -> None:
    assert rw.add_html_alternative(_input(message("Hello.", html="<p>Hello.</p>")), random.Random(0)) is None
    assert rw.add_text_alternative(_input(message("Hello.", html="<p>Hello.</p>")), random.Random(0)) is None
    assert rw.add_text_alternative(_input(message("Hello.")), random.Random(0)) is None
    # a client links a bare www. address to http://, another target than the one E4 reads in the text
    assert rw.add_html_alternative(_input(message("Pay at www.contoso-foods.com/pay today.")),
                                   random.Random(0)) is None
    assert rw.add_html_alternative(_input(message("Pay at https://contoso-foods.com/pay today.")),
                                   random.Random(0)) is not None


def _input(raw: bytes) -> dict[str, Any]:
    try:
        return {"raw": raw.decode("utf-8"), "raw_encoding": "text", "mailbox": MAILBOX.model_dump()}
    except UnicodeDecodeError:
        return {"raw": base64.b64encode(raw).decode(), "raw_encoding": "base64", "mailbox": MAILBOX.model_dump()}


def test_undeclared_8bit_text_is_reencoded_byte_for_byte() -> None:
    raw = (b"From: Ops <ops@contoso-foods.com>\nTo: ap@contoso-foods.com\nSubject: Note\nMIME-Version: 1.0\n"
           b"Content-Type: text/plain\nContent-Transfer-Encoding: 8bit\n\nCaf\xe9 au lait, 5 \x80.\n")
    original = Item(id="x", split="test", input=_input(raw), target={"label": "Legitimate", "family": "f"})
    assert original.input["raw_encoding"] == "base64"
    for kind in ("base64_body", "quoted_printable_body", "html_alternative", "header_order"):
        new_input = next(r for r in rw.REWRITES if r.kind == kind).apply(dict(original.input), random.Random(1))
        assert new_input is not None
        rewritten = Item(id="x~k", split="robust", input=new_input, target=original.target)
        assert rw.rewrite_problem(original, rewritten) is None, kind
        assert parse(_bytes(rewritten)).body == parse(raw).body == "Café au lait, 5 €."


def _swap_sender(item_input: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """A 'rewrite' that changes the label: the From address moved to a look-alike of the recipient's domain."""
    msg = email.message_from_bytes(PhishingInput.model_validate(item_input).message_bytes(),
                                   policy=email.policy.default)
    domain = item_input["mailbox"]["domains"][0]
    msg.replace_header("From", f"IT Service Desk <it-desk@{domain.replace('o', '0', 1)}>")
    item_input["raw"] = msg.as_string()
    return item_input


def test_a_rewrite_that_changes_what_the_target_is_judged_on_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Phishing, "rewrites", lambda self: (Rewrite("spoofed", "the sender moved", _swap_sender),))
    with pytest.raises(DatasetError, match="rewrite.*would change what is scored.*sender changes"):
        Phishing().dataset("robust")


def test_a_rewrite_that_loses_a_planted_span_is_refused() -> None:
    original = next(i for i in CLEAN.values() if i.target["label"] == "Phishing" and any(
        p["indicator"] == "urgency_pressure" for p in i.target["planted"]) and len(_text_parts(i)) == 1
        and _text_parts(i)[0].get_content_type() == "text/plain")
    span = next(p["quote"] for p in original.target["planted"] if p["indicator"] == "urgency_pressure")
    msg = _message(original)
    (part,) = [p for p, _ in rw._text_parts(msg)]
    text = part.get_content()  # type: ignore[attr-defined]
    assert span in collapse(text)
    part.set_content(collapse(text).replace(span, "Thank you."))  # type: ignore[attr-defined]
    rewritten = Item(id=f"{original.id}~calm", split="robust", input={**original.input, "raw": msg.as_string()},
                     target=original.target)
    problem = rw.rewrite_problem(original, rewritten)
    assert problem is not None and "planted urgency_pressure evidence" in problem


def test_sv_robust_pairs_each_clean_item_with_its_rewrites(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "runs"
    assert main(["eval", "phishing", "--model", "baseline:heuristic", "--split", "test,robust", "--limit", "20",
                 "--out", str(out), "--run-id", "r", "--quiet"]) == 0
    run = out / "evals" / "phishing--baseline-heuristic" / "r"
    capsys.readouterr()
    assert main(["robust", str(run), "--json", "--n-boot", "50"]) == 0
    result = json.loads(capsys.readouterr().out)
    first = set(list(CLEAN)[:20])
    expected = Counter(kind for i in ROBUST[:20] if (kind := clean_id(i.id)[1]) and clean_id(i.id)[0] in first)
    assert {kind: row["items"] for kind, row in result["kinds"].items()} == dict(expected)
    for row in result["kinds"].values():
        reward = row["metrics"]["reward_mean"]
        assert reward["delta"] == 0.0 and reward["ci"] == [0.0, 0.0]  # the heuristic reads the same message
