"""The evidence verifiers: does a quote, under an indicator, really show that indicator in this email?

Every check starts from the segments that hold the quote (:meth:`.render.Rendering.locate`), so a quote is
judged where it stands: a look-alike domain must be a whole host written in the email (a quote cut through a
domain names no domain), a spoofed display name must be quoted from the From header, a failing result from
Authentication-Results. Structural indicators are decided from the parsed message alone; language indicators
only against the generator's planted spans (and, on imported mail, not at all: :func:`scored`).

:func:`detect` finds every structural indicator code can confirm in an email, with a quote for each: the
"planted" indicators of imported mail, the heuristic baseline's evidence, and a self-check (what it finds, the
verifier confirms).
"""

from __future__ import annotations

import copy
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from urllib.parse import unquote

from security_verifiers.envs.phishing.brands import (
    BRAND_DOMAINS,
    DOMAINS_BY_NAME,
    INFRASTRUCTURE,
    OWNED,
    brands_in_display_name,
    brands_named,
)
from security_verifiers.envs.phishing.domains import (
    TENANT_HOSTS,
    country_variant,
    host_of,
    hosts_in,
    imitates,
    is_free_hosting,
    is_free_mail,
    is_ip,
    is_shortener,
    oauth_scopes,
    registrable,
    squatted_brand,
    within,
)
from security_verifiers.envs.phishing.indicators import INDICATORS, LANGUAGE
from security_verifiers.envs.phishing.items import Mailbox, Planted
from security_verifiers.envs.phishing.message import URL, Address, Email, Link, collapse
from security_verifiers.envs.phishing.render import Rendering, Segment, render

_FAILING = re.compile(r"\b(spf|dkim|dmarc|arc|compauth)\s*=\s*(fail|softfail|permerror|hardfail)\b", re.IGNORECASE)
_SPF_FAIL = re.compile(r"^received-spf:\s*(fail|softfail)\b", re.IGNORECASE)
_ROLE = re.compile(r"\b(it|help ?desk|service ?desk|tech(nical)? support|support team|administrator|admin|security "
                   r"(team|department|alert)|payroll|hr|human resources|ceo|cfo|coo|president|chief executive|"
                   r"finance|accounts (payable|receivable)|billing|postmaster|mail(box)? (admin|delivery)|"
                   r"webmaster|system administrator)\b", re.IGNORECASE)
_CREDENTIAL_WORDS = re.compile(r"log-?in|sign-?in|sign in|log in|verif|account|passw|auth|sso|mfa|secure|validat|"
                               r"update|webmail|mailbox|portal|credential|unlock|reactivat|confirm|"
                               r"(view|review|access|open|download)\W+(the\W+)?(shared\W+)?(document|file|invoice|"
                               r"statement|message|voicemail|fax|pdf)|voicemail|e-?fax|shared (document|file)|"
                               r"invoice|payment|refund|claim|redeliver|parcel|wallet|recover", re.IGNORECASE)
_RISKY_EXTENSION = re.compile(
    r"\.(html?|shtml|svg|xht|xhtml|mht|mhtml|exe|scr|com|pif|js|jse|vbs|vbe|wsf|wsh|hta|bat|cmd|ps1|jar|msi|lnk|"
    r"iso|img|vhd|vhdx|one|docm|xlsm|pptm|dotm|xlam|reg|cpl|chm|appx|url)$", re.IGNORECASE)
_DOUBLE_EXTENSION = re.compile(r"\.(pdf|docx?|xlsx?|jpe?g|png|txt|csv|rtf)\s*\.[a-z0-9]{2,5}$", re.IGNORECASE)
_SENDER_HEADERS = frozenset({"From", "Sender", "Reply-To", "Return-Path"})
#: Every known brand's domains, their infrastructure and the tenancy hosts: genuine in any email.
_ALWAYS_GENUINE = BRAND_DOMAINS | INFRASTRUCTURE | TENANT_HOSTS
#: What a form field asks for when it asks for a secret: its type or its name.
_SECRET_FIELD = re.compile(r"passw|passwd|pwd|passcode|\bpass\b|\bpin\b|otp|one[-_ ]?time|2fa|mfa|verification[-_ ]?"
                           r"code|security[-_ ]?code|cvv|cvc|csc|card[-_ ]?(number|no|num)|\bcc[-_]?(num|number)|"
                           r"expir|ssn|social[-_ ]?security|secret|token", re.IGNORECASE)


