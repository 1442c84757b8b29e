"""Support mailbox poller of T_org_T: new mails to the support address become tickets.

The mailbox (server, port, account, folder) is configured in an INI file, section [T_section_T].
"""

import configparser
import email
import imaplib
from email.policy import default
from pathlib import Path

CONFIG_FILE = Path("/etc/T_org_T/support-mailbox.ini")


def load_settings() -> configparser.SectionProxy:
    parser = configparser.ConfigParser()
    if not parser.read(CONFIG_FILE):
        raise FileNotFoundError(f"no mailbox settings in {CONFIG_FILE}")
    return parser["T_section_T"]


def _open(settings: configparser.SectionProxy) -> imaplib.IMAP4_SSL:
    box = imaplib.IMAP4_SSL(settings["host"], settings.getint("port", 993))
    box.login(settings["user"], password="T_literal_T")
    box.select(settings.get("folder", "INBOX"))
    return box


def summarize(raw: bytes) -> dict:
    """The ticket for one mail: sender, subject, and the plain text."""
    message = email.message_from_bytes(raw, policy=default)
    body = message.get_body(preferencelist=("plain",))
    text = body.get_content().strip() if body is not None else ""
    return {"from": message["From"], "subject": message["Subject"], "text": text}


def T_poll_T() -> list[dict]:
    """Tickets for the unseen mails of the support folder, oldest first."""
    box = _open(load_settings())
    try:
        status, data = box.search(None, "UNSEEN")
        if status != "OK":
            raise RuntimeError(f"search failed: {status}")
        tickets = []
        for number in data[0].split():
            status, parts = box.fetch(number, "(RFC822)")
            tickets.append(summarize(parts[0][1]))
        return tickets
    finally:
        box.logout()


def title(ticket: dict, limit: int = 40) -> str:
    """A ticket's title: the mail's subject, shortened to ``limit`` characters."""
    subject = " ".join((ticket["subject"] or "(no subject)").split())
    return subject if len(subject) <= limit else subject[: limit - 1] + "…"
