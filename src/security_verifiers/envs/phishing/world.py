"""The fictional world the E4 generator writes mail in: organisations with staff and partners, the real-world
services that send SaaS notices, free-mail providers, and the look-alike domains impostors register.

Two disjoint sets of organisations (and of their partners): one for train/dev/test and one for the ``ood``
split, so an OOD item never names a company seen in training. Service brands (Microsoft, DocuSign, UPS...) are
real because real mail names them; every organisation, person and partner is invented.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from security_verifiers.envs.phishing.brands import BRAND_DOMAINS
from security_verifiers.envs.phishing.domains import imitates

FIRST_NAMES = (
    "Dana", "Marcus", "Priya", "Tomás", "Zoë", "Søren", "Łukasz", "Aoife", "François", "Björn", "Chloé", "Renée",
    "Kwame", "Mei", "Rafael", "Ingrid", "Omar", "Hannah", "Diego", "Yuki", "Fatima", "Connor", "Elif", "Nikolai",
    "Grace", "Mateo", "Amara", "Felix", "Leila", "Jonas", "Siobhan", "Arjun", "Camille", "Tobias", "Nadia", "Ethan",
    "Lucía", "Henrik", "Imani", "Pavel", "Rosa", "Samuel", "Anneke", "Javier", "Olivia", "Kenji", "Mariam", "Declan",
)
LAST_NAMES = (
    "Whitfield", "Okafor", "Raman", "Müller", "Castellanos", "Lindqvist", "Nowak", "Brennan", "Dubois", "Sørensen",
    "Tanaka", "Haddad", "Fitzgerald", "Oyelaran", "Moreau", "Kowalski", "Achterberg", "Petrov", "Álvarez", "Chen",
    "Nakamura", "Ibáñez", "Gallagher", "Mensah", "Holloway", "Varga", "Rossi", "Yilmaz", "Kaplan", "Delacroix",
    "Mbeki", "Sandoval", "Eriksen", "Quinlan", "Abernathy", "Novak", "Pereira", "Hartmann", "Osei", "Whitcombe",
)

FREE_MAIL = ("gmail.com", "outlook.com", "yahoo.com", "hotmail.com", "icloud.com", "proton.me", "gmx.com",
             "aol.com")

ROLES_OF_AUTHORITY = ("Chief Executive Officer", "Chief Financial Officer", "Managing Director",
                      "Financial Controller", "Head of IT", "HR Director")
OTHER_ROLES = ("Accounts Payable Specialist", "Payroll Administrator", "IT Systems Administrator", "Office Manager",
               "Sales Manager", "Project Coordinator", "Operations Analyst", "Marketing Lead", "Recruiter",
               "Procurement Officer", "Software Engineer", "Executive Assistant")


@dataclass(frozen=True)
class Person:
    name: str
    role: str
    email: str

    @property
    def first(self) -> str:
        return self.name.split(" ")[0]


@dataclass(frozen=True)
class PartnerOrg:
    """A supplier, bank, payroll provider or client an organisation deals with."""

    name: str
    domains: tuple[str, ...]
    kind: str  # supplier | bank | payroll | client | law | logistics
    contacts: tuple[Person, ...] = ()

    @property
    def domain(self) -> str:
        return self.domains[0]


@dataclass(frozen=True)
class Organisation:
    name: str
    short: str  # the word impostors put in look-alike domains
    domains: tuple[str, ...]
    industry: str
    sso: str  # the identity provider staff sign in with: "microsoft" | "google" | "okta"
    staff: tuple[Person, ...]
    partners: tuple[PartnerOrg, ...] = field(default_factory=tuple)

    @property
    def domain(self) -> str:
        return self.domains[0]

    def by_role(self, *roles: str) -> list[Person]:
        return [p for p in self.staff if p.role in roles]

    def mailbox(self) -> dict[str, object]:
        """What the recipient's mail system knows (``items.Mailbox``): its domains, its staff (whose names
        impostors borrow), its partners."""
        return {"organisation": self.name, "domains": list(self.domains), "people": [p.name for p in self.staff],
                "partners": [{"name": p.name, "domains": list(p.domains)} for p in self.partners]}


@dataclass(frozen=True)
class Brand:
    """A real service whose notices land in every mailbox (and whose name impostors borrow), as the generator writes
    its mail: the brand of the knowledge base (:data:`.brand_data.KNOWN_BRANDS`) of the same name, with the few of
    its domains the generator uses, its sender and its kind (a test holds the two tables to agree)."""

    name: str
    domains: tuple[str, ...]
    sender: str  # the address its genuine notices come from
    kind: str  # saas | carrier | esign


#: The brands the generator writes mail of and about (a few of the knowledge base's, which says who owns what).
MAIL_BRANDS: tuple[Brand, ...] = (
    Brand("Microsoft", ("microsoft.com", "microsoftonline.com", "office.com"),
          "account-security-noreply@accountprotection.microsoft.com", "saas"),
    Brand("Google", ("google.com",), "no-reply@accounts.google.com", "saas"),
    Brand("Okta", ("okta.com",), "noreply@okta.com", "saas"),
    Brand("Dropbox", ("dropbox.com",), "no-reply@dropbox.com", "saas"),
    Brand("Slack", ("slack.com",), "feedback@slack.com", "saas"),
    Brand("Zoom", ("zoom.us", "zoom.com"), "no-reply@zoom.us", "saas"),
    Brand("Atlassian", ("atlassian.com", "atlassian.net"), "noreply@id.atlassian.com", "saas"),
    Brand("Adobe", ("adobe.com",), "message@adobe.com", "saas"),
    Brand("Salesforce", ("salesforce.com",), "noreply@salesforce.com", "saas"),
    Brand("DocuSign", ("docusign.net", "docusign.com"), "dse_na4@docusign.net", "esign"),
    Brand("UPS", ("ups.com",), "pkginfo@ups.com", "carrier"),
    Brand("FedEx", ("fedex.com",), "TrackingUpdates@fedex.com", "carrier"),
    Brand("DHL", ("dhl.com", "dhl.de"), "noreply@dhl.com", "carrier"),
)
SAAS = tuple(b for b in MAIL_BRANDS if b.kind == "saas")
CARRIERS = tuple(b for b in MAIL_BRANDS if b.kind == "carrier")
BRAND = {b.name: b for b in MAIL_BRANDS}

#: Mail service providers whose click-tracking redirects sit between a newsletter's link text and its target.
ESP_TRACKERS = ("{org}.us{n}.list-manage.com/track/click", "u{n}.ct.sendgrid.net/ls/click", "click.mlsend.com/link/c",
                "links.e.hubspotemail.net/e3t/Ctc", "t.e.mailchimpapp.com/r", "clicks.mailgun.net/c")
SHORTENERS = ("bit.ly", "tinyurl.com", "t.co", "is.gd", "rb.gy", "cutt.ly")
FREE_HOSTING = ("sites.google.com/view/{slug}", "{slug}.web.app", "{slug}.firebaseapp.com", "{slug}.netlify.app",
                "{slug}.vercel.app", "{slug}.pages.dev", "{user}.wixsite.com/{slug}", "{slug}.weebly.com",
                "{slug}.github.io", "storage.googleapis.com/{slug}", "{slug}.r2.dev", "{slug}.workers.dev",
                "{slug}.blob.core.windows.net/web")

_WORDS_A = ("lake", "ridge", "cedar", "harbor", "summit", "maple", "copper", "silver", "granite", "willow", "aspen",
            "meadow", "prairie", "coastal", "pioneer", "liberty", "falcon", "orchard", "beacon", "riverside")
_WORDS_B = ("dental", "painting", "roofing", "bakery", "realty", "vet", "fitness", "florist", "plumbing", "studio",
            "cafe", "motors", "printing", "tutoring", "designs", "farms", "outfitters", "clinic", "events", "law")
_TLDS = ("com", "com", "com", "net", "org", "co", "biz", "us", "co.uk", "ca", "com.au", "de")


def small_business_domain(rng: random.Random) -> str:
    """A small business's domain: the mail host of a compromised account, or an honest stranger's."""
    return f"{rng.choice(_WORDS_A)}{rng.choice(['', '-'])}{rng.choice(_WORDS_B)}.{rng.choice(_TLDS)}"


def person_name(rng: random.Random) -> str:
    return f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"


_ASCII = str.maketrans({"á": "a", "é": "e", "í": "i", "ó": "o", "ú": "u", "ñ": "n", "ü": "u", "ö": "o", "ø": "o",
                        "å": "a", "ł": "l", "ë": "e", "ç": "c", "Á": "a", "É": "e", "Ł": "l", "Ø": "o", "Z": "z"})


def local_part(name: str, style: int = 0) -> str:
    """``dana.whitfield``, ``dwhitfield`` or ``dana``: how organisations spell addresses."""
    first, last = name.translate(_ASCII).lower().split(" ", 1)
    last = last.replace(" ", "")
    return (f"{first}.{last}", f"{first[0]}{last}", f"{first}{last[0]}", f"{first}_{last}")[style % 4]


def free_mail_address(rng: random.Random, name: str) -> str:
    """The address an impostor (or an honest person) registers at a free provider under a name."""
    first, last = name.translate(_ASCII).lower().split(" ", 1)
    shape = rng.choice(("{f}.{l}{n}", "{f}{l}", "{f}.{l}.office", "{l}.{f}{n}", "{f}{l}.exec", "{f}_{l}{n}"))
    return shape.format(f=first, l=last, n=rng.randint(1, 99)) + "@" + rng.choice(FREE_MAIL)


# --------------------------------------------------------------------------------------------------
# Look-alike domains
# --------------------------------------------------------------------------------------------------
_HOMOGLYPHS = (("o", "0"), ("l", "1"), ("i", "l"), ("m", "rn"), ("w", "vv"), ("e", "3"), ("a", "4"))
_SUFFIXES = ("-payments", "-billing", "-secure", "-portal", "-invoices", "-finance", "-support", "-sso", "-login",
             "-hr", "-docs", "-mail")


_GENERIC_SUFFIXES = ("com", "net", "org", "info", "online", "help", "support", "site", "app")


def lookalike(rng: random.Random, domain: str) -> str:
    """A domain that imitates ``domain`` (never equal to it, nor a domain of a known brand, which the scorer takes
    as genuine): a typo, a homoglyph, another suffix, or the name inside a longer domain, as impostors register
    them."""
    label, _, suffix = domain.partition(".")
    for _ in range(20):
        kind = rng.randrange(6) if len(label) >= 5 else 3  # a short name only reads as itself elsewhere
        if kind == 0 and len(label) > 4:  # a doubled or dropped letter
            i = rng.randrange(1, len(label) - 1)
            out = label[:i] + label[i] + label[i:] if rng.random() < 0.5 else label[:i] + label[i + 1:]
        elif kind == 1:  # a homoglyph
            pairs = [(a, b) for a, b in _HOMOGLYPHS if a in label]
            if not pairs:
                continue
            a, b = rng.choice(pairs)
            idx = [i for i in range(len(label)) if label.startswith(a, i)]
            i = rng.choice(idx)
            out = label[:i] + b + label[i + len(a):]
        elif kind == 2 and len(label) > 4:  # two neighbours swapped
            i = rng.randrange(1, len(label) - 2)
            out = label[:i] + label[i + 1] + label[i] + label[i + 2:]
        elif kind == 3:  # the same name under another, generic suffix (a country's may be the brand's own)
            other = rng.choice([s for s in _GENERIC_SUFFIXES if s != suffix])
            out, suffix = label, other
        else:  # the name inside a longer domain
            out = label + rng.choice(_SUFFIXES)
        candidate = f"{out}.{suffix}"
        if candidate != domain and candidate not in BRAND_DOMAINS and "--" not in candidate \
                and imitates(candidate, domain):
            return candidate  # the scorer's own test of imitation agrees, so the plant is confirmable
    return f"{label}-secure.{suffix}"


#: Cyrillic letters that render like Latin ones: the homograph's raw material.
_CYRILLIC = {"a": "а", "e": "е", "o": "о", "p": "р", "c": "с", "x": "х", "y": "у", "i": "і"}


def homograph(rng: random.Random, domain: str) -> tuple[str, str]:
    """An IDN look-alike of ``domain``: (its Unicode form, its punycode ``xn--`` form as it travels in mail)."""
    label, _, suffix = domain.partition(".")
    idx = [i for i, ch in enumerate(label) if ch in _CYRILLIC]
    chosen = rng.sample(idx, k=min(len(idx), rng.choice((1, 1, 2))))
    uni = "".join(_CYRILLIC[ch] if i in chosen else ch for i, ch in enumerate(label))
    return f"{uni}.{suffix}", f"{uni.encode('idna').decode('ascii')}.{suffix}"


# --------------------------------------------------------------------------------------------------
# Organisations
# --------------------------------------------------------------------------------------------------
def _staff(seed: str, domain: str, n: int = 14) -> tuple[Person, ...]:
    rng = random.Random(seed)
    style = rng.randrange(4)
    roles = list(ROLES_OF_AUTHORITY) + list(OTHER_ROLES)
    people, seen = [], set()
    for role in roles[:n]:
        name = person_name(rng)
        while name in seen:
            name = person_name(rng)
        seen.add(name)
        people.append(Person(name, role, f"{local_part(name, style)}@{domain}"))
    return tuple(people)


def _partner(name: str, domains: tuple[str, ...], kind: str) -> PartnerOrg:
    rng = random.Random(name)
    contacts = tuple(Person(n, r, f"{local_part(n, i)}@{domains[0]}")
                     for i, (n, r) in enumerate(((person_name(rng), "Accounts Receivable"),
                                                 (person_name(rng), "Account Manager"))))
    return PartnerOrg(name, domains, kind, contacts)


_IN_PARTNERS = (
    _partner("Ardent Payroll Services", ("ardentpayroll.com",), "payroll"),
    _partner("Lindgren Office Supply", ("lindgrenoffice.com",), "supplier"),
    _partner("Crescent Bay Bank", ("crescentbaybank.com",), "bank"),
    _partner("Pinegrove IT Consulting", ("pinegroveit.com", "pinegrove.io"), "supplier"),
    _partner("Marston Packaging", ("marstonpackaging.com",), "supplier"),
    _partner("Quayside Catering", ("quaysidecatering.co.uk",), "supplier"),
    _partner("Tessaro Industrial Parts", ("tessaroparts.com",), "supplier"),
    _partner("Halcyon Insurance Brokers", ("halcyonbrokers.com",), "supplier"),
    _partner("Blueline Freight", ("bluelinefreight.com",), "logistics"),
    _partner("Everly Clinical Labs", ("everlylabs.com",), "client"),
    _partner("Norcott & Vance Accountants", ("norcottvance.com",), "supplier"),
    _partner("Westmark Facilities", ("westmarkfm.com",), "supplier"),
)
_OOD_PARTNERS = (
    _partner("Gravenor Turbine Services", ("gravenorturbine.com",), "supplier"),
    _partner("Ostrava Steelworks Trading", ("ostravasteel.eu",), "supplier"),
    _partner("Sunfield Mutual Bank", ("sunfieldmutual.com",), "bank"),
    _partner("Peregrine Lab Instruments", ("peregrinelab.com",), "supplier"),
    _partner("Calloway Payroll Partners", ("callowaypayroll.com",), "payroll"),
    _partner("Riverbend Courier", ("riverbendcourier.com",), "logistics"),
)


def _org(name: str, short: str, domains: tuple[str, ...], industry: str, sso: str,
         partners: tuple[PartnerOrg, ...]) -> Organisation:
    return Organisation(name, short, domains, industry, sso, _staff(name, domains[0]), partners)


IN_DIST_ORGS: tuple[Organisation, ...] = (
    _org("Halvorsen Marine Supply", "halvorsen", ("halvorsenmarine.com",), "marine wholesale", "microsoft",
         _IN_PARTNERS[0:5]),
    _org("Brightwater Analytics", "brightwater", ("brightwater-analytics.com", "bwanalytics.io"), "data consulting",
         "google", _IN_PARTNERS[3:8]),
    _org("Kestrel Ridge Health", "kestrelridge", ("kestrelridgehealth.org",), "healthcare", "okta",
         _IN_PARTNERS[6:11]),
    _org("Marlowe & Pryce LLP", "marlowepryce", ("marlowepryce.com",), "law", "microsoft",
         (_IN_PARTNERS[10], _IN_PARTNERS[11], _IN_PARTNERS[0], _IN_PARTNERS[2], _IN_PARTNERS[5])),
    _org("Tandem Freight Logistics", "tandemfreight", ("tandemfreight.com", "tandemfreight.de"), "logistics",
         "microsoft", (_IN_PARTNERS[8], _IN_PARTNERS[4], _IN_PARTNERS[6], _IN_PARTNERS[2], _IN_PARTNERS[9])),
    _org("Oakhurst Unified School District", "oakhurst", ("oakhurstusd.org",), "education", "google",
         (_IN_PARTNERS[1], _IN_PARTNERS[5], _IN_PARTNERS[11], _IN_PARTNERS[0], _IN_PARTNERS[7])),
)
OOD_ORGS: tuple[Organisation, ...] = (
    _org("Veridian Grid Cooperative", "veridian", ("veridiangrid.com",), "energy utility", "microsoft",
         _OOD_PARTNERS[0:4]),
    _org("Solenne Biotech", "solenne", ("solennebio.com", "solenne.fr"), "biotech", "okta", _OOD_PARTNERS[2:6]),
    _org("Cobalt Harbor Credit Union", "cobaltharbor", ("cobaltharborcu.org",), "credit union", "google",
         (_OOD_PARTNERS[0], _OOD_PARTNERS[4], _OOD_PARTNERS[5], _OOD_PARTNERS[3])),
)
