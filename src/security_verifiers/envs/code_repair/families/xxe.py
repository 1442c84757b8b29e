"""CWE-611, XML external entities: a program parses a caller's XML with external entity resolution turned on.

Variants:

- ``config_import``: settings exported as XML by another installation, read with a ``xml.sax`` handler;
- ``invoice_parser``: supplier invoices read with ``xml.dom.minidom`` over a SAX parser;
- ``feed_reader``: RSS items read one by one with ``xml.dom.pulldom``;
- ``metadata_include`` (OOD): SAML-style metadata assembled with XInclude (``xml.etree.ElementInclude``) from
  a fragments directory, with a loader that opens whatever path an ``href`` names.

In the first three, ``feature_external_ges`` is set on the parser, so a DOCTYPE that declares an entity with a
SYSTEM identifier (a ``file://`` URL or a bare path) makes the parser read that file into the document; the
exploit probes point it at a secret fixture holding the run's canary (its absolute path under the program's project
directory, ``ROOT``, drawn per run, is written into the DOCTYPE by the test module) and look for the canary in what
the program returned. The reference fix turns the feature off (the parser then skips the reference); in the OOD
variant it confines includes to the fragments directory.
bandit flags the xml modules' parse calls and imports whatever the parser's features are (B314, B317-B319,
B405-B409), so no analyser id marks the weakness itself.
"""

from __future__ import annotations

import hashlib
import random
from decimal import Decimal
from typing import Any

from security_verifiers.envs.code_repair.families import Variants
from security_verifiers.envs.code_repair.families.kit import NOUNS, ORGS, PEOPLE, WORDS, Templates, location, pick, swap
from security_verifiers.envs.code_repair.program import Detect, Probe, Program

TEMPLATES = Templates(__name__)
VARIANTS = Variants()

LEAK = Detect(kind="contains", text="{canary}")
_FEATURE_ON = "parser.setFeature(xml.sax.handler.feature_external_ges, True)"
_FEATURE_OFF = "parser.setFeature(xml.sax.handler.feature_external_ges, False)"


#: Where the secret's absolute path goes in an attack document; the test module puts it there (``SECRET``, under
#: the program's project directory ``ROOT``, which is drawn per run).
_AT_SECRET = "@SECRET@"


def _secret(rng: random.Random) -> tuple[str, str]:
    """A secret fixture holding the run's canary: its path relative to the project directory, and the stand-in for
    its absolute path in attack documents (see :func:`_expr`)."""
    name = f"{rng.choice(('id_rsa', 'credentials', 'shadow', 'service', 'db'))}_{rng.choice(WORDS)}"
    return f"secret/{name}.txt", _AT_SECRET


def _expr(text: str) -> str:
    """``text`` as a Python expression of the test module, its secret's stand-ins replaced by ``SECRET``."""
    return " + SECRET + ".join(repr(part) for part in text.split(_AT_SECRET))


def _doctype(root: str, entity: str, system: str) -> str:
    return f'<?xml version="1.0"?>\n<!DOCTYPE {root} [<!ENTITY {entity} SYSTEM "{system}">]>\n'


# -------------------------------------------------------------------------------------------- config_import

