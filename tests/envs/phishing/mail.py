"""Build small test emails (one place, so every test reads the same way)."""

from __future__ import annotations

from email.message import EmailMessage

from security_verifiers.envs.phishing.items import Mailbox, Planted
from security_verifiers.envs.phishing.message import parse
from security_verifiers.envs.phishing.verifiers import Context

MAILBOX = Mailbox(organisation="Contoso Foods", domains=["contoso-foods.com"], people=["Dana Whitfield"],
                  partners=[{"name": "Northwind Logistics", "domains": ["northwind-logistics.com"]}])


def message(text: str = "Hello.", html: str | None = None, attachments: tuple[tuple[str, str, bytes], ...] = (),
            **headers: str) -> bytes:
    """``headers`` by Python name (``Reply_To`` -> ``Reply-To``); attachments as (name, content type, bytes)."""
    m = EmailMessage()
    defaults = {"From": "Ops <ops@contoso-foods.com>", "To": "ap@contoso-foods.com", "Subject": "Note"}
    for name, value in {**defaults, **{k.replace("_", "-"): v for k, v in headers.items()}}.items():
        m[name] = value
    m.set_content(text)
    if html is not None:
        m.add_alternative(html, subtype="html")
    for name, content_type, data in attachments:
        main, sub = content_type.split("/")
        m.add_attachment(data, maintype=main, subtype=sub, filename=name)
    return bytes(m)


def context(raw: bytes, mailbox: Mailbox | None = MAILBOX, planted: tuple[Planted, ...] = (),
            imported: bool = False) -> Context:
    return Context(parse(raw), mailbox, planted, imported)


def planted(indicator: str, quote: str) -> Planted:
    return Planted.model_validate({"indicator": indicator, "quote": quote})


