"""CWE-89, SQL injection: a program builds an SQL statement for sqlite3 from a caller's string.

Variants (every one runs on a real sqlite3 database the test module fills, with another account's secret in it):

- ``key_store``: the API keys of one account on a developer portal; the owner goes into the WHERE clause
  through an f-string;
- ``order_search``: a shop customer's order search; the search text goes into a LIKE pattern by ``+``;
- ``staff_export``: an HR directory export whose column names come from the export dialog (fix: an allowlist);
- ``wiki_tags`` (OOD): tags added to a wiki page in one ``executescript``, so stacked statements run.

The exploits read another account's secret column, which holds the run's canary (``' OR '1'='1``, ``UNION
SELECT``, a sub-select in the column list, a stacked INSERT or UPDATE); the reference fix binds parameters or
checks the columns against the allowlist.
"""

from __future__ import annotations

import hashlib
import random

from security_verifiers.envs.code_repair.families import Variants
from security_verifiers.envs.code_repair.families.kit import ORGS, PEOPLE, WORDS, Templates, location, pick, swap
from security_verifiers.envs.code_repair.program import Detect, Probe, Program

TEMPLATES = Templates(__name__)
VARIANTS = Variants()

LEAK = Detect(kind="contains", text="{canary}")


def _hex(rng: random.Random, digits: int) -> str:
    return f"{rng.getrandbits(4 * digits):0{digits}x}"


