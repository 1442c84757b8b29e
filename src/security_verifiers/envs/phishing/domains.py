"""Domains and URLs as the verifiers read them: registrable domains (the Public Suffix List, offline), hosts of
URLs written every way mail writes them, and what makes one domain a look-alike of another.

The lists here (URL shorteners, free hosting, free mail, brands, SaaS tenancies) are facts about the world that
the evidence verifiers rely on; they are part of the reward, so they change only with the environment's version.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from functools import lru_cache
from urllib.parse import parse_qs, urlsplit

import tldextract
from rapidfuzz.distance import OSA

#: The Public Suffix List snapshot bundled with tldextract (never fetched: ``suffix_list_urls=()``).
_EXTRACT = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)

SHORTENERS = frozenset({
    "bit.ly", "bitly.com", "tinyurl.com", "t.co", "goo.gl", "ow.ly", "is.gd", "buff.ly", "rebrand.ly", "cutt.ly",
    "shorturl.at", "rb.gy", "t.ly", "tiny.cc", "bl.ink", "s.id", "v.gd", "qrco.de", "lnkd.in", "shorte.st",
    "adf.ly", "soo.gd", "clck.ru", "u.to", "x.co", "short.io", "tr.im", "urlz.fr",
})
#: Hosts (and host suffixes) where anyone can publish a page or a form for free.
FREE_HOSTING = frozenset({
    "sites.google.com", "forms.gle", "docs.google.com", "storage.googleapis.com", "web.app", "firebaseapp.com",
    "github.io", "netlify.app", "vercel.app", "pages.dev", "workers.dev", "r2.dev", "wixsite.com", "weebly.com",
    "000webhostapp.com", "glitch.me", "ipfs.io", "dweb.link", "blob.core.windows.net", "web.core.windows.net",
    "herokuapp.com", "onrender.com", "repl.co", "replit.app", "webflow.io", "square.site", "godaddysites.com",
    "jimdosite.com", "framer.website", "notion.site", "typeform.com", "jotform.com", "formstack.com", "wordpress.com",
    "blogspot.com", "surge.sh", "fly.dev", "azurewebsites.net", "s3.amazonaws.com", "amplifyapp.com",
})
FREE_MAIL = frozenset({
    "gmail.com", "googlemail.com", "outlook.com", "hotmail.com", "live.com", "msn.com", "yahoo.com", "ymail.com",
    "aol.com", "icloud.com", "me.com", "mail.com", "gmx.com", "gmx.net", "gmx.de", "web.de", "protonmail.com",
    "proton.me", "zoho.com", "yandex.com", "yandex.ru", "mail.ru", "tutanota.com", "fastmail.com", "hey.com",
    "yahoo.co.uk", "hotmail.co.uk", "outlook.fr", "orange.fr", "free.fr", "libero.it", "qq.com", "163.com",
})
#: Well-known brands impostors use, by name (as mail names them) and their own registrable domains.
BRANDS: dict[str, frozenset[str]] = {name: frozenset(domains) for name, domains in {
    "Microsoft": ("microsoft.com", "office.com", "office365.com", "live.com", "outlook.com", "microsoftonline.com",
                  "sharepoint.com", "onmicrosoft.com", "azure.com", "msft.net"),
    "Office 365": ("microsoft.com", "office.com", "office365.com", "microsoftonline.com"),
    "Outlook": ("outlook.com", "microsoft.com", "live.com", "office.com"),
    "OneDrive": ("onedrive.com", "live.com", "microsoft.com", "sharepoint.com"),
    "SharePoint": ("sharepoint.com", "microsoft.com"),
    "Google": ("google.com", "gmail.com", "googlemail.com", "youtube.com", "googleusercontent.com"),
    "Apple": ("apple.com", "icloud.com", "me.com"),
    "Amazon": ("amazon.com", "amazon.co.uk", "amazon.de", "amazonses.com", "aws.amazon.com"),
    "PayPal": ("paypal.com", "paypal.me"),
    "DocuSign": ("docusign.com", "docusign.net"),
    "Dropbox": ("dropbox.com", "dropboxmail.com"),
    "Adobe": ("adobe.com", "adobesign.com", "echosign.com"),
    "DHL": ("dhl.com", "dhl.de", "dhl.co.uk"),
    "FedEx": ("fedex.com",),
    "UPS": ("ups.com",),
    "USPS": ("usps.com",),
    "LinkedIn": ("linkedin.com",),
    "Facebook": ("facebook.com", "facebookmail.com", "meta.com"),
    "Netflix": ("netflix.com",),
    "Zoom": ("zoom.us", "zoom.com"),
    "Slack": ("slack.com",),
    "Salesforce": ("salesforce.com", "force.com"),
    "Okta": ("okta.com", "oktacdn.com"),
    "Wells Fargo": ("wellsfargo.com",),
    "Chase": ("chase.com", "jpmorgan.com"),
    "Bank of America": ("bankofamerica.com", "bofa.com"),
    "HSBC": ("hsbc.com", "hsbc.co.uk"),
    "Coinbase": ("coinbase.com",),
    "Stripe": ("stripe.com",),
    "Intuit": ("intuit.com", "quickbooks.com"),
    "Xero": ("xero.com",),
    "Atlassian": ("atlassian.com", "atlassian.net"),
    "GitHub": ("github.com",),
    "Workday": ("workday.com", "myworkday.com"),
    "ADP": ("adp.com",),
}.items()}
#: Each brand's name as a whole word; all-capital names such as ``UPS`` and ``DHL`` in capitals only, so that "ups"
#: in "groups" or "chase" in "purchase" names nothing.
_BRAND_PATTERNS = {name: re.compile(rf"\b{re.escape(name)}\b", 0 if name.isupper() else re.IGNORECASE)
                   for name in BRANDS}


def brands_named(text: str) -> list[str]:
    """The brands of :data:`BRANDS` that ``text`` names, in the order of :data:`BRANDS` (a substring test first:
    most texts name few brands, and the word-boundary pattern runs only for those).

    >>> brands_named("Sign in to your microsoft account; tracking by UPS, not groups")
    ['Microsoft', 'UPS']
    """
    lowered = text.lower()
    return [name for name, pattern in _BRAND_PATTERNS.items() if name.lower() in lowered and pattern.search(text)]


#: Registrable domains where an organisation legitimately has its own named sub-domain (a tenant), so its name
#: there is no impersonation.
TENANT_HOSTS = frozenset({
    "sharepoint.com", "onmicrosoft.com", "zendesk.com", "slack.com", "salesforce.com", "force.com", "atlassian.net",
    "okta.com", "service-now.com", "myshopify.com", "freshdesk.com", "myworkday.com", "webex.com", "zoom.us",
    "box.com", "bamboohr.com", "greenhouse.io", "lever.co", "hubspot.com", "mailchimp.com", "list-manage.com",
    "sendgrid.net", "mailgun.org", "mcsv.net", "exacttarget.com", "awstrack.me", "ct.sendgrid.net",
})

_HOST = re.compile(r"(?<![\w.-])((?:[\w-]+\.)+[a-z\u00a1-\uffff][\w-]*)(?![\w-])", re.IGNORECASE)
#: Confusable characters as the Latin letter they pass for (Cyrillic, Greek, digits and letter pairs).
_CONFUSABLE = str.maketrans({
    "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "х": "x", "у": "y", "і": "i", "ј": "j", "ԁ": "d", "ɡ": "g",
    "ո": "n", "ս": "u", "ο": "o", "ν": "v", "ρ": "p", "α": "a", "ι": "i", "κ": "k", "τ": "t", "ѕ": "s", "һ": "h",
    "ӏ": "l", "ԛ": "q", "ԝ": "w", "0": "o", "1": "l", "3": "e", "5": "s", "7": "t", "i": "l", "ı": "l", "ł": "l",
})
_PAIRS = (("rn", "m"), ("vv", "w"), ("cl", "d"), ("nn", "m"))


def host_of(url: str) -> str:
    """The lower-cased host of a URL as mail writes it (with or without a scheme, with user info or a port)."""
    url = url.strip().strip("<>\"'")
    if "://" not in url[:12]:
        url = "http://" + url
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return ""
    return host.strip(".").lower()


@lru_cache(maxsize=16384)
def hosts_in(text: str) -> tuple[str, ...]:
    """Every domain of ``text`` (hosts of URLs, domains of addresses, bare domains), lower-cased: tokens that end
    in a public suffix (``EmailStart.aspx`` and ``invoice.pdf`` are not domains)."""
    return tuple(host for m in _HOST.finditer(text) if _has_suffix(host := m.group(1).lower().strip(".")))


@lru_cache(maxsize=65536)
def _has_suffix(host: str) -> bool:
    return bool(_EXTRACT(_ascii(host)).suffix)


def _ascii(host: str) -> str:
    """A host in its ASCII (punycode) form, as the Public Suffix List is written; as it is if it cannot be one."""
    try:
        return host.encode("idna").decode("ascii") if not host.isascii() else host
    except UnicodeError:
        return host


@lru_cache(maxsize=65536)
def registrable(host: str) -> str:
    """The registrable domain (``a.b.example.co.uk`` -> ``example.co.uk``); the host itself for an IP or a
    name without a public suffix."""
    host = host.lower().strip(".")
    if is_ip(host):
        return host
    parts = _EXTRACT(_ascii(host))
    return parts.top_domain_under_public_suffix or host


def is_ip(host: str) -> bool:
    """An IP literal, also the forms browsers accept: one decimal or hexadecimal number, dotted octal."""
    host = host.strip("[]")
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        pass
    if re.fullmatch(r"(0x[0-9a-f]+|\d{8,10})", host, re.IGNORECASE):
        return True
    return bool(re.fullmatch(r"(0[0-7]*|0x[0-9a-f]+|\d+)(\.(0[0-7]*|0x[0-9a-f]+|\d+)){3}", host, re.IGNORECASE))


def within(host: str, domains: frozenset[str] | set[str]) -> bool:
    """Whether ``host`` is one of ``domains`` or a sub-domain of one."""
    host = host.lower().strip(".")
    while host:  # the host, then each parent domain
        if host in domains:
            return True
        host = host.partition(".")[2]
    return False


def is_shortener(host: str) -> bool:
    return within(host, SHORTENERS)


def is_free_hosting(host: str, path: str = "") -> bool:
    if host in ("docs.google.com",):
        return path.startswith("/forms")
    return within(host, FREE_HOSTING)


def is_free_mail(domain: str) -> bool:
    return registrable(domain) in FREE_MAIL or domain.lower() in FREE_MAIL


def oauth_scopes(url: str) -> list[str] | None:
    """The scopes an OAuth authorize URL of Microsoft or Google asks for, or ``None`` when it is not one."""
    try:
        parts = urlsplit(url if "://" in url else "https://" + url)
    except ValueError:
        return None
    host, path = (parts.hostname or "").lower(), parts.path.lower()
    microsoft = host in ("login.microsoftonline.com", "login.live.com", "login.windows.net") \
        and "oauth2" in path and "authorize" in path
    google = host == "accounts.google.com" and ("/o/oauth2" in path or "/signin/oauth" in path)
    if not (microsoft or google):
        return None
    query = parse_qs(parts.query)
    if "client_id" not in query or "scope" not in query:
        return None
    return " ".join(query["scope"]).split()


def _label(domain: str) -> str:
    """The part of a registrable domain before its public suffix, in Unicode (punycode decoded)."""
    name = domain.split(".")[0]
    if name.startswith("xn--"):
        try:
            name = name.encode("ascii").decode("idna")
        except UnicodeError:
            pass
    return name


def skeleton(name: str) -> str:
    """What a name looks like: accents stripped, confusables mapped, letter pairs that pass for one letter merged,
    hyphens dropped (``nort1-hwind`` -> ``northwlnd``; ``l`` and ``i`` both read ``l``)."""
    name = unicodedata.normalize("NFKD", name.lower())
    name = "".join(c for c in name if not unicodedata.combining(c)).translate(_CONFUSABLE)
    for pair, letter in _PAIRS:
        name = name.replace(pair, letter)
    return name.replace("-", "").replace("_", "")


@lru_cache(maxsize=65536)
def imitates(host: str, genuine: str) -> bool:
    """Whether ``host`` imitates the registrable domain ``genuine`` without being it (nor under it).

    >>> imitates("northwind-1ogistics.com", "northwind-logistics.com"), imitates("paypal.com.verify.ru", "paypal.com")
    (True, True)
    >>> imitates("mail.northwind-logistics.com", "northwind-logistics.com"), imitates("acme.com", "zenith.com")
    (False, False)
    """
    host, genuine = host.lower().strip("."), genuine.lower().strip(".")
    if not genuine or within(host, {genuine}):
        return False
    mine = registrable(host)
    if not mine or mine == genuine:
        return False
    own, theirs = _label(mine), _label(genuine)
    if len(theirs) < 3:
        return False
    if own == theirs:  # the same name under another public suffix
        return True
    a, b = skeleton(own), skeleton(theirs)
    if a == b:
        return True
    plain_own, plain_theirs = own.lower().replace("-", ""), theirs.lower().replace("-", "")
    allowed = 2 if len(b) >= 9 else 1
    if len(b) >= 5 and min(abs(len(a) - len(b)), abs(len(plain_own) - len(plain_theirs))) <= allowed \
            and min(OSA.distance(a, b), OSA.distance(plain_own, plain_theirs)) <= allowed:
        return True
    if len(b) >= 4 and mine not in TENANT_HOSTS:  # the brand's name inside another domain
        return _named_inside(host[: len(host) - len(mine)] + own, b)
    return False


def _named_inside(name: str, brand: str) -> bool:
    """Whether the skeleton ``brand`` is a run of whole tokens of ``name`` (``paypal.com.verify`` and
    ``northwind-logistics-billing`` name their brands; ``purchase`` does not name ``chase``), or starts or ends a
    token when it is long enough not to be an accident (``paypalsecure``)."""
    tokens = [skeleton(t) for t in re.split(r"[.\-_]", name) if t]
    for i in range(len(tokens)):
        joined = ""
        for token in tokens[i:]:
            joined += token
            if joined == brand:
                return True
            if len(joined) >= len(brand):
                break
    return len(brand) >= 6 and any(len(t) > len(brand) and (t.startswith(brand) or t.endswith(brand))
                                   for t in tokens)