@dataclass
class Context:
    """One email and what its evidence is judged against (built once per item, then reused for every answer)."""

    mail: Email
    mailbox: Mailbox | None = None
    #: What the scorer knows and a policy does not (the item's target): see :meth:`judged`.
    planted: Sequence[Planted] = ()
    imported: bool = False

    @cached_property
    def rendering(self) -> Rendering:
        return render(self.mail)

    def judged(self, planted: Sequence[Planted], imported: bool) -> Context:
        """This context with the target's facts, for the scorer; the parsed email and everything derived from it
        so far are shared, not recomputed."""
        out = copy.copy(self)
        out.planted, out.imported = tuple(planted), imported
        return out

    @cached_property
    def references(self) -> frozenset[str]:
        """The genuine domains the email is measured against: the recipient organisation's and its partners', the
        domains it is addressed to (not free mail), and those of every well-known brand it names."""
        out: set[str] = set()
        if self.mailbox is not None:
            out.update(d.lower() for d in self.mailbox.domains)
            for partner in self.mailbox.partners:
                out.update(d.lower() for d in partner.domains)
        out.update(registrable(a.domain) for a in self.mail.to if a.domain and not is_free_mail(a.domain))
        for name in self.named_brands:
            out.update(DOMAINS_BY_NAME[name])
        return frozenset(d for d in out if d)

    @cached_property
    def genuine(self) -> frozenset[str]:
        """Domains that are never a look-alike: the references, every known brand's, and the tenancy hosts."""
        return self.references | _ALWAYS_GENUINE

    def imitation(self, host: str) -> bool:
        """Whether ``host`` imitates a reference domain, or squats the name of a brand of the knowledge base,
        without being a genuine domain (remembered per host)."""
        known = self._imitations.get(host)
        if known is None:
            known = not within(host, self.genuine) and not country_variant(host) \
                and (any(imitates(host, g) for g in self.references) or squatted_brand(host) is not None)
            self._imitations[host] = known
        return known

    @cached_property
    def _imitations(self) -> dict[str, bool]:
        return {}

    def same_owner(self, a: str, b: str) -> bool:
        """Whether two registrable domains belong to one organisation this context knows (``docusign.com`` and
        ``docusign.net``; a partner's two domains)."""
        if a == b:
            return True
        groups: list[frozenset[str]] = list(OWNED)
        if self.mailbox is not None:
            groups.append(frozenset(d.lower() for d in self.mailbox.domains))
            groups += [frozenset(d.lower() for d in p.domains) for p in self.mailbox.partners]
        return any(within(a, g) and within(b, g) for g in groups)

    @cached_property
    def named_brands(self) -> tuple[str, ...]:
        return tuple(brands_named(self.rendering.text))

    @cached_property
    def sender_domain(self) -> str:
        return registrable(self.mail.sender.domain) if self.mail.sender and self.mail.sender.domain else ""

    @cached_property
    def spoofed_name(self) -> str | None:
        """The From display name, when it claims an identity its address does not belong to."""
        sender = self.mail.sender
        if sender is None or not sender.display_name:
            return None
        if not sender.domain:  # a name with no address (or one with no domain) names a brand it cannot be from
            return sender.display_name if brands_in_display_name(_spaced(sender.display_name)) else None
        name, domain = sender.display_name, self.sender_domain
        for host in hosts_in(name):  # an address, or a brand's or a reference's domain, of another domain
            if registrable(host) != domain and ("@" in name or within(host, BRAND_DOMAINS | self.references)):
                return name
        owners = self._organisations_named(name)
        if owners and not any(within(domain, domains) for domains in owners):
            return name
        if self.mailbox is not None and not within(domain, set(self.mailbox.domains)):
            if any(_names(person, name) for person in self.mailbox.people):
                return name
        if _ROLE.search(name) and is_free_mail(domain):
            return name
        return None

    def _organisations_named(self, text: str) -> list[frozenset[str]]:
        """The domains of each organisation (recipient, partner, brand) whose name ``text`` contains."""
        found: list[frozenset[str]] = []
        if self.mailbox is not None:
            if _names(self.mailbox.organisation, text):
                found.append(frozenset(d.lower() for d in self.mailbox.domains))
            found += [frozenset(d.lower() for d in p.domains) for p in self.mailbox.partners if _names(p.name, text)]
        found += [DOMAINS_BY_NAME[b] for b in brands_in_display_name(_spaced(text))]
        return found

    @cached_property
    def detected(self) -> list[tuple[str, str]]:
        """:func:`detect` of this email, computed once."""
        return detect(self)

    @cached_property
    def list_domains(self) -> frozenset[str]:
        """The registrable domains of the mailing list the message came through (its List-Id)."""
        return frozenset(registrable(h) for h in hosts_in(self.mail.header("List-Id")))

    def mailing_list(self, address: Address) -> bool:
        """Whether ``address`` is the list's: of the List-Id's domain, or one the message was sent to."""
        return registrable(address.domain) in self.list_domains \
            or any(address.address.lower() == a.address.lower() for a in self.mail.to)

    def link(self, segment: Segment) -> Link:
        return self.mail.links[segment.index]


