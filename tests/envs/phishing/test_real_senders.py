"""Senders and authentication results as real phishing writes them: a display name with an unquoted comma or a
comment around the address (``Brand ,_<x@y>``, ``Brand,(<x@y>)``), which a reader's client shows as one sender
while a strict parser sees a bare name; and a receiving server's verdict that the From domain failed DMARC.

Every message here was written for this test in the layouts real mail uses; none is copied from a corpus."""

from __future__ import annotations

import pytest

from security_verifiers.envs.phishing.heuristic import from_verdict_failed, heuristic_probability, unroutable_sender
from security_verifiers.envs.phishing.message import parse
from security_verifiers.envs.phishing.verifiers import confirm, detect
from tests.envs.phishing.mail import context


def raw(from_: str, *headers: str, body: str = "Hello, please read the notice below.") -> bytes:
    lines = [f"From: {from_}", "To: kim.lee@fabrikam.example", "Subject: Notice", *headers,
             "MIME-Version: 1.0", "Content-Type: text/plain; charset=utf-8", "", body, ""]
    return "\r\n".join(lines).encode()


@pytest.mark.parametrize(("from_", "name", "address"), [
    ("Microsoft account team ,_<no-reply@access-accsecurity.example>", "Microsoft account team",
     "no-reply@access-accsecurity.example"),
    ('"AARP Department", _ <25859@prize-notice.example>', "AARP Department", "25859@prize-notice.example"),
    ("Deutsche Bahn,(<noreply@dhl.de>)", "Deutsche Bahn", "noreply@dhl.de"),
    ("Smith, John <john.smith@example.org>", "Smith, John", "john.smith@example.org"),
    ("Jo Dev <jo@dev-list.example.org>", "Jo Dev", "jo@dev-list.example.org"),
])
def test_a_display_name_with_a_comma_keeps_its_address(from_: str, name: str, address: str) -> None:
    sender = parse(raw(from_)).sender
    assert sender is not None and (sender.display_name, sender.address) == (name, address)


@pytest.mark.parametrize("from_", ["Microsoft account team ,_<no-reply@access-accsecurity.example>",
                                   "Deutsche Bahn,(<noreply@dhl.de>)", '"AARP Department", _ <25859@prize.example>'])
def test_a_brand_before_a_comma_is_a_spoofed_display_name(from_: str) -> None:
    ctx = context(raw(from_), mailbox=None, imported=True)
    found = dict(detect(ctx))
    assert "display_name_spoof" in found and confirm("display_name_spoof", found["display_name_spoof"], ctx)
    assert heuristic_probability(ctx) > 0.2


def test_a_reply_to_free_mail_behind_a_comma_name_is_found() -> None:
    ctx = context(raw("Microsoft account team ,_<no-reply@access-accsecurity.example>",
                      "Reply-To: solution.team.0341@gmail.com"), mailbox=None, imported=True)
    assert {"display_name_spoof", "reply_to_mismatch"} <= dict(detect(ctx)).keys()
    assert heuristic_probability(ctx) > 0.5


def test_a_surname_first_name_raises_nothing() -> None:
    ctx = context(raw("Smith, John <john.smith@example.org>", "List-Id: <users.lists.example.org>"),
                  mailbox=None, imported=True)
    assert detect(ctx) == [] and heuristic_probability(ctx) < 0.2


AUTH = "Authentication-Results: mx.fabrikam.example; spf={spf} smtp.mailfrom=bounce.example; dkim={dkim} " \
       "header.d=brand-news.example; dmarc={dmarc} action=none header.from=brand-news.example{extra}"


@pytest.mark.parametrize(("spf", "dkim", "dmarc", "extra", "verdict"), [
    ("none", "none", "fail", "", True),
    ("pass", "none", "none", ";compauth=fail reason=001", True),
    ("softfail", "pass", "pass", "", False),  # a relay outside the sender's SPF: forwarding does this to honest mail
    ("pass", "fail", "pass", "", False),
    ("none", "none", "permerror", "", False),  # a DMARC record in error says nothing of who sent it
])
def test_a_failed_from_verdict_alone_decides_phishing(spf: str, dkim: str, dmarc: str, extra: str,
                                                      verdict: bool) -> None:
    ctx = context(raw("Brand News <news@brand-news.example>", AUTH.format(spf=spf, dkim=dkim, dmarc=dmarc,
                                                                           extra=extra)),
                  mailbox=None, imported=True)
    assert [i for i, _ in detect(ctx)] == ["auth_failure"]
    assert from_verdict_failed(ctx) is verdict
    assert (heuristic_probability(ctx) > 0.5) is verdict, "a failed DMARC verdict decides; a broken path does not"
    assert heuristic_probability(ctx) > 0.2, "any failure is doubt"


def test_a_failed_verdict_after_a_broken_signature_is_only_doubt() -> None:
    """A list that rewrote the message broke the sender's signature: DMARC fails, but no forger is shown."""
    ctx = context(raw("Ann Author <ann@brand-news.example>", AUTH.format(spf="softfail", dkim="fail", dmarc="fail",
                                                                          extra="")),
                  mailbox=None, imported=True)
    assert not from_verdict_failed(ctx)
    assert 0.2 < heuristic_probability(ctx) < 0.5


@pytest.mark.parametrize(("from_", "unroutable"), [
    ("Alertas DETRAN <comunicado187561@detran>", True),
    ("Temu Team <noreply@theskimm,com>", True),
    ("Jo Dev <jo@dev-list.example.org>", False),
    ("Pat Quinn <pat@mail.example.org.>", False),  # a trailing dot is the root, not a missing one
])
def test_a_sender_domain_that_is_no_internet_domain_is_doubt(from_: str, unroutable: bool) -> None:
    ctx = context(raw(from_), mailbox=None, imported=True)
    assert unroutable_sender(ctx) is unroutable
    assert (heuristic_probability(ctx) > 0.2) is unroutable
