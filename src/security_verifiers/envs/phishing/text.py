"""What every family shares: the context of one message, a body writer that records the language spans it plants,
and :func:`finish`, which adds the delivery path (Received chain, authentication results, the usual extra headers)
and turns a family's draft into a message.

A planted language span is one clause the body really contains, quoted exactly; it never crosses a sentence end
(``. ``, ``! ``, ``? ``) or a line, because a quote is checked inside one sentence of the rendered body.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from dataclasses import dataclass, field

from security_verifiers.envs.phishing import mime
from security_verifiers.envs.phishing.mime import Attachment, Block, Link, Spec
from security_verifiers.envs.phishing.world import Organisation, Person

_SENTENCE_END = re.compile(r"[.!?]\s|\n")


@dataclass
class Ctx:
    """One message's circumstances: the stream, the organisation, the recipient, the time it arrives."""

    rng: random.Random
    org: Organisation
    recipient: Person
    when: dt.datetime

    def pick(self, options: tuple[str, ...] | list[str], **kw: object) -> str:
        """One phrasing, its slots filled from ``kw``."""
        return self.rng.choice(options).format(**kw)


@dataclass
class Draft:
    label: str
    family: str
    difficulty: str
    lure: str
    raw: str
    planted: list[tuple[str, str]]


Span = tuple[str, str, str]


def span(indicator: str, text: str, end: str = ".") -> Span:
    """A clause planted under a language indicator; the sentence it ends with ``end``."""
    if _SENTENCE_END.search(text) or text[-1:] in ".!?":
        raise ValueError(f"a planted span must stay inside one sentence: {text!r}")
    return (indicator, text, end)


@dataclass
class Body:
    """Paragraphs and links, and the evidence planted in them."""

    blocks: list[Block] = field(default_factory=list)
    planted: list[tuple[str, str]] = field(default_factory=list)

    def para(self, *parts: str | Span | None) -> None:
        out = []
        for p in parts:
            if not p:
                continue
            if isinstance(p, tuple):
                self.planted.append((p[0], p[1]))
                out.append(p[1] + p[2])
            else:
                out.append(p)
        if out:
            self.blocks.append(" ".join(out))

    def link(self, text: str, href: str) -> None:
        self.blocks.append(Link(text, href))

    def plant(self, indicator: str, quote: str) -> None:
        self.planted.append((indicator, quote))


# --------------------------------------------------------------------------------------------------
# Shared wording
# --------------------------------------------------------------------------------------------------
def greeting(ctx: Ctx, name: str | None = None) -> str:
    first = (name or ctx.recipient.name).split(" ")[0]
    return ctx.pick(("Hi {f},", "Hello {f},", "Dear {f},", "{f},", "Good morning {f},", "Hi {f}", "Hello,",
                     "Dear colleague,", "Hey {f},", "Good afternoon,"), f=first)


def signoff(ctx: Ctx, name: str, role: str = "", company: str = "", phone: bool = True) -> str:
    first = name.split(" ")[0]
    line = ctx.pick(("Thanks,", "Best regards,", "Kind regards,", "Regards,", "Many thanks,", "Thank you,",
                     "Best,", "Cheers,", "Sincerely,", "Warm regards,"))
    sig = [line, name if ctx.rng.random() < 0.8 else first]
    if role and ctx.rng.random() < 0.7:
        sig.append(role + (f" | {company}" if company else ""))
    if phone and ctx.rng.random() < 0.4:
        sig.append(f"{ctx.rng.choice(('T', 'Tel', 'Direct', 'M', 'Mobile'))}: {phone_number(ctx.rng)}")
    return "\n".join(sig)


def phone_number(rng: random.Random) -> str:
    return rng.choice(("+1 {a}-555-0{b}", "({a}) 555-0{b}", "+44 20 7946 0{b}", "+49 30 901820{c}",
                       "+1 {a} 555 01{c}")).format(a=rng.randint(201, 989), b=rng.randint(100, 199),
                                                  c=rng.randint(10, 99))


def disclaimer(ctx: Ctx, company: str) -> str | None:
    if ctx.rng.random() > 0.25:
        return None
    return ctx.pick((
        "CONFIDENTIALITY NOTICE: This message and any attachments are intended only for the addressee and may "
        "contain confidential information of {c}. If you received it in error, please notify the sender and delete it.",
        "This email was scanned for viruses and malware. {c} accepts no liability for any damage caused by this "
        "message.",
        "Please consider the environment before printing this email.",
        "The information in this email is confidential and may be legally privileged. It is intended solely for the "
        "addressee."), c=company)


def amount(rng: random.Random, low: int, high: int) -> str:
    cur = rng.choice(("$", "$", "$", "€", "£"))
    value = rng.randint(low, high) + rng.choice((0, 0, rng.randint(1, 99) / 100))
    return f"{cur}{value:,.2f}"


def day_text(when: dt.datetime, days: int) -> str:
    d = when + dt.timedelta(days=days)
    return d.strftime("%A %d %B").replace(" 0", " ")


def ref(rng: random.Random, prefix: str = "", digits: int = 6) -> str:
    return prefix + "".join(rng.choice("0123456789") for _ in range(digits))


