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

from security_verifiers.envs.code_repair.families import Family
from security_verifiers.envs.code_repair.families.kit import NOUNS, ORGS, PEOPLE, WORDS, fill, location, pick, swap
from security_verifiers.envs.code_repair.program import Detect, Probe, Program

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
    source = fill('''
        """Import of $org application settings from the XML file that another installation exported."""

        import io
        import xml.sax
        import xml.sax.handler
        from xml.sax.saxutils import escape, quoteattr

        CONVERTERS = {
            "str": str,
            "int": int,
            "bool": lambda text: text.lower() in ("1", "true", "yes"),
            "list": lambda text: [item.strip() for item in text.split(",") if item.strip()],
        }


        class SettingsHandler(xml.sax.handler.ContentHandler):
            """Collects <setting name="..." type="...">value</setting> elements."""

            def __init__(self):
                super().__init__()
                self.settings = {}
                self._name = None
                self._type = "str"
                self._text = []

            def startElement(self, name, attrs):
                if name == "setting":
                    self._name, self._type, self._text = attrs.get("name"), attrs.get("type", "str"), []

            def characters(self, content):
                if self._name is not None:
                    self._text.append(content)

            def endElement(self, name):
                if name == "setting" and self._name:
                    if self._type not in CONVERTERS:
                        raise ValueError(f"setting {self._name}: unknown type {self._type!r}")
                    self.settings[self._name] = CONVERTERS[self._type]("".join(self._text).strip())
                    self._name = None


        def $read_fn(data: bytes) -> dict:
            """The settings in an exported settings document."""
            parser = xml.sax.make_parser()
            $feature_on
            handler = SettingsHandler()
            parser.setContentHandler(handler)
            parser.parse(io.BytesIO(data))
            return handler.settings


        def export(settings: dict) -> bytes:
            """The document $read_fn reads back (str, int, bool and list-of-str values)."""
            lines = ['<?xml version="1.0" encoding="utf-8"?>', '<settings version="2">']
            for name, value in settings.items():
                kind = {bool: "bool", int: "int", list: "list"}.get(type(value), "str")
                text = ", ".join(value) if kind == "list" else str(value).lower() if kind == "bool" else str(value)
                lines.append(f"  <setting name={quoteattr(name)} type=\\"{kind}\\">{escape(text)}</setting>")
            return ("\\n".join(lines) + "\\n</settings>\\n").encode("utf-8")
        ''', org=org, read_fn=read_fn, feature_on=_FEATURE_ON)
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
    tests = fill('''
        import ${pkg}.settings_import as settings_import

        SECRET = ROOT + "/$relative"

        DOCUMENT = $document


        def _attempt(document):
            try:
                return settings_import.$read_fn(document.encode())
            except Exception as error:
                return type(error).__name__


        def probe_read(ctx):
            return settings_import.$read_fn(DOCUMENT.encode())


        def probe_round_trip(ctx):
            return settings_import.$read_fn(settings_import.export($odd))


        def probe_unknown_type(ctx):
            try:
                settings_import.$read_fn(b'<settings><setting name="x" type="date">2020</setting></settings>')
            except ValueError as error:
                return str(error)
            return "read"


        def probe_file_url(ctx):
            return _attempt($attack_url)


        def probe_bare_path(ctx):
            return _attempt($attack_path)
        ''', pkg=pkg, read_fn=read_fn, document=repr(document), odd=repr(odd), attack_url=_expr(attack_url),
        attack_path=_expr(attack_path), relative=relative)
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
    source = fill('''
        """Supplier invoices arrive as XML documents; this reads the fields that accounts payable books."""

        import xml.dom.minidom
        import xml.sax
        import xml.sax.handler
        from decimal import Decimal


        def _text(parent, tag: str) -> str:
            """The text of parent's first <tag> element ('' when there is none)."""
            nodes = parent.getElementsByTagName(tag)
            if not nodes:
                return ""
            return "".join(child.data for child in nodes[0].childNodes if child.nodeType == child.TEXT_NODE).strip()


        def $parse_fn(document: str) -> dict:
            """Number, supplier, currency, note, lines and total of an invoice document."""
            parser = xml.sax.make_parser()
            $feature_on
            root = xml.dom.minidom.parseString(document, parser=parser).documentElement
            lines = [{"description": _text(line, "Description"), "quantity": int(_text(line, "Quantity")),
                      "unit_price": _text(line, "UnitPrice")} for line in root.getElementsByTagName("Line")]
            total = sum((Decimal(line["unit_price"]) * line["quantity"] for line in lines), Decimal(0))
            return {"number": _text(root, "ID"), "supplier": _text(root, "Name"),
                    "currency": root.getAttribute("currency") or "EUR", "note": _text(root, "Note"),
                    "lines": lines, "total": str(total.quantize(Decimal("0.01")))}
        ''', parse_fn=parse_fn, feature_on=_FEATURE_ON)
    ledger_src = fill('''
        """The payables ledger: invoices booked for payment, once per supplier and number."""

        import sqlite3
        from string import Template

        REMITTANCE = Template("$${supplier}: invoice $${number}, $${total} $${currency}")


        def book(db: sqlite3.Connection, invoice: dict) -> bool:
            """Record an invoice for payment; False when that supplier's invoice number was booked before."""
            db.execute("CREATE TABLE IF NOT EXISTS booked (supplier TEXT, number TEXT, total TEXT, "
                       "PRIMARY KEY (supplier, number))")
            try:
                with db:
                    db.execute("INSERT INTO booked VALUES (?, ?, ?)",
                               (invoice["supplier"], invoice["number"], invoice["total"]))
            except sqlite3.IntegrityError:
                return False
            return True


        def remittance(invoices: list[dict]) -> str:
            """The remittance advice sent with a payment run: one line per invoice, by supplier and number."""
            ordered = sorted(invoices, key=lambda invoice: (invoice["supplier"], invoice["number"]))
            return "\\n".join(REMITTANCE.substitute(invoice) for invoice in ordered)
        ''')
    fixed = swap(source, _FEATURE_ON, _FEATURE_OFF)
    path, ledger_path = f"{pkg}/invoices.py", f"{pkg}/ledger.py"
    relative, secret = _secret(rng)
    attack_note = document(supplier, "&terms;", _doctype("Invoice", "terms", f"file://{secret}"))
    attack_name = document("&vendor;", note, _doctype("Invoice", "vendor", secret))
    tests = fill('''
        import ${pkg}.invoices as invoices
        import ${pkg}.ledger as ledger

        SECRET = ROOT + "/$relative"

        DOCUMENT = $document


        def _attempt(document):
            try:
                invoice = invoices.$parse_fn(document)
            except Exception as error:
                return type(error).__name__
            return [invoice["supplier"], invoice["note"]]


        def probe_parse(ctx):
            return invoices.$parse_fn(DOCUMENT)


        def probe_book(ctx):
            db = program_module("sqlite3").connect(":memory:")
            invoice = invoices.$parse_fn(DOCUMENT)
            return [ledger.book(db, invoice), ledger.book(db, invoice),
                    [list(row) for row in db.execute("SELECT * FROM booked")]]


        def probe_no_lines(ctx):
            return invoices.$parse_fn('<Invoice><ID>X-1</ID></Invoice>')


        def probe_remittance(ctx):
            empty = invoices.$parse_fn('<Invoice><ID>X-1</ID></Invoice>')
            return ledger.remittance([invoices.$parse_fn(DOCUMENT), empty])


        def probe_note(ctx):
            return _attempt($attack_note)


        def probe_supplier(ctx):
            return _attempt($attack_name)
        ''', pkg=pkg, parse_fn=parse_fn, document=repr(document(supplier, note)), attack_note=_expr(attack_note),
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

    source = fill('''
        """News for the $org intranet: reads the RSS 2.0 feeds of partner sites item by item."""

        import urllib.parse
        import xml.sax
        import xml.sax.handler
        from xml.dom import pulldom


        def _child_text(node, tag: str) -> str:
            for child in node.getElementsByTagName(tag):
                return "".join(part.data for part in child.childNodes if part.nodeType == part.TEXT_NODE).strip()
            return ""


        def $items_fn(feed: str, limit: int = 20) -> list[dict]:
            """The first limit items of an RSS document: title, link and publication date."""
            parser = xml.sax.make_parser()
            $feature_on
            events = pulldom.parseString(feed, parser=parser)
            found = []
            for event, node in events:
                if event == pulldom.START_ELEMENT and node.tagName == "item":
                    events.expandNode(node)
                    found.append({"title": _child_text(node, "title"), "link": _child_text(node, "link"),
                                  "published": _child_text(node, "pubDate")})
                    if len(found) == limit:
                        break
            return found


        def $merge_fn(feeds: dict[str, str], limit: int = 10) -> list[str]:
            """The newest titles of several feeds (site -> RSS text), newest first, with their site."""
            dated = []
            for site, feed in feeds.items():
                for item in $items_fn(feed):
                    host = urllib.parse.urlsplit(item["link"]).hostname or site
                    dated.append((item["published"], f"{item['title']} ({host})"))
            return [text for _, text in sorted(dated, reverse=True)[:limit]]


        def published_since(feed: str, day: str) -> list[str]:
            """Titles of the items of a feed published on or after day (YYYY-MM-DD)."""
            return [item["title"] for item in $items_fn(feed) if item["published"] >= day]
        ''', org=org, items_fn=items_fn, merge_fn=merge_fn, feature_on=_FEATURE_ON)
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
    tests = fill('''
        import ${pkg}.feeds as feeds

        SECRET = ROOT + "/$relative"

        FEEDS = $texts


        def _attempt(feed):
            try:
                return feeds.$items_fn(feed)
            except Exception as error:
                return type(error).__name__


        def probe_items(ctx):
            return feeds.$items_fn(FEEDS["$first"])


        def probe_limit(ctx):
            return [item["title"] for item in feeds.$items_fn(FEEDS["$first"], limit=2)]


        def probe_merged(ctx):
            return feeds.$merge_fn(FEEDS, limit=4)


        def probe_since(ctx):
            return feeds.published_since(FEEDS["$first"], "$day")


        def probe_title(ctx):
            return _attempt($attack_url)


        def probe_link(ctx):
            return _attempt($attack_path)
        ''', pkg=pkg, items_fn=items_fn, merge_fn=merge_fn, texts=repr(texts), first=first,
        attack_url=_expr(attack_url), attack_path=_expr(attack_path), day=day, relative=relative)
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

    fragments_src = fill('''
        """The shared fragments of the $org single sign-on's metadata (signing certificates and the like):
        administrators publish them to FRAGMENTS, providers' metadata includes them with XInclude."""

        import os
        import shutil
        from xml.etree import ElementInclude

        FRAGMENTS = os.environ.get("SSO_FRAGMENTS", "/srv/sso/fragments")


        def load_fragment(href: str, parse: str, encoding: str | None = None):
            """Load one included fragment (hrefs are relative to FRAGMENTS)."""
            return ElementInclude.default_loader(os.path.join(FRAGMENTS, href), parse, encoding)


        def publish(source: str, name: str) -> str:
            """Copy an approved certificate file into FRAGMENTS under name; returns its href."""
            if not name.endswith(".pem") or os.sep in name:
                raise ValueError("fragments are .pem files directly in FRAGMENTS")
            shutil.copyfile(source, os.path.join(FRAGMENTS, name))
            return name
        ''', org=org)
    source = fill('''
        """Service-provider metadata for the $org single sign-on: providers upload an EntityDescriptor and
        include the shared signing certificates with XInclude from the fragments directory."""

        import hashlib
        import xml.etree.ElementTree as ET
        from xml.etree import ElementInclude

        from $pkg import fragments


        def $assemble_fn(document: str) -> ET.Element:
            """The metadata document with its includes replaced by the fragments."""
            root = ET.fromstring(document)
            ElementInclude.include(root, loader=fragments.load_fragment)
            return root


        def $summary_fn(document: str) -> dict:
            """What the identity provider registers: entity id, signing certificates, consumer services."""
            root = $assemble_fn(document)
            if root.tag != "EntityDescriptor" or not root.get("entityID"):
                raise ValueError("not an EntityDescriptor")
            keys = [(key.text or "").strip() for key in root.iter("KeyDescriptor")
                    if key.get("use", "signing") == "signing"]
            services = sorted(root.iter("AssertionConsumerService"), key=lambda s: int(s.get("index", "0")))
            return {"entity_id": root.get("entityID"), "certificates": keys,
                    "consumers": [service.get("Location") for service in services]}


        def short_fingerprint(certificate: str) -> str:
            """The short fingerprint administrators compare when they approve a provider's certificate."""
            digest = hashlib.sha256("".join(certificate.split()).encode("ascii")).hexdigest()
            return ":".join(digest[k:k + 2] for k in range(0, 16, 2)).upper()
        ''', org=org, pkg=pkg, assemble_fn=assemble_fn, summary_fn=summary_fn)
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
    tests = fill('''
        import ${pkg}.fragments as fragments
        import ${pkg}.metadata as metadata

        SECRET = ROOT + "/$relative"
        fragments.FRAGMENTS = ROOT + "/data/fragments"


        def _attempt(document):
            try:
                return metadata.$summary_fn(document)
            except Exception as error:
                return type(error).__name__


        def probe_summary(ctx):
            return metadata.$summary_fn($good)


        def probe_assembled(ctx):
            root = metadata.$assemble_fn($good)
            return [element.tag for element in root.iter()]


        def probe_fingerprint(ctx):
            return [metadata.short_fingerprint(cert) for cert in metadata.$summary_fn($good)["certificates"]]


        def probe_publish(ctx):
            href = fragments.publish(ROOT + "/data/fragments/$cert_name", "copy-$cert_name")
            return [href, metadata.$summary_fn($copied)["certificates"], _attempt_publish("../x.pem")]


        def _attempt_publish(name):
            try:
                return fragments.publish(ROOT + "/data/fragments/$cert_name", name)
            except ValueError:
                return "refused"


        def probe_missing_fragment(ctx):
            try:
                metadata.$summary_fn($missing)
            except OSError:
                return "missing"
            return "found"


        def probe_absolute(ctx):
            return _attempt($absolute)


        def probe_traversal(ctx):
            return _attempt($traversal)
        ''', pkg=pkg, summary_fn=summary_fn, assemble_fn=assemble_fn, good=repr(metadata(cert_name)),
        missing=repr(metadata("nope.pem")), absolute=_expr(metadata(secret)), relative=relative,
        traversal=repr(metadata(f"../../{relative}")), cert_name=cert_name, copied=repr(metadata("copy-" + cert_name)))
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


_BUILDERS = {"config_import": _config_import, "invoice_parser": _invoice_parser, "feed_reader": _feed_reader,
             "metadata_include": _metadata_include}


def build(rng: random.Random, variant: str) -> Program:
    return _BUILDERS[variant](rng)


FAMILY = Family(name="xxe", cwe="CWE-611", title="XML external entity expansion",
                variants=("config_import", "invoice_parser", "feed_reader"), ood_variants=("metadata_include",),
                build=build)