@VARIANTS.add()
def _config_import(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg = f"{org}_admin"
    read_fn = rng.choice(("read_settings", "import_settings", "parse_settings"))
    settings: dict[str, Any] = {"site_name": f"{rng.choice(WORDS).capitalize()} {rng.choice(NOUNS)}s",
                "max_upload_mb": rng.choice((10, 25, 50, 100)), "signup_open": rng.choice((True, False)),
                "languages": pick(rng, ("en", "de", "fr", "es", "it", "pl"), rng.randint(1, 3)),
                "support_contact": f"{rng.choice(PEOPLE)}@{org}.example"}
    kinds = {"site_name": "str", "max_upload_mb": "int", "signup_open": "bool", "languages": "list",
             "support_contact": "str"}

    def value(name: str) -> str:
        v = settings[name]
        return ", ".join(v) if isinstance(v, list) else str(v).lower() if isinstance(v, bool) else str(v)

    document = '<?xml version="1.0" encoding="utf-8"?>\n<settings version="2">\n' + "".join(
        f'  <setting name="{name}" type="{kinds[name]}">{value(name)}</setting>\n' for name in settings
    ) + "</settings>\n"
    source = TEMPLATES.render("config_import/source.py", org=org, read_fn=read_fn, feature_on=_FEATURE_ON)
    fixed = swap(source, _FEATURE_ON, _FEATURE_OFF)
    path = f"{pkg}/settings_import.py"
    relative, secret = _secret(rng)
    entity = rng.choice(("motd", "banner", "footer", "notice"))
    attack_url = _doctype("settings", entity, f"file://{secret}") + \
        f'<settings version="2"><setting name="site_name">&{entity};</setting></settings>\n'
    attack_path = _doctype("settings", "shared", secret) + \
        '<settings version="2"><setting name="languages" type="list">en, &shared;</setting></settings>\n'
    odd: dict[str, Any] = {"site_name": "Tom & Jerry <Shop>", "max_upload_mb": 5, "signup_open": False,
                           "languages": ["en"]}
    tests = TEMPLATES.render("config_import/tests.py", pkg=pkg, read_fn=read_fn, document=repr(document), odd=repr(odd),
                             attack_url=_expr(attack_url), attack_path=_expr(attack_path), relative=relative)
    return Program(
        family="xxe", variant="config_import", domain="settings import", cwe="CWE-611",
        files={path: source}, fixed={path: fixed},
        description=f"`{read_fn}(data)` reads the settings from an exported settings document "
                    "(`<setting name=... type=str|int|bool|list>`) into a dict; `export` writes such a document. "
                    "Administrators upload the documents to move settings between installations.",
        location=location({path: source}, path, _FEATURE_ON),
        tests=tests,
        probes=[Probe(id="read", kind="functional", expect=settings),
                Probe(id="round_trip", kind="functional", expect=odd),
                Probe(id="unknown_type", kind="functional", expect="setting x: unknown type 'date'"),
                Probe(id="file_url", kind="exploit", detect=LEAK),
                Probe(id="bare_path", kind="exploit", detect=LEAK)],
        fixtures={relative: "{canary}"})


# ------------------------------------------------------------------------------------------- invoice_parser

@VARIANTS.add()
def _invoice_parser(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    supplier = f"{pick(rng, ORGS)[0].capitalize()} {rng.choice(('Supplies', 'Logistics', 'Trading'))}"
    pkg = f"{org}_payables"
    parse_fn = rng.choice(("parse_invoice", "read_invoice", "invoice_fields"))
    number = f"INV-{rng.randint(1000, 9999)}"
    lines = [(f"{rng.choice(WORDS).capitalize()} {rng.choice(NOUNS)}", rng.randint(1, 12),
              f"{rng.randint(1, 900)}.{rng.randint(0, 99):02d}") for _ in range(rng.randint(2, 4))]
    currency = rng.choice(("EUR", "USD", "GBP", "SEK"))
    note = f"Payable within {rng.choice((14, 30, 60))} days"

    def document(supplier_text: str, note_text: str, prolog: str = '<?xml version="1.0"?>\n') -> str:
        items = "".join(f"    <Line><Description>{d}</Description><Quantity>{q}</Quantity>"
                        f"<UnitPrice>{p}</UnitPrice></Line>\n" for d, q, p in lines)
        return (f'{prolog}<Invoice currency="{currency}">\n  <ID>{number}</ID>\n'
                f"  <Supplier><Name>{supplier_text}</Name></Supplier>\n  <Note>{note_text}</Note>\n"
                f"  <Lines>\n{items}  </Lines>\n</Invoice>\n")

    total = sum((Decimal(p) * q for _, q, p in lines), Decimal(0))
    expect: dict[str, Any] = {"number": number, "supplier": supplier, "currency": currency, "note": note,
              "lines": [{"description": d, "quantity": q, "unit_price": p} for d, q, p in lines],
              "total": str(total.quantize(Decimal("0.01")))}
    source = TEMPLATES.render("invoice_parser/source.py", parse_fn=parse_fn, feature_on=_FEATURE_ON)
    ledger_src = TEMPLATES.render("invoice_parser/ledger_src.py")
    fixed = swap(source, _FEATURE_ON, _FEATURE_OFF)
    path, ledger_path = f"{pkg}/invoices.py", f"{pkg}/ledger.py"
    relative, secret = _secret(rng)
    attack_note = document(supplier, "&terms;", _doctype("Invoice", "terms", f"file://{secret}"))
    attack_name = document("&vendor;", note, _doctype("Invoice", "vendor", secret))
    tests = TEMPLATES.render("invoice_parser/tests.py", pkg=pkg, parse_fn=parse_fn,
                             document=repr(document(supplier, note)), attack_note=_expr(attack_note),
                             attack_name=_expr(attack_name), relative=relative)
    return Program(
        family="xxe", variant="invoice_parser", domain="invoice processing", cwe="CWE-611",
        files={path: source, ledger_path: ledger_src}, fixed={path: fixed, ledger_path: ledger_src},
        description=f"`{parse_fn}(document)` reads a supplier's XML invoice (ID, Supplier/Name, Note, currency "
                    "attribute, Lines with Description, Quantity and UnitPrice) into a dict with the total as a "
                    "decimal string; the ledger's `book` records it once and `remittance` lists invoices for a "
                    "payment. Suppliers upload the invoices in a portal.",
        location=location({path: source}, path, _FEATURE_ON),
        tests=tests,
        probes=[Probe(id="parse", kind="functional", expect=expect),
                Probe(id="book", kind="functional",
                      expect=[True, False, [[supplier, number, expect["total"]]]]),
                Probe(id="no_lines", kind="functional",
                      expect={"number": "X-1", "supplier": "", "currency": "EUR", "note": "", "lines": [],
                              "total": "0.00"}),
                Probe(id="remittance", kind="functional",
                      expect=f": invoice X-1, 0.00 EUR\n{supplier}: invoice {number}, {expect['total']} {currency}"),
                Probe(id="note", kind="exploit", detect=LEAK),
                Probe(id="supplier", kind="exploit", detect=LEAK)],
        fixtures={relative: "{canary}"})


# ---------------------------------------------------------------------------------------------- feed_reader

@VARIANTS.add()
def _feed_reader(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg = f"{org}_news"
    items_fn = rng.choice(("feed_items", "read_feed", "entries"))
    merge_fn = rng.choice(("headlines", "merged", "front_page"))
    sources = pick(rng, ORGS, 2)

    def make_items(site: str) -> list[Any]:
        return [{"title": f"{rng.choice(WORDS).capitalize()} {rng.choice(NOUNS)} {k}",
                 "link": f"https://{site}.example/news/{rng.randint(100, 999)}",
                 "published": f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"} for k in range(3)]

    feeds = {site: make_items(site) for site in sources}

    def rss(items: list[dict], title: str, head: str = '<?xml version="1.0"?>\n') -> str:
        body = "".join(f"<item><title>{i['title']}</title><link>{i['link']}</link>"
                       f"<pubDate>{i['published']}</pubDate></item>\n" for i in items)
        return f'{head}<rss version="2.0"><channel><title>{title}</title>\n{body}</channel></rss>\n'

    source = TEMPLATES.render("feed_reader/source.py", org=org, items_fn=items_fn, merge_fn=merge_fn,
                              feature_on=_FEATURE_ON)
    fixed = swap(source, _FEATURE_ON, _FEATURE_OFF)
    path = f"{pkg}/feeds.py"
    relative, secret = _secret(rng)
    first = sources[0]
    entity = rng.choice(("headline", "story", "teaser"))
    poisoned = [dict(feeds[first][0], title=f"Breaking: &{entity};")] + feeds[first][1:]
    attack_url = rss(poisoned, "News", _doctype("rss", entity, f"file://{secret}"))
    attack_path = rss([dict(feeds[first][1], link="&loc;")], "News", _doctype("rss", "loc", secret))
    texts = {site: rss(items, f"{site} news") for site, items in feeds.items()}
    day = sorted(i["published"] for i in feeds[first])[1]
    merged = sorted(((i["published"], f"{i['title']} ({i['link'].split('/')[2]})") for items in feeds.values()
                     for i in items), reverse=True)[:4]
    tests = TEMPLATES.render("feed_reader/tests.py", pkg=pkg, items_fn=items_fn, merge_fn=merge_fn, texts=repr(texts),
                             first=first, attack_url=_expr(attack_url), attack_path=_expr(attack_path), day=day,
                             relative=relative)
    return Program(
        family="xxe", variant="feed_reader", domain="news feed reader", cwe="CWE-611",
        files={path: source}, fixed={path: fixed},
        description=f"`{items_fn}(feed, limit)` returns the first items (title, link, pubDate) of an RSS 2.0 "
                    f"document; `{merge_fn}(feeds)` merges several partner feeds into the newest titles with their "
                    "host. The feeds are fetched from partner sites.",
        location=location({path: source}, path, _FEATURE_ON),
        tests=tests,
        probes=[Probe(id="items", kind="functional", expect=feeds[first]),
                Probe(id="limit", kind="functional", expect=[i["title"] for i in feeds[first][:2]]),
                Probe(id="merged", kind="functional", expect=[text for _, text in merged]),
                Probe(id="since", kind="functional",
                      expect=[i["title"] for i in feeds[first] if i["published"] >= day]),
                Probe(id="title", kind="exploit", detect=LEAK),
                Probe(id="link", kind="exploit", detect=LEAK)],
        fixtures={relative: "{canary}"})


# ---------------------------------------------------------------------------------- metadata_include (OOD)

@VARIANTS.add(ood=True)
def _metadata_include(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg = f"{org}_sso"
    summary_fn = rng.choice(("provider_summary", "describe_provider", "metadata_summary"))
    assemble_fn = rng.choice(("assemble", "resolve_includes", "expand"))
    cert_name = f"{rng.choice(('signing', 'idp', 'federation'))}-{rng.randint(2024, 2027)}.pem"
    cert = "MIIC" + "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef0123456789") for _ in range(40))
    sp = rng.choice(WORDS)
    entity_id = f"https://{sp}.{org}.example/saml"
    acs: list[Any] = [f"https://{sp}.{org}.example/saml/acs/{k}" for k in range(rng.randint(1, 3))]

    def metadata(include: str) -> str:
        services = "".join(f'<AssertionConsumerService index="{k}" Location="{url}"/>' for k, url in enumerate(acs))
        return ('<EntityDescriptor xmlns:xi="http://www.w3.org/2001/XInclude" '
                f'entityID="{entity_id}"><SPSSODescriptor>'
                f'<KeyDescriptor use="signing"><xi:include href="{include}" parse="text"/></KeyDescriptor>'
                f"{services}</SPSSODescriptor></EntityDescriptor>")

    fragments_src = TEMPLATES.render("metadata_include/fragments_src.py", org=org)
    source = TEMPLATES.render("metadata_include/source.py", org=org, pkg=pkg, assemble_fn=assemble_fn,
                              summary_fn=summary_fn)
    fixed = swap(fragments_src, '''
            return ElementInclude.default_loader(os.path.join(FRAGMENTS, href), parse, encoding)
        ''', '''
            base = os.path.realpath(FRAGMENTS)
            path = os.path.realpath(os.path.join(base, href))
            if os.path.commonpath([base, path]) != base:
                raise ElementInclude.FatalIncludeError(f"fragment outside {FRAGMENTS}: {href}")
            return ElementInclude.default_loader(path, parse, encoding)
        ''')
    path, meta_path = f"{pkg}/fragments.py", f"{pkg}/metadata.py"
    cert_digest = hashlib.sha256(cert.encode("ascii")).hexdigest()
    relative, secret = _secret(rng)
    tests = TEMPLATES.render("metadata_include/tests.py", pkg=pkg, summary_fn=summary_fn, assemble_fn=assemble_fn,
                             good=repr(metadata(cert_name)), missing=repr(metadata("nope.pem")),
                             absolute=_expr(metadata(secret)), relative=relative,
                             traversal=repr(metadata(f"../../{relative}")), cert_name=cert_name,
                             copied=repr(metadata("copy-" + cert_name)))
    return Program(
        family="xxe", variant="metadata_include", domain="SSO metadata", cwe="CWE-611",
        files={path: fragments_src, meta_path: source}, fixed={path: fixed, meta_path: source},
        description=f"`{summary_fn}(document)` returns the entity id, signing certificates and assertion consumer "
                    f"URLs of a service provider's uploaded metadata, after `{assemble_fn}` has replaced its "
                    "XInclude elements by the shared fragments kept in FRAGMENTS (where `fragments.publish` puts the "
                    "certificates administrators approve).",
        location=location({path: fragments_src}, path, "return ElementInclude.default_loader("),
        tests=tests,
        probes=[Probe(id="summary", kind="functional",
                      expect={"entity_id": entity_id, "certificates": [cert], "consumers": acs}),
                Probe(id="assembled", kind="functional",
                      expect=["EntityDescriptor", "SPSSODescriptor", "KeyDescriptor",
                              *["AssertionConsumerService"] * len(acs)]),
                Probe(id="missing_fragment", kind="functional", expect="missing"),
                Probe(id="publish", kind="functional", expect=["copy-" + cert_name, [cert], "refused"]),
                Probe(id="fingerprint", kind="functional", expect=[":".join(
                    cert_digest[k:k + 2] for k in range(0, 16, 2)).upper()]),
                Probe(id="absolute", kind="exploit", detect=LEAK),
                Probe(id="traversal", kind="exploit", detect=LEAK)],
        fixtures={relative: "{canary}", f"data/fragments/{cert_name}": cert + "\n"})


FAMILY = VARIANTS.family(name="xxe", cwe="CWE-611", title="XML external entity expansion")
