"""The brand knowledge base (:mod:`.brand_data`) as the verifiers read it: which brands a text or a display name
names, and which hosts squat a brand's name.

Three readings, each with its own guard against ordinary text:

- A brand's *name* is a whole phrase of the text, in any case (``paypal``, ``Wells Fargo``), unless the name is an
  ordinary word (``Apple``, ``Chase``): then only as written, capitalised. An *alias* (``Gmail``, ``BofA``) is
  matched as written.
- A *display name* names a brand when it holds a brand's name, or, for a name that is an ordinary word or an
  alias, when everything else in it is a service word (``Apple Support``, ``Chase Online Banking``, ``Teams``),
  so that a person called Chase Miller names no bank. ``Jane via DocuSign`` is judged by what follows ``via``.
- A host *squats* a brand when the brand's name is a whole run of the host's tokens (``paypal.com.verify.ru``,
  ``secure-paypal-login.com``, ``wells-fargo.online``), begins or ends one of them when it is long enough not to be
  an accident (``paypalsecure.com``), all after confusable characters are mapped (``paypa1``, ``rnicrosoft``). Only
  names that are not ordinary words squat (``apple`` is inside too many honest domains).
"""

from __future__ import annotations

import re
from functools import lru_cache

from security_verifiers.envs.phishing.brand_data import KNOWN_BRANDS, Brand
from security_verifiers.envs.phishing.confusables import skeleton

#: Every brand's name and alias -> the domains of that brand (an index of :data:`.brand_data.KNOWN_BRANDS`).
DOMAINS_BY_NAME: dict[str, frozenset[str]] = {}
#: The brand that each name and alias belongs to.
OWNER: dict[str, Brand] = {}
for _brand in KNOWN_BRANDS:
    for _name in (_brand.name, *_brand.aliases):
        DOMAINS_BY_NAME[_name] = frozenset(_brand.domains)
        OWNER[_name] = _brand
#: The domains of each brand, for "do these two domains have one owner".
OWNED: tuple[frozenset[str], ...] = tuple(frozenset(b.domains) for b in KNOWN_BRANDS)
#: Every domain a brand of the knowledge base owns.
BRAND_DOMAINS: frozenset[str] = frozenset(d for b in KNOWN_BRANDS for d in b.domains)

#: Domains a brand owns for its infrastructure (content delivery, mail, APIs) whose names begin with the brand's:
#: genuine, though they would read as squats ("googleapis.com", "paypalobjects.com").
INFRASTRUCTURE = frozenset({
    "googleapis.com", "googleusercontent.com", "googlegroups.com", "google-analytics.com", "googletagmanager.com",
    "googleadservices.com", "googlesyndication.com", "googlevideo.com", "googlemail.com", "gstatic.com",
    "paypalobjects.com", "paypal-community.com", "amazonaws.com", "amazonses.com", "amazon-adsystem.com",
    "amazontrust.com", "media-amazon.com", "ssl-images-amazon.com", "microsoftonline-p.com", "microsoftstore.com",
    "facebookmail.com", "fbcdn.net", "dropboxusercontent.com", "dropboxstatic.com", "githubusercontent.com",
    "githubassets.com", "ebaystatic.com", "ebayimg.com", "ebaydesc.com", "ebayinc.com", "yahooinc.com",
    "yahoodns.net", "adobelogin.com", "zoomgov.com", "oktapreview.com", "okta-emea.com", "youtube-nocookie.com",
    "linkedinmobileapp.com", "netflixtechblog.com", "verizonwireless.com", "twitterinc.com", "instagramstatic.com",
})

#: Words that say who in a company writes, not who the company is: what may stand beside an ordinary-word brand in
#: a display name ("Apple Support", "Chase Fraud Alerts").
SERVICE_WORDS = frozenset("""
support team teams service services customer customers care client clients account accounts billing online banking
bank alert alerts notification notifications notice notices noreply no reply do not info information help desk
helpdesk center centre id pay payment payments card cards mail email e-mail official verification verify security
secure department dept inc llc ltd limited corp corporation co company group the via from your my member members
fraud protection prevention update updates message messages store shop app us uk usa ca au de fr
delivery deliveries shipping tracking express mobile wireless business rewards premium plus prime admin
administrator web access login sign-in signin password system systems assistant community news newsletter
finance financial wallet wallets
""".split())

_WORD = re.compile(r"[\w&'+.-]+")
_TOKEN = re.compile(r"[^\W_]+")


def _phrase(name: str) -> str:
    """A name as a pattern that matches it as a whole phrase, whatever whitespace stands between its words."""
    return r"\s+".join(re.escape(w) for w in name.split())


#: Names matched in any case: those of brands whose name is no ordinary word. Aliases and ordinary-word names are
#: matched as written.
_ANY_CASE = frozenset(n for n, b in OWNER.items() if n == b.name and not b.common_word)
_BOUNDARY = r"(?<![\w&+@.-]){}(?![\w&+-])"
_PATTERNS = {name: re.compile(_BOUNDARY.format(_phrase(name)), re.IGNORECASE if name in _ANY_CASE else 0)
             for name in OWNER}
#: Each name under its first word, lower-cased: a text's words select the few names worth a pattern search.
_BY_FIRST_WORD: dict[str, list[str]] = {}
for _name in OWNER:
    _BY_FIRST_WORD.setdefault(_TOKEN.findall(_name.lower())[0], []).append(_name)
_ORDER = {name: i for i, name in enumerate(OWNER)}
_LOWERED = {name: " ".join(name.split()).lower() for name in OWNER}


def brands_named(text: str) -> list[str]:
    """The names and aliases of the knowledge base that ``text`` holds as whole phrases, in the knowledge base's
    order (ordinary-word names and aliases only as written).

    >>> brands_named("Sign in to your microsoft account; tracking by UPS, not groups; an apple a day")
    ['Microsoft', 'UPS']
    """
    lowered = " ".join(text.split()).lower()
    words = set(_TOKEN.findall(lowered))
    candidates = [name for word in words & _BY_FIRST_WORD.keys() for name in _BY_FIRST_WORD[word]
                  if _LOWERED[name] in lowered]  # a substring first: the pattern runs for few names
    return sorted((name for name in candidates if _PATTERNS[name].search(text)), key=_ORDER.__getitem__)


def brands_in_display_name(display_name: str) -> list[str]:
    """The brands a From display name claims to be (see the module's docstring): ``via`` names the sender."""
    head, via, tail = display_name.rpartition(" via ")
    name = tail if via else display_name
    out = []
    for found in brands_named(name):
        brand = OWNER[found]
        if found == brand.name and not brand.common_word:
            out.append(found)
            continue
        rest = re.sub(_phrase(found), " ", name, count=1)
        if all(w.lower().strip(".,:;!-'\"()[]|") in SERVICE_WORDS or not any(c.isalnum() for c in w)
               for w in _WORD.findall(rest)):
            out.append(found)
    return out


def _squat_key(name: str) -> str:
    return "".join(_TOKEN.findall(name.lower()))


@lru_cache(maxsize=1)
def squat_keys() -> dict[str, Brand]:
    """Each brand name that may squat (not an ordinary word; three letters or more), as the letters of its name
    after the confusable map, with the brand's own domain labels that spell the same name."""
    keys: dict[str, Brand] = {}
    for brand in KNOWN_BRANDS:
        if brand.common_word:
            continue
        key = skeleton(_squat_key(brand.name))
        if len(key) >= 3:
            keys.setdefault(key, brand)
    return keys