def _spaced(name: str) -> str:
    """A name as a filter-dodging sender writes it, read plainly: letters spaced out (``T E M U``) as one word,
    combining marks and symbols (``UPS̷®``) dropped, compatibility forms (full-width, ligatures) folded."""
    name = "".join(c for c in unicodedata.normalize("NFKD", name)
                   if not unicodedata.combining(c) and unicodedata.category(c) not in ("So", "Sk", "Mn", "Cf"))
    return re.sub(r"\b(?:\w ){2,}\w\b", lambda m: m.group(0).replace(" ", ""), name)


def _names(name: str, text: str) -> bool:
    return bool(name.strip()) and _name_pattern(collapse(name)).search(collapse(text)) is not None


@lru_cache(maxsize=4096)
def _name_pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"\b{re.escape(name)}\b", re.IGNORECASE)


def _quoted_hosts(quote: str, segment: Segment) -> set[str]:
    """The whole hosts of ``segment`` that ``quote`` contains (a host cut by the quote's edge is not one)."""
    return set(hosts_in(quote)) & set(hosts_in(segment.text))


def _urls(segment: Segment, ctx: Context) -> list[tuple[str, str]]:
    """The URLs of a link or body segment with the text they are shown with: (url, text)."""
    if segment.kind == "link":
        link = ctx.link(segment)
        return [(link.href, link.text)]
    if segment.kind == "body":
        return [(u.rstrip(".,;:!?'\""), u) for u in URL.findall(segment.text)]
    return []


# -- one verifier per structural indicator: (quote, its segment, the context) -> confirmed -------------------------
def _lookalike(quote: str, segment: Segment, ctx: Context) -> bool:
    if not (segment.kind in ("link", "body") or segment.name in _SENDER_HEADERS):
        return False
    return any(ctx.imitation(host) for host in _quoted_hosts(quote, segment))


def _display_name(quote: str, segment: Segment, ctx: Context) -> bool:
    return segment.name == "From" and ctx.spoofed_name is not None and collapse(ctx.spoofed_name) in quote


def _reply_to(quote: str, segment: Segment, ctx: Context) -> bool:
    """A reply that goes to another domain than the sender's, unless it goes to the mailing list the message came
    through (its List-Id's domain, or an address the message was sent to): lists set Reply-To to themselves."""
    if segment.name != "Reply-To" or not ctx.sender_domain:
        return False
    lowered = quote.lower()
    return any(a.domain and registrable(a.domain) != ctx.sender_domain and not ctx.mailing_list(a)
               and (a.address.lower() in lowered or a.domain in hosts_in(quote)) for a in ctx.mail.reply_to)


def _auth(quote: str, segment: Segment, ctx: Context) -> bool:
    if segment.name == "Authentication-Results":
        return _FAILING.search(quote) is not None
    if segment.name == "Received-SPF":
        return _SPF_FAIL.match(segment.text) is not None and re.search(r"\b(soft)?fail\b", quote, re.I) is not None
    return False


def _link_text(quote: str, segment: Segment, ctx: Context) -> bool:
    if segment.kind != "link":
        return False
    link = ctx.link(segment)
    if link.text == link.href:
        return False
    target = host_of(link.href)
    carried = unquote(unquote(link.href.split("?", 1)[1].lower())) if "?" in link.href else ""
    shown = [h for h in hosts_in(link.text) if not ctx.same_owner(registrable(h), registrable(target))
             and registrable(h) not in carried]  # a click-tracker that carries its destination shows it honestly
    if not target or not shown:
        return False
    quoted = set(hosts_in(quote))
    return target in quoted or bool(quoted & set(shown))


def _ip_or_shortener(quote: str, segment: Segment, ctx: Context) -> bool:
    lowered = quote.lower()
    for url, _ in _urls(segment, ctx):
        host = host_of(url)
        if host and (is_ip(host) or is_shortener(host)) and re.search(rf"(?<![\w.-]){re.escape(host)}(?![\w-])",
                                                                      lowered):
            return True
    return False


def _free_hosting(quote: str, segment: Segment, ctx: Context) -> bool:
    quoted = set(hosts_in(quote))
    for url, text in _urls(segment, ctx):
        host = host_of(url)
        path = url.split(host, 1)[-1] if host else ""
        if host in quoted and is_free_hosting(host, path.split("?")[0]) \
                and _CREDENTIAL_WORDS.search(path + " " + text):
            return True
    return False


