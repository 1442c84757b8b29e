"""CWE-862, missing authorization: a multi-user store where one function forgets the access check its siblings make.

Variants:

- ``documents``: documents on sqlite; every query has ``AND owner = ?`` but the export's;
- ``invoices``: invoices in memory behind an ``_owned(user, id)`` helper; setting the memo looks the invoice up
  directly (a write path: another account's invoice can be changed, and it comes back whole);
- ``tickets``: a support desk whose functions take a ticket through an access-checking decorator (requester or
  agent); the transcript looks its ticket up itself;
- ``notes_search`` (OOD): private notes on sqlite; reading by id checks the owner, the full-text search searches
  everyone's notes (no id to guess: the leak is in a list).

The exploit probes create a record as one user through the API, with the run's canary in it, and act on it as
another user; the reference fix makes the same check the sibling functions make.
"""

from __future__ import annotations

import html
import json
import random

from security_verifiers.envs.code_repair.families import Family
from security_verifiers.envs.code_repair.families.kit import NOUNS, ORGS, PEOPLE, WORDS, fill, line_of, pick, swap
from security_verifiers.envs.code_repair.program import Detect, Location, Probe, Program

LEAK = Detect(kind="contains", text="{canary}")


def _span(source: str, path: str, needle: str, extra: int = 0) -> Location:
    start = line_of(source, needle)
    return Location(file=path, start=start, end=start + extra)


