"""The heuristic reads lures in the words (:mod:`security_verifiers.envs.phishing.lures`): themes by phrase in the
languages real phishing arrives in, disguised letters, the recipient's address in the subject, abused TLDs; and
what it reads moves its probability without ever making one theme alone a Phishing verdict.

Every message here was written for this test in the layouts real mail uses; none is copied from a corpus."""

from __future__ import annotations

import pytest

from security_verifiers.envs.phishing.heuristic import heuristic_probability, lure_logit
from security_verifiers.envs.phishing.lures import read_lures
from security_verifiers.envs.phishing.message import parse
from tests.envs.phishing.mail import context


def raw(body: str, subject: str = "Notice", from_: str = "Service <service@mail.example.org>",
        to: str = "kim.lee@fabrikam.example", *headers: str) -> bytes:
    lines = [f"From: {from_}", f"To: {to}", f"Subject: {subject}", *headers, "MIME-Version: 1.0",
             "Content-Type: text/plain; charset=utf-8", "", body, ""]
    return "\r\n".join(lines).encode()


@pytest.mark.parametrize(("body", "theme"), [
    ("We noticed unusual sign-in activity. Your account has been suspended until you verify it.", "account_threat"),
    ("Regularize sua CNH para evitar a suspensão definitiva.", "account_threat"),
    ("Ihr Konto wurde gesperrt. Bitte bestätigen Sie Ihre Angaben.", "account_threat"),
    ("Votre compte a été suspendu.", "account_threat"),
    ("Congratulations! You have been selected to receive a free gift.", "prize"),
    ("Parabéns! Você foi selecionado para resgatar seus pontos.", "prize"),
    ("Herzlichen Glückwunsch! Sie wurden ausgewählt.", "prize"),
    ("Pay the redelivery fee to release your parcel.", "delivery"),
    ("Seu código pix foi gerado: valor R$ 96,84.", "money"),
    ("Confirm your seed phrase to keep your wallet safe.", "crypto"),
    ("This offer expires today: act now.", "urgency"),
])
def test_each_theme_is_read_in_its_language(body: str, theme: str) -> None:
    assert theme in read_lures(parse(raw(body))).themes


@pytest.mark.parametrize("body", [
    "The password field in the config file is read before the free list is built.",
    "I verified the patch on my account at work; the package builds with rpm -ba.",
    "Free software needs free documentation. Patches welcome on the list.",
    "Sign the release with your private key; the crypto library checks it.",
    "Great pix of the moon over the ocean last night.",
    "The winner of the 2002 Hugo award was announced; the inheritance rules of the class are odd.",
])
def test_words_of_honest_technical_mail_are_no_lure(body: str) -> None:
    assert read_lures(parse(raw(body, subject="Re: [dev] build broken"))).themes == frozenset()


@pytest.mark.parametrize(("subject", "from_", "disguised"), [
    ("𝐘𝐎𝐔𝐑 𝐏𝐇𝐎𝐓𝐎𝐒 are waiting", "Canvas <news@mail.example.org>", True),
    ("Payment update", "ᴘᴀʏᴍᴇɴᴛ ᴅᴇᴄʟɪɴᴇᴅ <billing@mail.example.org>", True),
    ("Delivery", "UPs̷-ES <info@mail.example.org>", True),
    ("ʙʟɪɴɢ ʙʟɪɴɢ", "Shop <news@mail.example.org>", True),
    ("Réunion à 10 h — ordre du jour", "Zoë Müller <zoe@mail.example.org>", False),
])
def test_disguised_letters_in_subject_or_name(subject: str, from_: str, disguised: bool) -> None:
    assert read_lures(parse(raw("Hello.", subject, from_))).disguised_letters is disguised


def test_the_recipients_own_address_in_the_subject_is_read_and_a_name_is_not() -> None:
    assert read_lures(parse(raw("Hi.", "kim.lee@fabrikam.example, your reward is ready"))).recipient_in_subject
    assert not read_lures(parse(raw("Hi.", "Kim, your order shipped"))).recipient_in_subject


def test_a_sender_on_an_abused_tld_is_read_and_a_label_named_like_one_is_not() -> None:
    assert read_lures(parse(raw("Hi.", from_="Offers <renew@deals-now.click>"))).abused_tld
    assert not read_lures(parse(raw("Hi.", from_="Team <team@click.example.com>"))).abused_tld


def test_one_theme_alone_never_makes_the_heuristic_say_phishing() -> None:
    for body in ("Congratulations! You have been selected.", "Your account has been suspended.",
                 "Please act now.", "Confirm your seed phrase."):
        assert heuristic_probability(context(raw(body), mailbox=None, imported=True)) < 0.5


def test_a_prize_alone_is_sent_to_a_human_and_a_routine_deadline_is_not() -> None:
    prize = context(raw("Congratulations! You have been selected to win a free gift."), mailbox=None, imported=True)
    assert 0.2 < heuristic_probability(prize) < 0.5
    deadline = context(raw("The build freeze starts immediately after the release."), mailbox=None, imported=True)
    assert heuristic_probability(deadline) < 0.2


def test_a_lure_with_every_mark_is_phishing_to_the_heuristic() -> None:
    ctx = context(raw("Your account has been suspended. Claim your refund within 24 hours: pay the fee now.",
                      subject="kim.lee@fabrikam.example ᴀᴄᴛɪᴏɴ ʀᴇǫᴜɪʀᴇᴅ", from_="Support <help@secure-desk.top>"),
                  mailbox=None, imported=True)
    assert heuristic_probability(ctx) > 0.9
    assert lure_logit(ctx) > 4.0


def test_lures_are_never_evidence() -> None:
    """The heuristic cites only what code confirms: a lure-only message gets no evidence at all."""
    from security_verifiers.envs.phishing.verifiers import detect

    ctx = context(raw("Congratulations! You have been selected. Act now."), mailbox=None, imported=True)
    assert detect(ctx) == []
