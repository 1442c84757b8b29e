"""Domains and URLs as the verifiers read them: registrable domains (the Public Suffix List, offline), hosts of
URLs written every way mail writes them, and what makes one domain a look-alike of another.

The lists here (URL shorteners, free hosting, free mail, brands, SaaS tenancies) are facts about the world that
the evidence verifiers rely on; they are part of the reward, so they change only with the environment's version.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Collection
from functools import lru_cache
from urllib.parse import parse_qs, urlsplit

import tldextract
from rapidfuzz.distance import OSA

from security_verifiers.envs.phishing.brands import BRAND_DOMAINS, INFRASTRUCTURE, squat_keys
from security_verifiers.envs.phishing.confusables import skeleton

#: The Public Suffix List snapshot bundled with tldextract (never fetched: ``suffix_list_urls=()``).
_EXTRACT = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)

SHORTENERS = frozenset({
    "bit.ly", "bitly.com", "tinyurl.com", "t.co", "goo.gl", "ow.ly", "is.gd", "buff.ly", "rebrand.ly", "cutt.ly",
    "shorturl.at", "rb.gy", "t.ly", "tiny.cc", "bl.ink", "s.id", "v.gd", "qrco.de", "lnkd.in", "shorte.st",
    "adf.ly", "soo.gd", "clck.ru", "u.to", "x.co", "short.io", "tr.im", "urlz.fr", "bit.do", "t2m.io", "cutt.us",
    "shorturl.asia", "tinyurl.at", "rotf.lol", "kutt.it", "shrtco.de", "gg.gg", "ouo.io", "linktr.ee", "lnk.to",
    "bitly.ws", "tiny.one", "2u.pm", "y2u.be", "han.gl", "me2.kr", "vk.cc", "did.li", "qr.net", "url.ie", "zpr.io",
    "s.yam.com", "shorturl.gg", "l.ead.me", "snip.ly", "short.gy", "rebrandly.com",
})
#: Hosts (and host suffixes) where anyone can publish a page or a form for free.
FREE_HOSTING = frozenset({
    "sites.google.com", "forms.gle", "docs.google.com", "storage.googleapis.com", "web.app", "firebaseapp.com",
    "github.io", "netlify.app", "vercel.app", "pages.dev", "workers.dev", "r2.dev", "wixsite.com", "weebly.com",
    "000webhostapp.com", "glitch.me", "ipfs.io", "dweb.link", "blob.core.windows.net", "web.core.windows.net",
    "herokuapp.com", "onrender.com", "repl.co", "replit.app", "webflow.io", "square.site", "godaddysites.com",
    "jimdosite.com", "framer.website", "notion.site", "typeform.com", "jotform.com", "formstack.com", "wordpress.com",
    "blogspot.com", "surge.sh", "fly.dev", "azurewebsites.net", "s3.amazonaws.com", "amplifyapp.com",
    "appspot.com", "firebasestorage.googleapis.com", "translate.goog", "cloudflare-ipfs.com", "w3s.link",
    "nftstorage.link", "fleek.co", "ngrok.io", "ngrok-free.app", "ngrok.app", "trycloudflare.com", "loca.lt",
    "digitaloceanspaces.com", "backblazeb2.com", "myportfolio.com", "mystrikingly.com", "strikingly.com",
    "site123.me", "weeblysite.com", "wixstudio.io", "carrd.co", "canva.site", "my.canva.site", "codesandbox.io",
    "csb.app", "bubbleapps.io", "yolasite.com", "tilda.ws", "ukit.me", "weblium.site", "webwave.me", "glitch.com",
    "pythonanywhere.com", "gitlab.io", "bitbucket.io", "pantheonsite.io", "wpcomstaging.com",
    "forms.office.com", "forms.microsoft.com", "sway.office.com", "sway.cloud.microsoft", "gamma.site",
    "zohopublic.com", "formsite.com", "wufoo.com", "cognitoforms.com", "123formbuilder.com", "paperform.co",
    "tally.so", "hubspotpagebuilder.com", "mailchimpsites.com", "mykajabi.com", "start.page", "webnode.page",
    "webnode.com", "ucoz.net", "narod.ru", "tripod.com", "angelfire.com", "freewebhostmost.com", "infinityfreeapp.com",
    "epizy.com", "rf.gd", "free.nf", "great-site.net", "liveblog365.com", "deno.dev", "on.aws", "lovable.app",
    "framer.app", "ipfs.dweb.link", "run.app", "cloudfunctions.net", "azurestaticapps.net",
})
FREE_MAIL = frozenset({
    "gmail.com", "googlemail.com", "outlook.com", "hotmail.com", "live.com", "msn.com", "yahoo.com", "ymail.com",
    "aol.com", "icloud.com", "me.com", "mail.com", "gmx.com", "gmx.net", "gmx.de", "web.de", "protonmail.com",
    "proton.me", "zoho.com", "yandex.com", "yandex.ru", "mail.ru", "tutanota.com", "fastmail.com", "hey.com",
    "yahoo.co.uk", "hotmail.co.uk", "outlook.fr", "orange.fr", "free.fr", "libero.it", "qq.com", "163.com",
})
#: Registrable domains where an organisation legitimately has its own named sub-domain (a tenant), so its name
#: there is no impersonation.
TENANT_HOSTS = frozenset({
    "sharepoint.com", "onmicrosoft.com", "zendesk.com", "slack.com", "salesforce.com", "force.com", "atlassian.net",
    "okta.com", "service-now.com", "myshopify.com", "freshdesk.com", "myworkday.com", "webex.com", "zoom.us",
    "box.com", "bamboohr.com", "greenhouse.io", "lever.co", "hubspot.com", "mailchimp.com", "list-manage.com",
    "sendgrid.net", "mailgun.org", "mcsv.net", "exacttarget.com", "awstrack.me", "ct.sendgrid.net",
    # identity providers' tenants: an organisation's sign-in page is hosted as its own name there
    # (``dropbox.auth0.com``, ``acme.us.auth0.com``, ``acme.onelogin.com``)
    "auth0.com", "onelogin.com",
})

_HOST = re.compile(r"(?<![\w.-])((?:[\w-]+\.)+[a-z\u00a1-\uffff][\w-]*)(?![\w-])", re.IGNORECASE)
#: What makes a token a host rather than a name that holds a dot: a scheme or ``www.`` before it, an ``@`` (an
#: address), or a path, a port or a query after it.
_URL_BEFORE = re.compile(r"(?:[a-z][a-z0-9+.-]*://|//|@|\bwww\.)$", re.IGNORECASE)
_URL_AFTER = re.compile(r"^(?:[/:?#]|\\)")
#: Public suffixes that are also file extensions people write (``README.md``, ``setup.py``, ``clip.mov``): a bare
#: token ending in one is a file name, unless a URL context says it is a host.
_FILE_SUFFIXES = frozenset({"md", "py", "sh", "pl", "rs", "zip", "mov", "ps", "so", "cc", "cs", "ts", "gz"})


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
    """Every domain of ``text``, lower-cased: hosts of URLs, domains of addresses, and bare tokens that end in a
    public suffix and read as a host (``EmailStart.aspx`` and ``invoice.pdf`` are no domains, nor are a name in
    capitals such as ``ASP.NET`` or a file name such as ``README.md`` unless a URL context makes them one).

    >>> hosts_in("See https://ASP.NET/x, ASP.NET, README.md, www.example.md, mail me at a@b.example.org")
    ('asp.net', 'www.example.md', 'b.example.org')
    """
    out = []
    for m in _HOST.finditer(text):
        token = m.group(1).strip(".")
        host = token.lower()
        if not _has_suffix(host):
            continue
        in_url = _URL_BEFORE.search(text[max(0, m.start(1) - 40):m.start(1)]) or _URL_AFTER.match(text[m.end(1):])
        if not in_url and not host.startswith("www.") and (host.rsplit(".", 1)[-1] in _FILE_SUFFIXES
                                                           or token.isupper()):
            continue
        out.append(host)
    return tuple(out)


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


@lru_cache(maxsize=65536)
def imitates(host: str, genuine: str) -> bool:
    """Whether ``host`` imitates the registrable domain ``genuine`` without being it (nor under it).

    A brand's infrastructure (``media-amazon.com``, ``googlemail.com``) and a tenancy host (``dropbox.auth0.com``,
    ``contoso.sharepoint.com``) imitate nothing, as :func:`squatted_brand` reads them: their names begin with or hold
    a brand's, yet they are genuine. The scorer also keeps them out (``Context.genuine``), but the generator's
    :func:`.world.lookalike` asks this function alone whether its plant is a look-alike the scorer confirms.

    >>> imitates("northwind-1ogistics.com", "northwind-logistics.com"), imitates("paypal.com.verify.ru", "paypal.com")
    (True, True)
    >>> imitates("mail.northwind-logistics.com", "northwind-logistics.com"), imitates("acme.com", "zenith.com")
    (False, False)
    """
    host, genuine = host.lower().strip("."), genuine.lower().strip(".")
    if not genuine or within(host, {genuine}) or within(host, INFRASTRUCTURE) or within(host, TENANT_HOSTS):
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
    if len(b) >= 4:  # the brand's name inside another domain
        return _name_in(host[: len(host) - len(mine)] + own, (b,)) is not None
    return False


#: What impostors glue to a name to make a new domain of it (``paypalsecure``, ``mywellsfargo``): a name that begins
#: or ends a longer token counts only with one of these as the rest (``ttivanguard`` names no Vanguard). ``auth0``
#: is one only glued to a brand's name (``paypalauth0``, posing as a sign-in hosted by Auth0): Auth0's own hosts,
#: tenants included (``dropbox.auth0.com``), are tenancy hosts (:data:`TENANT_HOSTS`), read before any name.
LURE_AFFIXES = frozenset("""
secure security login logon signin signon verify verification verified account accounts support help helpdesk
service services update updates online my web webmail mail portal auth id app apps pay payment payments billing
alert alerts notice notices center centre team official access confirm recovery recover wallet connect check info
client customer customers care review safe protect protection desk admin cloud bank banking card cards tracking track
delivery deliver parcel post express shop store gift reward rewards refund refunds tax gov us usa uk eu en hq inc corp
home www e i m go get the hr payroll docs doc files file share shared sign invoice invoices unlock restore claim
reset password pass key vault auth0 sso mfa 2fa otp 24 365 live net global int intl
""".split())


def _name_in(name: str, names: Collection[str]) -> str | None:
    """The first of ``names`` (skeletons) that ``name`` holds, or ``None``: a name is held when it is a run of whole
    tokens of ``name`` (``paypal.com.verify`` and ``northwind-logistics-billing`` name their brands; ``purchase`` does
    not name ``chase``), or, six letters or more (long enough not to be an accident), when it starts or ends a token
    whose rest is a lure's affix (``paypalsecure``).

    Why one helper: a host is asked whether it names one domain's owner (:func:`imitates`) and whether it names any
    brand of the knowledge base (:func:`squatted_brand`); both must read a name inside a host the same way, or the
    two verdicts drift apart. It lives here, not in :mod:`.brands`, because it reads the lure affixes, which are
    this module's (:mod:`.brands` comes first: this module reads its tables)."""
    tokens = [skeleton(t) for t in re.split(r"[.\-_]", name) if t]
    longest = max(map(len, names), default=0)
    for i in range(len(tokens)):
        joined = ""
        for token in tokens[i:]:
            joined += token
            if joined in names:
                return joined
            if len(joined) >= longest:
                break
    for token in tokens:  # the name begins or ends a longer token, with a lure's affix: "paypalsecure", "mywellsfargo"
        for cut in range(6, len(token)):
            if token[:cut] in names and _affix(token[cut:]):
                return token[:cut]
            if token[-cut:] in names and _affix(token[:-cut]):
                return token[-cut:]
    return None