def _documents(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    noun = rng.choice(("document", "contract", "memo", "report", "statement"))
    pkg, mod = f"{org}_{noun}s", rng.choice(("store", "library", "repository"))
    table = noun + "s"
    create = rng.choice(("create", "save_new", "add_" + noun))
    get = rng.choice(("get", "open_" + noun, "load"))
    export = rng.choice(("export", "download", "export_" + noun))
    owner, attacker = pick(rng, PEOPLE, 2)
    words = pick(rng, WORDS, 6)
    docs = [(f"{words[0].title()} {noun}", f"Notes on {words[1]} and {words[2]}."),
            (f"{words[3].title()} plan", f"Step one: {words[4]}.\nStep two: {words[5]}."),
            (f"Archive {rng.randint(2019, 2025)}", "")]
    source = fill('''
        """${noun_title} storage of the $org workspace.

        Every $noun belongs to the user who created it; only its owner may open, rename or export it.
        """

        from ${pkg} import formats
        from ${pkg}.database import connect


        def $create(user: str, title: str, body: str = "") -> int:
            """Create a $noun owned by ``user``; returns its id."""
            cursor = connect().execute("INSERT INTO $table (owner, title, body) VALUES (?, ?, ?)", (user, title, body))
            connect().commit()
            return cursor.lastrowid


        def $get(user: str, doc_id: int) -> dict:
            row = connect().execute("SELECT title, body FROM $table WHERE id = ? AND owner = ?",
                                    (doc_id, user)).fetchone()
            if row is None:
                raise PermissionError(f"{user} has no $noun {doc_id}")
            return {"id": doc_id, "title": row[0], "body": row[1]}


        def rename(user: str, doc_id: int, title: str) -> None:
            cursor = connect().execute("UPDATE $table SET title = ? WHERE id = ? AND owner = ?", (title, doc_id, user))
            connect().commit()
            if cursor.rowcount == 0:
                raise PermissionError(f"{user} has no $noun {doc_id}")


        def titles(user: str) -> list[str]:
            rows = connect().execute("SELECT title FROM $table WHERE owner = ? ORDER BY title", (user,))
            return [title for (title,) in rows]


        def $export(user: str, doc_id: int, fmt: str = "markdown") -> str:
            """The $noun as a file to download: Markdown (the title as a heading), JSON or XML."""
            row = connect().execute("SELECT title, body FROM $table WHERE id = ?", (doc_id,)).fetchone()
            if row is None:
                raise PermissionError(f"{user} has no $noun {doc_id}")
            return formats.render(*row, fmt)
        ''', org=org, pkg=pkg, noun=noun, noun_title=noun.title(), table=table, create=create, get=get,
        export=export)
    database = fill('''
        """The $org workspace's database."""

        import sqlite3

        DB_PATH = ":memory:"
        _conn = None


        def connect() -> sqlite3.Connection:
            global _conn
            if _conn is None:
                _conn = sqlite3.connect(DB_PATH)
                _conn.execute("CREATE TABLE IF NOT EXISTS $table (id INTEGER PRIMARY KEY, owner TEXT NOT NULL, "
                              "title TEXT NOT NULL, body TEXT NOT NULL)")
            return _conn
        ''', org=org, table=table)
    formats = fill('''
        """The download formats of a $noun: Markdown, JSON, and XML for the archive system."""

        import json
        import xml.etree.ElementTree as ET


        def render(title: str, body: str, fmt: str = "markdown") -> str:
            if fmt == "json":
                return json.dumps({"title": title, "body": body}, sort_keys=True)
            if fmt == "markdown":
                return f"# {title}\\n\\n{body}\\n"
            if fmt == "xml":
                root = ET.Element("$noun")
                ET.SubElement(root, "title").text = title
                ET.SubElement(root, "body").text = body
                return ET.tostring(root, encoding="unicode")
            raise ValueError(f"unknown format: {fmt}")
        ''', noun=noun)
    fixed = swap(source, 'row = connect().execute("SELECT title, body FROM $table WHERE id = ?", (doc_id,)).fetchone()'
                 .replace("$table", table),
                 f'row = connect().execute("SELECT title, body FROM {table} WHERE id = ? AND owner = ?",\n'
                 '                            (doc_id, user)).fetchone()')
    path, db_path, formats_path = f"{pkg}/{mod}.py", f"{pkg}/database.py", f"{pkg}/formats.py"
    tests = fill('''
        import ${pkg}.${mod} as store
        import ${pkg}.database as database


        def _fresh():
            database.DB_PATH = ":memory:"
            database._conn = None


        def _ids():
            return [store.$create("$owner", title, body) for title, body in $docs]


        def probe_markdown(ctx):
            _fresh()
            ids = _ids()
            return [store.$export("$owner", ids[0]), store.$export("$owner", ids[2], fmt="markdown")]


        def probe_json(ctx):
            _fresh()
            ids = _ids()
            return store.$export("$owner", ids[1], "json")


        def probe_xml(ctx):
            _fresh()
            ids = _ids()
            return store.$export("$owner", ids[0], "xml")


        def probe_titles(ctx):
            _fresh()
            ids = _ids()
            store.rename("$owner", ids[2], "Zz old")
            store.$create("$attacker", "Mine", "x")
            return [store.titles("$owner"), store.titles("$attacker"), store.$get("$owner", ids[2])["title"]]


        def probe_checked(ctx):
            _fresh()
            ids = _ids()
            out = []
            for call in (lambda: store.$get("$attacker", ids[0]), lambda: store.rename("$attacker", ids[0], "x"),
                         lambda: store.$export("$owner", 999), lambda: store.$export("$owner", ids[0], "pdf")):
                try:
                    call()
                    out.append("ok")
                except Exception as error:
                    out.append(type(error).__name__)
            return out


        def probe_other_users(ctx):
            _fresh()
            doc_id = store.$create("$owner", "$leak_title", "figures: " + ctx["canary"])
            try:
                return store.$export("$attacker", doc_id)
            except Exception as error:
                return type(error).__name__


        def probe_enumerate(ctx):
            _fresh()
            store.$create("$owner", "Salary review " + ctx["canary"], "confidential")
            store.$create("$attacker", "My own", "")
            found = []
            for doc_id in range(1, 12):
                try:
                    found.append(store.$export("$attacker", doc_id, "json"))
                except Exception as error:
                    found.append(type(error).__name__)
            return found
        ''', pkg=pkg, mod=mod, create=create, get=get, export=export, owner=owner, attacker=attacker,
        docs=repr(docs), leak_title=f"{words[0].title()} figures")
    return Program(
        family="missing_authorization", variant="documents", domain="document storage", cwe="CWE-862",
        files={db_path: database, path: source, formats_path: formats},
        fixed={db_path: database, path: fixed, formats_path: formats},
        description=f"A {noun} store on sqlite: `{create}`, `{get}`, `rename`, `titles` and `{export}(user, doc_id, "
                    f"fmt)`, which returns the {noun} as Markdown, JSON or XML. Each {noun} belongs to the user who "
                    "created it; the user is the signed-in user, the id comes from the request.",
        location=_span(source, path, f'"SELECT title, body FROM {table} WHERE id = ?", (doc_id,)'),
        tests=tests,
        probes=[Probe(id="markdown", kind="functional", expect=[f"# {docs[0][0]}\n\n{docs[0][1]}\n",
                                                                f"# {docs[2][0]}\n\n\n"]),
                Probe(id="json", kind="functional", expect=json.dumps({"title": docs[1][0], "body": docs[1][1]},
                                                                      sort_keys=True)),
                Probe(id="xml", kind="functional", expect=f"<{noun}><title>{docs[0][0]}</title>"
                                                          f"<body>{docs[0][1]}</body></{noun}>"),
                Probe(id="titles", kind="functional", expect=[sorted([docs[0][0], docs[1][0], "Zz old"]), ["Mine"],
                                                              "Zz old"]),
                Probe(id="checked", kind="functional", expect=["PermissionError", "PermissionError",
                                                               "PermissionError", "ValueError"]),
                Probe(id="other_users", kind="exploit", detect=LEAK),
                Probe(id="enumerate", kind="exploit", detect=LEAK)])


def _invoices(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg, mod = f"{org}_billing", rng.choice(("invoices", "drafts", "ledger"))
    set_memo = rng.choice(("set_memo", "update_note", "annotate"))
    draft = rng.choice(("draft", "new_invoice", "start_invoice"))
    owner, attacker = pick(rng, PEOPLE, 2)
    customer = f"{rng.choice(ORGS).title()} {rng.choice(('Ltd', 'GmbH', 'Inc', 'BV'))}"
    items = [(f"{rng.choice(NOUNS)} {rng.choice(WORDS)}", rng.randint(100, 90000)) for _ in range(rng.randint(2, 4))]
    lines = [list(item) for item in items]
    memo = f"Payable within {rng.choice((14, 30, 60))} days <net>"
    source = fill('''
        """Invoices of the $org billing service.

        Each invoice belongs to the account that drafted it; only that account may see or change it.
        """

        import html
        import itertools
        import pickle
        from dataclasses import asdict, dataclass, field


        @dataclass
        class Invoice:
            id: int
            owner: str
            customer: str
            lines: list = field(default_factory=list)
            memo: str = ""
            status: str = "draft"


        _invoices: dict[int, Invoice] = {}
        #: Each issued invoice as it was issued, pickled: what was sent stays on record whatever changes later.
        _issued: dict[int, bytes] = {}
        _ids = itertools.count(1)


        def _owned(user: str, invoice_id: int) -> Invoice:
            invoice = _invoices.get(invoice_id)
            if invoice is None or invoice.owner != user:
                raise PermissionError(f"invoice {invoice_id} is not one of {user}'s")
            return invoice


        def $draft(user: str, customer: str) -> int:
            invoice = Invoice(id=next(_ids), owner=user, customer=customer)
            _invoices[invoice.id] = invoice
            return invoice.id


        def add_line(user: str, invoice_id: int, description: str, cents: int) -> int:
            """Add a line to a draft; returns the new total in cents."""
            invoice = _owned(user, invoice_id)
            if invoice.status != "draft":
                raise ValueError("only drafts can be changed")
            invoice.lines.append([description, int(cents)])
            return total(user, invoice_id)


        def total(user: str, invoice_id: int) -> int:
            return sum(cents for _, cents in _owned(user, invoice_id).lines)


        def $set_memo(user: str, invoice_id: int, memo: str) -> dict:
            """Set the note printed under the lines; returns the updated invoice."""
            if invoice_id not in _invoices:
                raise PermissionError(f"invoice {invoice_id} is not one of {user}'s")
            invoice = _invoices[invoice_id]
            invoice.memo = memo.strip()
            return asdict(invoice)


        def issue(user: str, invoice_id: int) -> dict:
            invoice = _owned(user, invoice_id)
            if not invoice.lines:
                raise ValueError("an invoice needs at least one line")
            invoice.status = "issued"
            _issued[invoice_id] = pickle.dumps(invoice)
            return asdict(invoice)


        def as_issued(user: str, invoice_id: int) -> dict:
            """The invoice as it was when it was issued."""
            _owned(user, invoice_id)
            if invoice_id not in _issued:
                raise ValueError("the invoice has not been issued")
            return asdict(pickle.loads(_issued[invoice_id]))


        def render(user: str, invoice_id: int) -> str:
            """The invoice as an HTML fragment for the billing page."""
            invoice = _owned(user, invoice_id)
            rows = "".join(f"<tr><td>{html.escape(text)}</td><td>{cents / 100:.2f}</td></tr>"
                           for text, cents in invoice.lines)
            memo = f"<p>{html.escape(invoice.memo)}</p>" if invoice.memo else ""
            return f"<h1>{html.escape(invoice.customer)}</h1><table>{rows}</table>{memo}"


        def invoices_of(user: str) -> list[int]:
            return sorted(number for number, invoice in _invoices.items() if invoice.owner == user)
        ''', org=org, draft=draft, set_memo=set_memo)
    fixed = swap(source, '''
        if invoice_id not in _invoices:
            raise PermissionError(f"invoice {invoice_id} is not one of {user}'s")
        invoice = _invoices[invoice_id]''', '''
        invoice = _owned(user, invoice_id)''')
    path = f"{pkg}/{mod}.py"
    tests = fill('''
        import ${pkg}.${mod} as billing


        def _fresh():
            ref(billing, "_invoices").clear()
            ref(billing, "_issued").clear()
            billing._ids = program_module("itertools").count(1)


        def _drafted(user, customer):
            invoice_id = billing.$draft(user, customer)
            for text, cents in $lines:
                billing.add_line(user, invoice_id, text, cents)
            return invoice_id


        def _name(call):
            try:
                call()
            except Exception as error:
                return type(error).__name__
            return "ok"


        def probe_total(ctx):
            _fresh()
            invoice_id = _drafted("$owner", "$customer")
            return [billing.total("$owner", invoice_id), billing.invoices_of("$owner"),
                    billing.invoices_of("$attacker")]


        def probe_memo(ctx):
            _fresh()
            invoice_id = _drafted("$owner", "$customer")
            return billing.$set_memo("$owner", invoice_id, "  $memo ")


        def probe_render(ctx):
            _fresh()
            invoice_id = _drafted("$owner", "$customer")
            billing.$set_memo("$owner", invoice_id, "$memo")
            return billing.render("$owner", invoice_id)


        def probe_checked(ctx):
            _fresh()
            invoice_id = _drafted("$owner", "$customer")
            return [_name(lambda: billing.total("$attacker", invoice_id)),
                    _name(lambda: billing.add_line("$attacker", invoice_id, "x", 1)),
                    _name(lambda: billing.render("$attacker", 99)), _name(lambda: billing.$set_memo("$owner", 99, "x"))]


        def probe_issued(ctx):
            _fresh()
            invoice_id = _drafted("$owner", "$customer")
            status = billing.issue("$owner", invoice_id)["status"]
            return [status, _name(lambda: billing.add_line("$owner", invoice_id, "late", 5)),
                    _name(lambda: billing.issue("$owner", billing.$draft("$owner", "Empty")))]


        def probe_as_issued(ctx):
            _fresh()
            invoice_id = _drafted("$owner", "$customer")
            billing.$set_memo("$owner", invoice_id, "first")
            billing.issue("$owner", invoice_id)
            billing.$set_memo("$owner", invoice_id, "second")
            return [billing.as_issued("$owner", invoice_id)["memo"], billing.render("$owner", invoice_id)[-13:],
                    _name(lambda: billing.as_issued("$attacker", invoice_id)),
                    _name(lambda: billing.as_issued("$owner", billing.$draft("$owner", "Later")))]


        def probe_read_back(ctx):
            _fresh()
            invoice_id = _drafted("$owner", "Customer " + ctx["canary"])
            billing.$draft("$attacker", "Mine")
            try:
                return billing.$set_memo("$attacker", invoice_id, "thanks")
            except Exception as error:
                return type(error).__name__


        def probe_tamper(ctx):
            _fresh()
            invoice_id = _drafted("$owner", "$customer")
            try:
                billing.$set_memo("$attacker", invoice_id, "New bank account: " + ctx["canary"])
            except Exception:
                pass
            return billing.render("$owner", invoice_id)
        ''', pkg=pkg, mod=mod, draft=draft, set_memo=set_memo, owner=owner, attacker=attacker, customer=customer,
        lines=repr(lines), memo=memo)
    rows = "".join(f"<tr><td>{html.escape(text)}</td><td>{cents / 100:.2f}</td></tr>" for text, cents in items)
    return Program(
        family="missing_authorization", variant="invoices", domain="billing", cwe="CWE-862",
        files={path: source}, fixed={path: fixed},
        description=f"An invoice store: `{draft}`, `add_line`, `total`, `{set_memo}(user, invoice_id, memo)` (sets "
                    "the note under the lines and returns the invoice), `issue` and `render`. Invoices belong to the "
                    "account that drafted them; `user` is the signed-in account, ids come from the request.",
        location=_span(source, path, "if invoice_id not in _invoices:", 2),
        tests=tests,
        probes=[Probe(id="total", kind="functional", expect=[sum(c for _, c in items), [1], []]),
                Probe(id="memo", kind="functional", expect={"id": 1, "owner": owner, "customer": customer,
                                                            "lines": lines, "memo": memo, "status": "draft"}),
                Probe(id="render", kind="functional", expect=f"<h1>{html.escape(customer)}</h1><table>{rows}</table>"
                                                             f"<p>{html.escape(memo)}</p>"),
                Probe(id="checked", kind="functional", expect=["PermissionError"] * 4),
                Probe(id="issued", kind="functional", expect=["issued", "ValueError", "ValueError"]),
                Probe(id="as_issued", kind="functional", expect=["first", "<p>second</p>", "PermissionError",
                                                                 "ValueError"]),
                Probe(id="read_back", kind="exploit", detect=LEAK),
                Probe(id="tamper", kind="exploit", detect=LEAK)])


def _tickets(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg, mod = f"{org}_support", rng.choice(("desk", "tickets", "helpdesk"))
    transcript = rng.choice(("transcript", "conversation", "export_thread"))
    deco = rng.choice(("visible", "ticket_access", "with_ticket"))
    agents = pick(rng, PEOPLE, 4)
    agent, customer, attacker = agents[0], agents[2], agents[3]
    subject = f"{rng.choice(NOUNS).title()} {rng.choice(('missing', 'wrong', 'late', 'duplicated'))}"
    first = f"My {rng.choice(NOUNS)} #{rng.randint(100, 999)} is {rng.choice(WORDS)}."
    answer = f"Thanks, we are looking into the {rng.choice(WORDS)} issue."
    source = fill('''
        """Support desk of $org: customers open tickets and follow them; agents of the support team see and answer
        every ticket."""

        import functools
        import itertools

        AGENTS = frozenset({"$agent0", "$agent1"})
        _tickets: dict[int, dict] = {}
        _ids = itertools.count(1)


        def $deco(func):
            """Call ``func(user, ticket, ...)`` with the ticket of the given id, if ``user`` may see it."""
            @functools.wraps(func)
            def wrapper(user: str, ticket_id: int, *args, **kwargs):
                ticket = _tickets.get(ticket_id)
                if ticket is None or (user != ticket["requester"] and user not in AGENTS):
                    raise PermissionError(f"no ticket {ticket_id} for {user}")
                return func(user, ticket, *args, **kwargs)
            return wrapper


        def open_ticket(user: str, subject: str, text: str) -> int:
            ticket_id = next(_ids)
            _tickets[ticket_id] = {"id": ticket_id, "requester": user, "subject": subject, "status": "open",
                                   "messages": [[user, text]]}
            return ticket_id


        @$deco
        def view(user: str, ticket: dict) -> dict:
            return {"subject": ticket["subject"], "status": ticket["status"], "messages": len(ticket["messages"])}


        @$deco
        def reply(user: str, ticket: dict, text: str) -> int:
            """Add a message; an agent's answer marks the ticket answered. Returns the number of messages."""
            ticket["messages"].append([user, text])
            if user in AGENTS:
                ticket["status"] = "answered"
            return len(ticket["messages"])


        @$deco
        def close(user: str, ticket: dict) -> str:
            ticket["status"] = "closed"
            return ticket["status"]


        def $transcript(user: str, ticket_id: int) -> str:
            """The whole conversation of a ticket as plain text (for the "mail me a copy" button)."""
            if ticket_id not in _tickets:
                raise PermissionError(f"no ticket {ticket_id} for {user}")
            ticket = _tickets[ticket_id]
            lines = [f"#{ticket['id']} {ticket['subject']} [{ticket['status']}]"]
            lines += [f"{author}: {text}" for author, text in ticket["messages"]]
            return "\\n".join(lines)


        def queue(user: str) -> list[int]:
            """Open tickets: all of them for an agent, their own for a customer."""
            return sorted(number for number, ticket in _tickets.items() if ticket["status"] != "closed"
                          and (user in AGENTS or ticket["requester"] == user))
        ''', org=org, agent0=agents[0], agent1=agents[1], deco=deco, transcript=transcript)
    fixed = swap(source, f'''
        def {transcript}(user: str, ticket_id: int) -> str:
            """The whole conversation of a ticket as plain text (for the "mail me a copy" button)."""
            if ticket_id not in _tickets:
                raise PermissionError(f"no ticket {{ticket_id}} for {{user}}")
            ticket = _tickets[ticket_id]''', f'''
        @{deco}
        def {transcript}(user: str, ticket: dict) -> str:
            """The whole conversation of a ticket as plain text (for the "mail me a copy" button)."""''')
    path = f"{pkg}/{mod}.py"
    tests = fill('''
        import ${pkg}.${mod} as desk


        def _fresh():
            ref(desk, "_tickets").clear()
            desk._ids = program_module("itertools").count(1)


        def _name(call):
            try:
                return call()
            except Exception as error:
                return type(error).__name__


        def _answered():
            ticket_id = desk.open_ticket("$customer", "$subject", "$first")
            desk.reply("$agent", ticket_id, "$answer")
            return ticket_id


        def probe_requester(ctx):
            _fresh()
            return desk.$transcript("$customer", _answered())


        def probe_agent(ctx):
            _fresh()
            ticket_id = _answered()
            desk.close("$customer", ticket_id)
            return desk.$transcript("$agent", ticket_id)


        def probe_checked(ctx):
            _fresh()
            ticket_id = _answered()
            return [_name(lambda: desk.view("$attacker", ticket_id)),
                    _name(lambda: desk.reply("$attacker", ticket_id, "x")),
                    _name(lambda: desk.$transcript("$customer", 77)), desk.view("$customer", ticket_id)]


        def probe_queue(ctx):
            _fresh()
            one = _answered()
            two = desk.open_ticket("$attacker", "Other", "text")
            desk.close("$agent", one)
            three = desk.open_ticket("$customer", "Again", "text")
            return [desk.queue("$agent"), desk.queue("$customer"), desk.queue("$attacker"), [one, two, three]]


        def probe_other_customer(ctx):
            _fresh()
            ticket_id = desk.open_ticket("$customer", "$subject", "Card number " + ctx["canary"])
            return _name(lambda: desk.$transcript("$attacker", ticket_id))


        def probe_walk_ids(ctx):
            _fresh()
            desk.open_ticket("$attacker", "Mine", "hello")
            desk.open_ticket("$customer", "Refund " + ctx["canary"], "$first")
            return [_name(lambda: desk.$transcript("$attacker", number)) for number in range(1, 6)]
        ''', pkg=pkg, mod=mod, transcript=transcript, customer=customer, attacker=attacker, agent=agent,
        subject=subject, first=first, answer=answer)
    head = f"#1 {subject} "
    talk = f"\n{customer}: {first}\n{agent}: {answer}"
    return Program(
        family="missing_authorization", variant="tickets", domain="support desk", cwe="CWE-862",
        files={path: source}, fixed={path: fixed},
        description=f"A support desk: customers open tickets; `view`, `reply`, `close` and `{transcript}(user, "
                    "ticket_id)` (the conversation as text) work for the ticket's requester and for AGENTS. `user` "
                    "is the signed-in user, ids come from the request.",
        location=_span(source, path, f"def {transcript}(user", 4),
        tests=tests,
        probes=[Probe(id="requester", kind="functional", expect=head + "[answered]" + talk),
                Probe(id="agent", kind="functional", expect=head + "[closed]" + talk),
                Probe(id="checked", kind="functional", expect=["PermissionError", "PermissionError",
                                                               "PermissionError",
                                                               {"subject": subject, "status": "answered",
                                                                "messages": 2}]),
                Probe(id="queue", kind="functional", expect=[[2, 3], [3], [2], [1, 2, 3]]),
                Probe(id="other_customer", kind="exploit", detect=LEAK),
                Probe(id="walk_ids", kind="exploit", detect=LEAK)])


def _notes_search(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg, mod = f"{org}_notes", rng.choice(("notes", "notebook", "journal"))
    search = rng.choice(("search", "find_notes", "lookup"))
    owner, attacker = pick(rng, PEOPLE, 2)
    words = pick(rng, WORDS, 5)
    notes = [(f"{words[0].title()} ideas", f"Try {words[1]} first, then {words[2]}."),
             (f"Groceries {rng.randint(1, 9)}", f"{words[3]}, {words[1]} and milk"),
             (f"{words[4].title()} budget", f"Spend 20% on {words[1]}s"),
             ("Phone numbers", f"{rng.choice(PEOPLE)}: +1 555 {rng.randint(1000, 9999)}")]
    source = fill('''
        """Private notes of the $org app.

        Each user keeps their own notes, which nobody else can read. Notes can be pinned, and found again by any
        piece of their title or text.
        """

        from ${pkg}.storage import db, like_pattern


        def add(user: str, title: str, body: str) -> int:
            cursor = db().execute("INSERT INTO notes (owner, title, body) VALUES (?, ?, ?)", (user, title, body))
            return cursor.lastrowid


        def read(user: str, note_id: int) -> dict:
            row = db().execute("SELECT title, body FROM notes WHERE id = ? AND owner = ?", (note_id, user)).fetchone()
            if row is None:
                raise PermissionError(f"{user} has no note {note_id}")
            return {"title": row[0], "body": row[1]}


        def pin(user: str, note_id: int, pinned: bool = True) -> None:
            cursor = db().execute("UPDATE notes SET pinned = ? WHERE id = ? AND owner = ?",
                                  (int(pinned), note_id, user))
            if cursor.rowcount == 0:
                raise PermissionError(f"{user} has no note {note_id}")


        def overview(user: str) -> list[str]:
            """Titles of the user's notes, pinned first, newest first."""
            rows = db().execute("SELECT title FROM notes WHERE owner = ? ORDER BY pinned DESC, id DESC", (user,))
            return [title for (title,) in rows]


        def $search(user: str, text: str) -> list[dict]:
            """The user's notes whose title or body contains ``text`` (ignoring case), pinned first, newest first."""
            pattern = like_pattern(text.strip())
            rows = db().execute("SELECT title, body FROM notes WHERE title LIKE ? ESCAPE '!' OR body LIKE ? ESCAPE '!' "
                                "ORDER BY pinned DESC, id DESC", (pattern, pattern))
            return [{"title": title, "body": body} for title, body in rows]
        ''', org=org, pkg=pkg, search=search)
    storage = fill('''
        """Storage of the $org notes app: one sqlite table, and how searches are written for it."""

        import sqlite3

        _db = None


        def db() -> sqlite3.Connection:
            global _db
            if _db is None:
                _db = sqlite3.connect(":memory:")
                _db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, owner TEXT NOT NULL, title TEXT NOT NULL, "
                            "body TEXT NOT NULL, pinned INTEGER NOT NULL DEFAULT 0)")
            return _db


        def like_pattern(text: str) -> str:
            """A LIKE pattern matching ``text`` anywhere, with LIKE's wildcards in ``text`` taken literally."""
            return "%" + text.replace("!", "!!").replace("%", "!%").replace("_", "!_") + "%"
        ''', org=org)
    fixed = swap(source, '''
        rows = db().execute("SELECT title, body FROM notes WHERE title LIKE ? ESCAPE '!' OR body LIKE ? ESCAPE '!' "
                            "ORDER BY pinned DESC, id DESC", (pattern, pattern))''', '''
        rows = db().execute("SELECT title, body FROM notes WHERE owner = ? AND "
                            "(title LIKE ? ESCAPE '!' OR body LIKE ? ESCAPE '!') "
                            "ORDER BY pinned DESC, id DESC", (user, pattern, pattern))''')
    path, storage_path = f"{pkg}/{mod}.py", f"{pkg}/storage.py"
    tests = fill('''
        import ${pkg}.${mod} as notes
        import ${pkg}.storage as storage


        def _fresh():
            storage._db = None
            ids = [notes.add("$owner", title, body) for title, body in $notes]
            notes.add("$attacker", "Todo", "call back")
            return ids


        def _name(call):
            try:
                return call()
            except Exception as error:
                return type(error).__name__


        def probe_search(ctx):
            ids = _fresh()
            notes.pin("$owner", ids[1])
            return notes.$search("$owner", "  $word1 ")


        def probe_case(ctx):
            _fresh()
            return [note["title"] for note in notes.$search("$owner", "$word0".upper())]


        def probe_literal_percent(ctx):
            _fresh()
            return [[note["title"] for note in notes.$search("$owner", "20%")],
                    [note["title"] for note in notes.$search("$owner", "2_%")]]


        def probe_overview(ctx):
            ids = _fresh()
            notes.pin("$owner", ids[2])
            return [notes.overview("$owner"), notes.overview("$attacker")]


        def probe_checked(ctx):
            ids = _fresh()
            return [_name(lambda: notes.read("$attacker", ids[0])), _name(lambda: notes.pin("$attacker", ids[0])),
                    _name(lambda: notes.read("$owner", ids[3]))]


        def probe_word_in_body(ctx):
            _fresh()
            notes.add("$owner", "Q3", "Quarterly numbers: " + ctx["canary"])
            return _name(lambda: notes.$search("$attacker", "quarterly"))


        def probe_match_all(ctx):
            _fresh()
            notes.add("$owner", "Wifi " + ctx["canary"], "password on the fridge")
            return _name(lambda: notes.$search("$attacker", ""))
        ''', pkg=pkg, mod=mod, search=search, owner=owner, attacker=attacker, notes=repr(notes), word0=words[0],
        word1=words[1])
    found = [{"title": t, "body": b} for t, b in notes if words[1] in t.lower() or words[1] in b.lower()]
    found = [n for n in found if n["title"] == notes[1][0]] + [n for n in reversed(found) if n["title"] != notes[1][0]]
    titles = [t for t, _ in notes]
    return Program(
        family="missing_authorization", variant="notes_search", domain="personal notes", cwe="CWE-862",
        files={storage_path: storage, path: source}, fixed={storage_path: storage, path: fixed},
        description=f"Private notes on sqlite: `add`, `read`, `pin`, `overview` and `{search}(user, text)`, which "
                    "returns the user's notes whose title or body contains `text`, pinned first, newest first. "
                    "`user` is the signed-in user; the text comes from the search box.",
        location=_span(source, path, "FROM notes WHERE title LIKE ?", 1),
        tests=tests,
        probes=[Probe(id="search", kind="functional", expect=found),
                Probe(id="case", kind="functional", expect=[notes[0][0]]),
                Probe(id="literal_percent", kind="functional", expect=[[notes[2][0]], []]),
                Probe(id="overview", kind="functional", expect=[[titles[2], titles[3], titles[1], titles[0]],
                                                                ["Todo"]]),
                Probe(id="checked", kind="functional", expect=["PermissionError", "PermissionError",
                                                               {"title": notes[3][0], "body": notes[3][1]}]),
                Probe(id="word_in_body", kind="exploit", detect=LEAK),
                Probe(id="match_all", kind="exploit", detect=LEAK)])


_BUILDERS = {"documents": _documents, "invoices": _invoices, "tickets": _tickets, "notes_search": _notes_search}


def build(rng: random.Random, variant: str) -> Program:
    return _BUILDERS[variant](rng)


FAMILY = Family(name="missing_authorization", cwe="CWE-862", title="Missing authorization",
                variants=("documents", "invoices", "tickets"), ood_variants=("notes_search",), build=build)