@VARIANTS.add()
def _key_store(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg, mod = f"{org}_portal", rng.choice(("keys", "api_keys", "credentials"))
    table = rng.choice(("api_keys", "access_keys", "client_keys"))
    col = rng.choice(("secret", "token", "key_value"))
    list_fn = rng.choice(("keys_for", "list_keys", "account_keys"))
    create = rng.choice(("issue_key", "create_key", "new_key"))
    revoke = rng.choice(("revoke_key", "delete_key", "drop_key"))
    prefix = rng.choice(("pk_", "ak_", "key_"))
    first, second, victim, nobody = pick(rng, PEOPLE, 4)
    labels = pick(rng, WORDS, 6)
    owned = {first: sorted(labels[:rng.randint(2, 4)]), second: sorted(labels[4:4 + rng.randint(1, 2)])}
    rows = [[owner, label, prefix + _hex(rng, 32)] for owner, names in owned.items() for label in names]
    rng.shuffle(rows)
    secrets_of = {(owner, label): key for owner, label, key in rows}
    database = TEMPLATES.render("key_store/database.py", org=org, upper=org.upper(), table=table, col=col)
    source = TEMPLATES.render("key_store/source.py", pkg=pkg, org=org, table=table, col=col, create=create,
                              list_fn=list_fn, revoke=revoke, prefix=prefix)
    fixed = swap(source,
        f'''db().execute(f"SELECT label, {col} FROM {table} WHERE owner = '{{owner}}' ORDER BY label")''',
        f'db().execute("SELECT label, {col} FROM {table} WHERE owner = ? ORDER BY label", (owner,))')
    path, db_path = f"{pkg}/{mod}.py", f"{pkg}/database.py"
    vlabel = rng.choice(("production", "billing", "payouts", "deploy"))
    some = next(row for row in rows if row[0] == first)
    tests = TEMPLATES.render("key_store/tests.py", pkg=pkg, mod=mod, rows=repr(rows), table=table, col=col,
                             victim=victim, vlabel=vlabel, list_fn=list_fn, create=create, revoke=revoke, prefix=prefix,
                             first=first, second=second, nobody=nobody, some_label=some[1], some_key=some[2])
    second_labels = sorted(owned[second] + ["ci"])
    return Program(
        family="sql_injection", variant="key_store", domain="developer portal API keys", cwe="CWE-89",
        files={db_path: database, path: source}, fixed={db_path: database, path: fixed},
        description=f"`{list_fn}(owner)` returns the API keys of one account (label and key, ordered by label) for "
                    f"its settings page; `{create}` issues a key and `{revoke}` deletes one. The owner comes from "
                    "the request.",
        location=location({path: source}, path, "WHERE owner = '{owner}'"),
        tests=tests,
        probes=[Probe(id="list", kind="functional",
                      expect=[{"label": label, "key": secrets_of[(first, label)]} for label in owned[first]]),
                Probe(id="list_other", kind="functional",
                      expect=[{"label": label, "key": secrets_of[(second, label)]} for label in owned[second]]),
                Probe(id="unknown", kind="functional", expect=[]),
                Probe(id="issue", kind="functional",
                      expect=[True, len(prefix) + 32, second_labels, [label == "ci" for label in second_labels],
                              len(second_labels)]),
                Probe(id="revoke", kind="functional", expect=[True, False, len(owned[first]) - 1]),
                Probe(id="fingerprint", kind="functional", expect=hashlib.sha256(some[2].encode()).hexdigest()[:12]),
                Probe(id="or_true", kind="exploit", detect=LEAK),
                Probe(id="union", kind="exploit", detect=LEAK),
                Probe(id="comment", kind="exploit", detect=LEAK)],
        static_ids=["B608"])


_ITEMS = ("desk lamp", "usb cable", "coffee mug", "lamp shade", "notebook", "backpack", "water bottle", "phone case",
          "travel mug", "cable tidy", "reading lamp", "yoga mat", "tea kettle", "desk mat")


def _money(cents: int) -> str:
    return f"{cents // 100}.{cents % 100:02d}"


@VARIANTS.add()
def _order_search(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg, mod = f"{org}_shop", rng.choice(("orders", "history", "order_history"))
    search = rng.choice(("search_orders", "find_orders", "order_search"))
    card = rng.choice(("card_token", "payment_ref", "card_ref"))
    term = rng.choice(("lamp", "mug", "cable"))
    customer_email = f"{pick(rng, PEOPLE)[0]}@{org}.example"
    victim_email = f"{pick(rng, PEOPLE)[0]}.{rng.randint(10, 99)}@mail.example"
    street = f"{rng.randint(2, 99)} {rng.choice(WORDS).title()} Road"
    # (customer index 1 or 2, item, cents): the customer's orders, with the victim's interleaved
    victim_first = rng.random() < 0.5
    ours = 2 if victim_first else 1
    theirs = 1 if victim_first else 2
    orders: list[tuple[int, str, int]] = []
    wanted = [i for i in _ITEMS if term in i]
    for k in range(rng.randint(5, 8)):
        item = rng.choice(wanted) if k < 2 else rng.choice(_ITEMS)
        orders.append((ours, item, rng.randint(199, 9999)))
        if rng.random() < 0.5:
            orders.append((theirs, rng.choice(_ITEMS), rng.randint(199, 9999)))
    orders.append((theirs, rng.choice(wanted), rng.randint(199, 9999)))
    database = TEMPLATES.render("order_search/database.py", org=org, card=card)
    source = TEMPLATES.render("order_search/source.py", pkg=pkg, org=org, search=search)
    fixed = swap(source,
        '''
            sql = ("SELECT id, item, cents, ship_to FROM orders WHERE customer_id = ? AND item LIKE '%" + text + "%' "
                   "ORDER BY id")
            rows, seconds = timed(sql, (customer_id,))
        ''',
        '''
            sql = "SELECT id, item, cents, ship_to FROM orders WHERE customer_id = ? AND item LIKE ? ORDER BY id"
            rows, seconds = timed(sql, (customer_id, f"%{text}%"))
        ''')
    path, db_path = f"{pkg}/{mod}.py", f"{pkg}/database.py"
    ship = f"{street}, {org.title()}ville"
    tests = TEMPLATES.render("order_search/tests.py", pkg=pkg, mod=mod, orders=repr(orders), ours=ours, theirs=theirs,
                             customer_email=customer_email, victim_email=victim_email, ship=ship, search=search,
                             term=term, upper=term.upper(), card=card)
    mine = [(number, item, cents) for number, (who, item, cents) in enumerate(orders, start=1) if who == ours]

    def hits(text: str) -> list[dict]:
        return [{"order": n, "item": item, "total": _money(cents), "ship_to": ship}
                for n, item, cents in mine if text.lower() in item.lower()]

    return Program(
        family="sql_injection", variant="order_search", domain="web shop order history", cwe="CWE-89",
        files={db_path: database, path: source}, fixed={db_path: database, path: fixed},
        description=f"`{search}(customer_id, text)` returns the signed-in customer's orders whose item name contains "
                    "`text` in any case, oldest first, with their totals and shipping addresses; `spent` sums the "
                    "customer's orders. The search text is typed in the shop's search box.",
        location=location({path: source}, path, "LIKE '%\" + text", extra_lines=1),
        tests=tests,
        probes=[Probe(id="search", kind="functional", expect=hits(term)),
                Probe(id="any_case", kind="functional", expect=hits(term)),
                Probe(id="nothing", kind="functional", expect=[]),
                Probe(id="spent", kind="functional", expect=_money(sum(c for _, _, c in mine))),
                Probe(id="new_order", kind="functional",
                      expect=[len(orders) + 1, [{"order": len(orders) + 1, "item": "Garden hose", "total": "12.50",
                                                 "ship_to": ship}]]),
                Probe(id="or_true", kind="exploit", detect=LEAK),
                Probe(id="union", kind="exploit", detect=LEAK),
                Probe(id="no_comment", kind="exploit", detect=LEAK)],
        static_ids=["B608"])


_TITLES = ("engineer", "analyst", "designer", "manager", "accountant", "recruiter", "technician", "writer")


@VARIANTS.add()
def _staff_export(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg, mod = f"{org}_hr", rng.choice(("directory", "staff_export", "people"))
    secret = rng.choice(("national_id", "ssn", "tax_id"))
    rows_fn = rng.choice(("export_rows", "directory_rows", "team_rows"))
    teams = sorted(pick(rng, WORDS, 3))
    people = pick(rng, PEOPLE, 9)
    staff = []
    for k, person in enumerate(people):
        staff.append({"name": person.title(), "team": teams[k % 3], "title": rng.choice(_TITLES),
                      "phone": f"+1 555 01{rng.randint(0, 99):02d}",
                      "office": f"{rng.choice('ABC')}{rng.randint(1, 40)}", "salary": rng.randint(40, 150) * 1000,
                      secret: f"{rng.randint(100, 999)}-{rng.randint(10, 99)}-x"})
    rng.shuffle(staff)
    victim = rng.randrange(len(staff))
    team = staff[victim]["team"]
    source = TEMPLATES.render("staff_export/source.py", org=org, secret=secret, rows_fn=rows_fn)
    fixed = swap(source,
        '''
            query = f"SELECT {', '.join(columns)} FROM staff WHERE team = ? ORDER BY name"
            return [[str(value) for value in row] for row in connect().execute(query, (team,))]
        ''',
        '''
            unknown = [column for column in columns if column not in EXPORTABLE]
            if unknown:
                raise ValueError(f"not an exportable column: {unknown}")
            query = f"SELECT {', '.join(columns)} FROM staff WHERE team = ? ORDER BY name"
            return [[str(value) for value in row] for row in connect().execute(query, (team,))]
        ''')
    path = f"{pkg}/{mod}.py"
    cols = ["name", "team", "title", "phone", "office", "salary", secret]
    table_rows = [[person[c] for c in cols] for person in staff]
    tests = TEMPLATES.render("staff_export/tests.py", pkg=pkg, mod=mod, rows=repr(table_rows), victim=victim,
                             rows_fn=rows_fn, team=team, other=next(t for t in teams if t != team), secret=secret)

    def export(which: str, columns: list[str]) -> list[list[str]]:
        chosen = sorted((p for p in staff if p["team"] == which), key=lambda p: p["name"])
        return [[str(p[c]) for c in columns] for p in chosen]

    exportable = ["name", "team", "title", "phone", "office"]
    other = next(t for t in teams if t != team)
    csv_cols = ["office", "name", "phone"]
    csv_text = ",".join(csv_cols) + "\n" + "".join(",".join(r) + "\n" for r in export(team, csv_cols))
    return Program(
        family="sql_injection", variant="staff_export", domain="HR directory export", cwe="CWE-89",
        files={path: source}, fixed={path: fixed},
        description=f"`{rows_fn}(team, columns)` returns the directory entries of one team with the chosen columns "
                    "(any of EXPORTABLE, which the export dialog offers), ordered by name; `export_csv` writes them "
                    "as CSV with a header. The team and the columns come from the dialog's request.",
        location=location({path: source}, path, "query = f\"SELECT {', '.join(columns)}"),
        tests=tests,
        probes=[Probe(id="rows", kind="functional", expect=export(team, ["name", "title"])),
                Probe(id="default", kind="functional", expect=export(other, exportable)),
                Probe(id="csv", kind="functional", expect=csv_text),
                Probe(id="teams", kind="functional", expect=teams),
                Probe(id="xml", kind="functional", expect=f'<staff team="{team}">' + "".join(
                    f"<person><name>{name}</name><office>{office}</office></person>"
                    for name, office in export(team, ["name", "office"])) + "</staff>"),
                Probe(id="unknown_column", kind="functional", expect="refused"),
                Probe(id="hidden_column", kind="exploit", detect=LEAK),
                Probe(id="subquery", kind="exploit", detect=LEAK),
                Probe(id="csv_columns", kind="exploit", detect=LEAK)],
        static_ids=[])  # bandit flags the f-string of the fix as well: the allowlist is invisible to it


@VARIANTS.add(ood=True)
def _wiki_tags(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg, mod = f"{org}_wiki", rng.choice(("tags", "tagging", "labels"))
    add = rng.choice(("add_tags", "tag_page", "attach_tags"))
    tagged = rng.choice(("pages_tagged", "find_tagged", "tagged_pages"))
    titles = [f"{w.title()} {rng.choice(('Runbook', 'Guide', 'Notes', 'FAQ', 'Design'))}" for w in pick(rng, WORDS, 3)]
    tags_a = pick(rng, ("python", "ops", "billing", "security", "onboarding", "api", "release", "database"), 3)
    source = TEMPLATES.render("wiki_tags/source.py", org=org, add=add, tagged=tagged)
    fixed = swap(source,
        r'''
            script = "".join(f"INSERT INTO tags (page_id, tag) VALUES ({int(page_id)}, '{tag}') "
                             "ON CONFLICT DO NOTHING;\n" for tag in clean)
            connect().executescript("BEGIN;\n" + script + "COMMIT;\n")
        ''',
        '''
            with connect() as db:
                db.executemany("INSERT INTO tags (page_id, tag) VALUES (?, ?) ON CONFLICT DO NOTHING",
                               [(page_id, tag) for tag in clean])
        ''')
    path = f"{pkg}/{mod}.py"
    mixed = [tags_a[0].upper(), f"  {tags_a[1]} ", tags_a[2].title(), tags_a[0]]
    tests = TEMPLATES.render("wiki_tags/tests.py", pkg=pkg, mod=mod, titles=repr(titles), add=add, tagged=tagged,
                             mixed=repr(mixed), t0=tags_a[0], t1=tags_a[1], t2=tags_a[2])
    return Program(
        family="sql_injection", variant="wiki_tags", domain="wiki page tagging", cwe="CWE-89",
        files={path: source}, fixed={path: fixed},
        description=f"`{add}(page_id, tags)` adds editor-typed tags (normalised to lower case, single spaces) to a "
                    f"wiki page in one transaction and returns how many tags the page has; `tags_of` and `{tagged}` "
                    "let readers browse them.",
        location=location({path: source}, path, "script = \"\".join(", extra_lines=2),
        tests=tests,
        probes=[Probe(id="add", kind="functional", expect=[3, sorted(tags_a)]),
                Probe(id="again", kind="functional", expect=[3, sorted([tags_a[0], tags_a[1], "two words"])]),
                Probe(id="browse", kind="functional", expect=[sorted(titles), [titles[0]], []]),
                Probe(id="empty", kind="functional", expect=[0, []]),
                Probe(id="stacked_insert", kind="exploit", detect=LEAK),
                Probe(id="stacked_update", kind="exploit", detect=LEAK),
                Probe(id="values_tuple", kind="exploit", detect=LEAK)],
        static_ids=["B608"])


FAMILY = VARIANTS.family(name="sql_injection", cwe="CWE-89", title="SQL injection")