def slug(rng: random.Random, *words: str) -> str:
    return "-".join(w for w in words if w) + (f"-{rng.randint(2, 99)}" if rng.random() < 0.4 else "")


# --------------------------------------------------------------------------------------------------
# The delivery path, and the message
# --------------------------------------------------------------------------------------------------
_MAILERS = ("Microsoft Outlook 16.0", "Apple Mail (2.3774.500.171)", "iPhone Mail (21E236)", "Mozilla Thunderbird",
            "PHPMailer 6.8.1 (https://github.com/PHPMailer/PHPMailer)", "Zimbra 9.0.0_GA", "Microsoft Outlook 15.0")
_AUTH_MODES = {  # mode -> choices of (spf, dkim, dmarc)
    "pass": (("pass", "pass", "pass"),),
    "none": (("none", "none", "none"), ("pass", "none", "none"), ("neutral", "none", "none")),
    "spoof": (("fail", "none", "fail"), ("softfail", "none", "fail"), ("fail", "fail", "fail")),
    "forwarded": (("fail", "fail", "fail"), ("softfail", "fail", "fail"), ("pass", "fail", "fail"),
                  ("softfail", "pass", "pass")),
    "softfail": (("softfail", "pass", "pass"), ("softfail", "none", "none")),
}


def domain_of(address: str) -> str:
    return address.rsplit("@", 1)[-1].lower()


def finish(ctx: Ctx, body: Body, *, family: str, label: str, difficulty: str, lure: str,
           sender: tuple[str, str], subject: str, auth: str = "pass", to: list[tuple[str, str]] | None = None,
           cc: list[tuple[str, str]] | None = None, reply_to: tuple[str, str] | None = None,
           return_path: str | None = None, attachments: list[Attachment] | None = None, parts: str | None = None,
           extra: list[tuple[str, str]] | None = None, quoted: list[str] | None = None,
           in_reply_to: str | None = None, bulk: bool = False, urgent: bool = False) -> Draft:
    """The message of a family's draft, with the headers its path adds; a failing authentication result is
    planted as ``auth_failure`` (it is in the message whatever the label)."""
    rng = ctx.rng
    planted = list(body.planted)
    from_domain = domain_of(sender[1])
    envelope = return_path or sender[1]
    recipient = ctx.recipient.email
    if rng.random() < 0.08 and auth not in ("forwarded", "spoof"):  # some gateways add no results at all, on any mail
        auth = "missing"
    auth_header = spf_header = None
    if auth != "missing":
        spf, dkim, dmarc = rng.choice(_AUTH_MODES[auth])
        auth_header, clauses = mime.auth_results(rng, ctx.org.domain, domain_of(envelope), from_domain, spf, dkim,
                                                 dmarc)
        failing = [c for k, c in clauses.items() if any(f"{k}={r}" in c for r in ("fail", "softfail"))]
        if rng.random() < 0.35:
            spf_header = mime.received_spf(rng, "softfail" if spf == "softfail" else spf, ctx.org.domain, envelope)
        if failing:
            planted.append(("auth_failure", rng.choice(failing)))
    headers: list[tuple[str, str]] = list(extra or [])
    if rng.random() < 0.35:
        headers.append(("X-Mailer", rng.choice(_MAILERS)))
    if ctx.org.sso == "microsoft" and rng.random() < 0.6:
        headers.append(("X-MS-Exchange-Organization-SCL", str(rng.choice((-1, 1, 1, 5)))))
    if rng.random() < 0.3:
        headers.append(("Content-Language", rng.choice(("en-US", "en-GB"))))
    if (urgent and rng.random() < 0.35) or rng.random() < 0.05:
        headers.append(("Importance", "High"))
        headers.append(("X-Priority", "1 (Highest)"))
    if (bulk and rng.random() < 0.8) or rng.random() < 0.08:
        headers.append(("List-Unsubscribe", f"<mailto:unsubscribe-{rng.getrandbits(40):x}@{domain_of(envelope)}>"))
    if rng.random() < 0.2:
        headers.append(("Thread-Index", f"AQH{rng.getrandbits(100):x}"[:32]))
    if parts is None:
        r = rng.random()
        parts = "alternative" if r < 0.78 else ("html" if r < 0.9 else "plain")
    spec = Spec(sender=sender, to=to or [(ctx.recipient.name, recipient)], subject=subject, date=ctx.when,
                message_id=mime.message_id(rng, from_domain), blocks=body.blocks, cc=cc or [],
                reply_to=reply_to, return_path=envelope if rng.random() < 0.9 else None,
                in_reply_to=in_reply_to, references=[in_reply_to] if in_reply_to else [],
                received=mime.received_chain(rng, domain_of(envelope), ctx.org.domain, recipient, ctx.when),
                auth_results=auth_header, received_spf=spf_header, extra_headers=headers, quoted=quoted or [],
                attachments=attachments or [], parts=parts,
                cte=rng.choice((None, None, "quoted-printable", "base64")))
    seen: set[str] = set()
    unique = []
    for ind, quote in planted:  # one quote per indicator: recall counts indicators, not quotes
        if ind not in seen:
            seen.add(ind)
            unique.append((ind, quote))
    return Draft(label, family, difficulty, lure, mime.build(spec), unique)


def person_pair(p: Person) -> tuple[str, str]:
    return (p.name, p.email)