def _affix(rest: str) -> bool:
    """Whether ``rest`` (a skeleton) is a lure's affix, or two of them (``secureonline``)."""
    affixes = _AFFIX_SKELETONS
    return rest in affixes or any(rest[:i] in affixes and rest[i:] in affixes for i in range(1, len(rest)))


@lru_cache(maxsize=65536)
def squatted_brand(host: str) -> str | None:
    """The name of the knowledge base's brand whose name ``host`` squats (:mod:`.brands`), or ``None``: none, or
    the host is the brand's own, a tenancy host or a brand's infrastructure.

    >>> [squatted_brand(h) for h in ("paypal.com.verify-id.ru", "secure-paypa1-login.com", "paypalsecure.net")]
    ['PayPal', 'PayPal', 'PayPal']
    >>> [squatted_brand(h) for h in ("www.paypal.com", "groups.example.org", "contoso.sharepoint.com")]
    [None, None, None]
    """
    host = host.lower().strip(".")
    if not host or is_ip(host) or within(host, BRAND_DOMAINS) or within(host, INFRASTRUCTURE) \
            or within(host, TENANT_HOSTS):
        return None
    mine = registrable(host)
    keys = squat_keys()
    found = _name_in(host[: len(host) - len(mine)] + _label(mine), keys)
    return None if found is None else keys[found].name


def country_variant(host: str) -> bool:
    """Whether ``host`` is a brand's own name under a country's suffix (``gmx.co.uk``, ``tesco.ie``, ``amazon.de``):
    brands hold their names in the countries they serve, while impostors pick generic suffixes (``paypal.help``)."""
    mine = registrable(host)
    suffix = mine.partition(".")[2]
    return len(suffix.rpartition(".")[2]) == 2 and _label(mine) in _BRAND_LABELS


_AFFIX_SKELETONS = frozenset(skeleton(a) for a in LURE_AFFIXES)
#: The names (labels before the suffix) of every brand's domains, e.g. ``paypal`` and ``gmx``.
_BRAND_LABELS = frozenset(_label(d) for d in BRAND_DOMAINS)