def _oauth(quote: str, segment: Segment, ctx: Context) -> bool:
    if segment.kind != "link":
        return False
    href = ctx.link(segment).href
    return bool(oauth_scopes(href)) and host_of(href) in hosts_in(quote)


def _credential_form(quote: str, segment: Segment, ctx: Context) -> bool:
    """A form that asks for a secret, quoted by that field or by where the form sends it."""
    if segment.kind != "form":
        return False
    form = ctx.mail.forms[segment.index]
    secrets = [f for f in form.fields if _SECRET_FIELD.search(f)]
    target = host_of(form.action) if "://" in form.action or form.action.startswith("//") else ""
    return bool(secrets) and (any(f in quote for f in secrets) or bool(target and target in hosts_in(quote)))


def risky_name(name: str) -> bool:
    return bool(_RISKY_EXTENSION.search(name.strip()) or _DOUBLE_EXTENSION.search(name.strip()))


def _attachment(quote: str, segment: Segment, ctx: Context) -> bool:
    if segment.kind != "attachment":
        return False
    attachment = ctx.mail.attachments[segment.index]
    return risky_name(attachment.name) and collapse(attachment.name) in quote


STRUCTURAL_VERIFIERS: dict[str, Callable[[str, Segment, Context], bool]] = {
    "lookalike_domain": _lookalike, "display_name_spoof": _display_name, "reply_to_mismatch": _reply_to,
    "auth_failure": _auth, "link_text_mismatch": _link_text, "ip_or_shortener_url": _ip_or_shortener,
    "free_hosting_credential_page": _free_hosting, "oauth_consent_lure": _oauth, "risky_attachment": _attachment,
    "credential_form": _credential_form,
}
assert set(STRUCTURAL_VERIFIERS) | LANGUAGE == set(INDICATORS), "every indicator has a verifier"


def scored(indicator: str, ctx: Context) -> bool:
    """Whether evidence under ``indicator`` is judged at all: language indicators are not on imported mail."""
    return not (ctx.imported and indicator in LANGUAGE)


def confirm(indicator: str, quote: str, ctx: Context) -> bool:
    """Whether ``quote`` is in the email (inside one segment) and shows ``indicator`` there."""
    quote = collapse(quote)
    segments = ctx.rendering.locate(quote) if any(c.isalnum() for c in quote) else []
    if not segments or indicator not in INDICATORS:
        return False
    if indicator in LANGUAGE:
        return any(_covers(quote, collapse(p.quote)) for p in ctx.planted if p.indicator == indicator)
    verifier = STRUCTURAL_VERIFIERS[indicator]
    return any(verifier(quote, segment, ctx) for segment in segments)


def _covers(quote: str, span: str) -> bool:
    """A quote covers a planted span when it holds all of it, or at least half of it and nothing outside it."""
    return span in quote or (quote in span and 2 * len(quote) >= len(span))


def detect(ctx: Context) -> list[tuple[str, str]]:
    """Every structural indicator code can confirm in the email, each with one quote: ``[(indicator, quote)]``,
    one per indicator, in the taxonomy's order."""
    candidates: dict[str, list[str]] = {k: [] for k in STRUCTURAL_VERIFIERS}
    for segment in ctx.rendering.segments:
        if segment.kind in ("link", "body") or segment.name in _SENDER_HEADERS:
            candidates["lookalike_domain"] += list(hosts_in(segment.text))
        if segment.kind in ("link", "body"):
            for url, _ in _urls(segment, ctx):
                host = host_of(url)
                for indicator in ("ip_or_shortener_url", "free_hosting_credential_page", "oauth_consent_lure"):
                    candidates[indicator].append(host)
                if segment.kind == "link":
                    candidates["link_text_mismatch"].append(host)
        if segment.name in ("Authentication-Results", "Received-SPF"):
            candidates["auth_failure"] += [m.group(0) for m in _FAILING.finditer(segment.text)]
            if _SPF_FAIL.match(segment.text):
                candidates["auth_failure"].append(segment.text.split()[0] + " " + segment.text.split()[1])
        if segment.kind == "attachment":
            candidates["risky_attachment"].append(ctx.mail.attachments[segment.index].name)
        if segment.kind == "form":
            candidates["credential_form"].append(segment.text)
    if ctx.spoofed_name:
        candidates["display_name_spoof"].append(ctx.spoofed_name)
    candidates["reply_to_mismatch"] += [a.address for a in ctx.mail.reply_to if a.address]
    found = []
    for indicator, quotes in candidates.items():
        quote = next((q for q in dict.fromkeys(quotes) if q and confirm(indicator, q, ctx)), None)
        if quote is not None:
            found.append((indicator, collapse(quote)))
    return found
