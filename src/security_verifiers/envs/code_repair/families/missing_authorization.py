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

from security_verifiers.envs.code_repair.families import Variants
from security_verifiers.envs.code_repair.families.kit import NOUNS, ORGS, PEOPLE, WORDS, Templates, line_of, pick, swap
from security_verifiers.envs.code_repair.program import Detect, Location, Probe, Program

TEMPLATES = Templates(__name__)
VARIANTS = Variants()

LEAK = Detect(kind="contains", text="{canary}")


def _span(source: str, path: str, needle: str, extra: int = 0) -> Location:
    start = line_of(source, needle)
    return Location(file=path, start=start, end=start + extra)


@VARIANTS.add()
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
    source = TEMPLATES.render("documents/source.py", org=org, pkg=pkg, noun=noun, noun_title=noun.title(), table=table,
                              create=create, get=get, export=export)
    database = TEMPLATES.render("documents/database.py", org=org, table=table)
    formats = TEMPLATES.render("documents/formats.py", noun=noun)
    fixed = swap(source, 'row = connect().execute("SELECT title, body FROM $table WHERE id = ?", (doc_id,)).fetchone()'
                 .replace("$table", table),
                 f'row = connect().execute("SELECT title, body FROM {table} WHERE id = ? AND owner = ?",\n'
                 '                            (doc_id, user)).fetchone()')
    path, db_path, formats_path = f"{pkg}/{mod}.py", f"{pkg}/database.py", f"{pkg}/formats.py"
    tests = TEMPLATES.render("documents/tests.py", pkg=pkg, mod=mod, create=create, get=get, export=export, owner=owner,
                             attacker=attacker, docs=repr(docs), leak_title=f"{words[0].title()} figures")
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


@VARIANTS.add()
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
    source = TEMPLATES.render("invoices/source.py", org=org, draft=draft, set_memo=set_memo)
    fixed = swap(source, '''
        if invoice_id not in _invoices:
            raise PermissionError(f"invoice {invoice_id} is not one of {user}'s")
        invoice = _invoices[invoice_id]''', '''
        invoice = _owned(user, invoice_id)''')
    path = f"{pkg}/{mod}.py"
    tests = TEMPLATES.render("invoices/tests.py", pkg=pkg, mod=mod, draft=draft, set_memo=set_memo, owner=owner,
                             attacker=attacker, customer=customer, lines=repr(lines), memo=memo)
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


@VARIANTS.add()
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
    source = TEMPLATES.render("tickets/source.py", org=org, agent0=agents[0], agent1=agents[1], deco=deco,
                              transcript=transcript)
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
    tests = TEMPLATES.render("tickets/tests.py", pkg=pkg, mod=mod, transcript=transcript, customer=customer,
                             attacker=attacker, agent=agent, subject=subject, first=first, answer=answer)
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


@VARIANTS.add(ood=True)
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
    source = TEMPLATES.render("notes_search/source.py", org=org, pkg=pkg, search=search)
    storage = TEMPLATES.render("notes_search/storage.py", org=org)
    fixed = swap(source, '''
        rows = db().execute("SELECT title, body FROM notes WHERE title LIKE ? ESCAPE '!' OR body LIKE ? ESCAPE '!' "
                            "ORDER BY pinned DESC, id DESC", (pattern, pattern))''', '''
        rows = db().execute("SELECT title, body FROM notes WHERE owner = ? AND "
                            "(title LIKE ? ESCAPE '!' OR body LIKE ? ESCAPE '!') "
                            "ORDER BY pinned DESC, id DESC", (user, pattern, pattern))''')
    path, storage_path = f"{pkg}/{mod}.py", f"{pkg}/storage.py"
    tests = TEMPLATES.render("notes_search/tests.py", pkg=pkg, mod=mod, search=search, owner=owner, attacker=attacker,
                             notes=repr(notes), word0=words[0], word1=words[1])
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


FAMILY = VARIANTS.family(name="missing_authorization", cwe="CWE-862", title="Missing authorization")
