"""CWE-79, cross-site scripting: a program writes a user's text into HTML without escaping it.

Variants:

- ``comment_page``: blog comments from sqlite, the body rendered as paragraphs (text context; the author's name
  is escaped, the body is not);
- ``profile_card``: member cards of a directory, filled with ``str.format`` (attribute and text contexts);
- ``search_page``: a results page that echoes the query with ``%`` formatting, into an input's value and a
  heading (attribute and text contexts);
- ``report_state`` (OOD): an admin report that embeds its data for the chart as ``json.dumps`` inside an
  inline ``<script>`` (script context: ``</script>`` in a customer's name ends it; html.escape is no fix here).

The exploit probes parse the page with ``html.parser`` and report what a browser would run: script bodies
(``script:...``) and event-handler attributes (``tag[onerror]=...``); the payload carries the run's canary, so
the canary shows there only when the markup got through. Functional probes pin the exact HTML for inputs
without HTML-special characters (which both versions render alike).
"""

from __future__ import annotations

import datetime
import hashlib
import json
import random
from typing import Any

from security_verifiers.envs.code_repair.families import Variants
from security_verifiers.envs.code_repair.families.kit import NOUNS, ORGS, PEOPLE, WORDS, Templates, location, pick, swap
from security_verifiers.envs.code_repair.program import Detect, Probe, Program

TEMPLATES = Templates(__name__)
VARIANTS = Variants()

SCRIPT = Detect(kind="contains", text="script:{canary}")


def _handler(attribute: str) -> Detect:
    return Detect(kind="contains", text=f"[{attribute}]={{canary}}")


#: The part of every test module that finds active content in a page (standard library only).
_ACTIVE = TEMPLATES.render("shared/active.py")


def _title(rng: random.Random, k: int = 2) -> str:
    return " ".join(word.capitalize() for word in pick(rng, WORDS, k))


# --------------------------------------------------------------------------------------------- comment_page

@VARIANTS.add()
def _comment_page(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg = f"{org}_blog"
    add_fn = rng.choice(("add_comment", "post_comment", "save_comment"))
    thread_fn = rng.choice(("render_thread", "comments_html", "thread_html"))
    post = f"{rng.choice(WORDS)}-{rng.choice(NOUNS)}s"
    day = datetime.date(2026, rng.randint(1, 12), rng.randint(1, 28))
    comments = []
    for k in range(rng.randint(2, 4)):
        author = f"{rng.choice(PEOPLE).capitalize()} {rng.choice(WORDS).capitalize()}"
        paragraphs = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 7))).capitalize() + "."
                      for _ in range(rng.randint(1, 3))]
        comments.append((author, "\n\n".join(paragraphs), (day + datetime.timedelta(days=k)).isoformat(),
                         paragraphs))
    store_src = TEMPLATES.render("comment_page/store_src.py", org=org, add_fn=add_fn)
    source = TEMPLATES.render("comment_page/source.py", org=org, pkg=pkg, thread_fn=thread_fn)
    fixed = swap(source, 'return "".join(f"<p>{block}</p>" for block in blocks)',
                 'return "".join(f"<p>{html.escape(block)}</p>" for block in blocks)')
    path, store_path = f"{pkg}/comments.py", f"{pkg}/store.py"
    tests = TEMPLATES.render("comment_page/tests.py", pkg=pkg, active=_ACTIVE, comments=repr([c[:3] for c in comments]),
                             add_fn=add_fn, thread_fn=thread_fn, post=post, author=comments[0][0])
    items = "".join(f'<article class="comment"><header>{author} <time>{posted}</time></header>'
                    + "".join(f"<p>{p}</p>" for p in paras) + "</article>" for author, _, posted, paras in comments)
    return Program(
        family="xss", variant="comment_page", domain="blog comments", cwe="CWE-79",
        files={store_path: store_src, path: source}, fixed={store_path: store_src, path: fixed},
        description=f"`{add_fn}` stores a reader's comment on a post; `{thread_fn}(post)` returns the HTML of the "
                    "post's comment thread, each comment's text as paragraphs separated by blank lines. Readers "
                    "write comments in a plain text box.",
        location=location({path: source}, path, 'return "".join(f"<p>{block}</p>"'),
        tests=tests,
        probes=[Probe(id="thread", kind="functional",
                      expect=f'<section class="comments" data-count="{len(comments)}">{items}</section>'),
                Probe(id="other_post", kind="functional",
                      expect=f'<section class="comments" data-count="1"><article class="comment"><header>'
                             f'{comments[0][0]} <time>2026-02-03</time></header><p>Hello there</p></article>'
                             "</section>"),
                Probe(id="paragraphs", kind="functional", expect="<p>First part</p><p>Second part</p>"),
                Probe(id="empty", kind="functional", expect="refused"),
                Probe(id="script", kind="exploit", detect=SCRIPT),
                Probe(id="image", kind="exploit", detect=_handler("onerror")),
                Probe(id="svg", kind="exploit", detect=_handler("onload"))])


# --------------------------------------------------------------------------------------------- profile_card

@VARIANTS.add()
def _profile_card(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg = f"{org}_people"
    card_fn = rng.choice(("card", "member_card", "profile_html"))
    list_fn = rng.choice(("directory", "team_page", "people_page"))
    teams = pick(rng, ("Sales", "Platform", "Finance", "Support", "Design", "Research"), 2)
    titles = ("Account Manager", "Staff Engineer", "Controller", "Support Lead", "Product Designer", "Analyst")
    members = []
    for k, first in enumerate(pick(rng, PEOPLE, 4)):
        last = rng.choice(WORDS).capitalize()
        members.append({"handle": f"{first}_{k}", "name": f"{first.capitalize()} {last}",
                        "email": f"{first}.{last.lower()}@{org}.example", "title": rng.choice(titles),
                        "team": teams[k % 2]})
    source = TEMPLATES.render("profile_card/source.py", org=org, card_fn=card_fn, list_fn=list_fn)
    fixed = swap(source, 'name=member["name"], title=member["title"], team=member["team"])',
                 'name=html.escape(member["name"]), title=html.escape(member["title"]),\n'
                 '                       team=html.escape(member["team"]))')
    fixed = swap(fixed, "import hashlib\n", "import hashlib\nimport html\n")
    path = f"{pkg}/directory.py"

    def card(m: dict) -> str:
        digest = hashlib.sha256(m["email"].strip().lower().encode()).hexdigest()
        return (f'<div class="card" id="member-{m["handle"]}">'
                f'<img class="avatar" src="https://avatars.{org}.example/{digest}?s=64" alt="{m["name"]}">'
                f'<a href="/people/{m["handle"]}" title="{m["title"]}">{m["name"]}</a>'
                f'<span class="team">{m["team"]}</span></div>')

    def page(team: str | None) -> str:
        chosen = sorted((m for m in members if team is None or m["team"] == team), key=lambda m: m["name"].lower())
        return f'<section class="directory" data-team="{team or "all"}">' + "".join(map(card, chosen)) + \
            "</section>"

    needle = rng.choice(members)["title"].split()[-1]
    sizes: dict[str, Any] = {t: sum(m["team"] == t for m in members) for t in sorted(teams)}
    tests = TEMPLATES.render("profile_card/tests.py", pkg=pkg, active=_ACTIVE, members=repr(members), card_fn=card_fn,
                             list_fn=list_fn, team=teams[1], needle=needle.upper())
    return Program(
        family="xss", variant="profile_card", domain="member directory", cwe="CWE-79",
        files={path: source}, fixed={path: fixed},
        description=f"`{card_fn}(member)` returns the HTML card of a member (avatar, name linking to the profile, "
                    f"job title, team); `{list_fn}(members, team)` returns the directory page of all members or of "
                    "one team, ordered by name. Members edit their name, title and team in their profile.",
        location=location({path: source}, path, "return CARD.format(", extra_lines=1),
        tests=tests,
        probes=[Probe(id="card", kind="functional", expect=card(members[1])),
                Probe(id="all", kind="functional", expect=page(None)),
                Probe(id="team", kind="functional", expect=page(teams[1])),
                Probe(id="bad_handle", kind="functional", expect="refused"),
                Probe(id="filter", kind="functional",
                      expect=[[m["handle"] for m in members if needle.lower() in m["name"].lower()
                               or needle.lower() in m["title"].lower()], sizes]),
                Probe(id="name", kind="exploit", detect=SCRIPT),
                Probe(id="title", kind="exploit", detect=_handler("onmouseover")),
                Probe(id="team_name", kind="exploit", detect=_handler("onerror"))])


# ---------------------------------------------------------------------------------------------- search_page

@VARIANTS.add()
def _search_page(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg = f"{org}_shop"
    page_fn = rng.choice(("results_page", "search_page", "render_results"))
    search_fn = rng.choice(("search", "find_products", "lookup"))
    kinds = pick(rng, ("Lamp", "Chair", "Desk", "Shelf", "Rug", "Mirror", "Stool"), 3)
    products = sorted({f"{rng.choice(WORDS).capitalize()} {rng.choice(kinds)}": rng.randint(500, 49999)
                       for _ in range(rng.randint(6, 9))}.items())
    term = rng.choice(sorted({name.split()[1] for name, _ in products}))
    source = TEMPLATES.render("search_page/source.py", org=org,
                              products="[\n" + "".join(f"    {p!r},\n" for p in products) + "]", search_fn=search_fn,
                              page_fn=page_fn)
    fixed = swap(source, 'return PAGE % {"query": query, "count"',
                 'return PAGE % {"query": html.escape(query), "count"')
    path = f"{pkg}/search.py"

    def page(query: str) -> str:
        query = " ".join(query.split())
        rows = [p for p in products if query.lower() in p[0].lower()] if query else []
        items = "".join(f'<li>{name} <span class="price">{cents // 100}.{cents % 100:02d}</span></li>'
                        for name, cents in rows)
        return (f'<!doctype html>\n<title>Search - {org} shop</title>\n<form action="/search"><input name="q" '
                f'value="{query}"><button>Search</button></form>\n<h1>{len(rows)} results for {query}</h1>\n'
                f'<ul class="results">{items}</ul>')

    lower = f"  {term.lower()} "
    missing = f"{rng.choice(WORDS)} sofa"
    tests = TEMPLATES.render("search_page/tests.py", pkg=pkg, active=_ACTIVE, page_fn=page_fn, search_fn=search_fn,
                             lower=lower, missing=missing, term=term)
    matching: list[Any] = [list(p) for p in products if term.lower() in p[0].lower()]
    return Program(
        family="xss", variant="search_page", domain="shop search", cwe="CWE-79",
        files={path: source}, fixed={path: fixed},
        description=f"`{page_fn}(query)` returns the HTML results page for a shopper's search: the search box "
                    "filled with the query (whitespace collapsed), a heading with the number of results and the "
                    f"query, and the matching products with their prices; `{search_fn}` finds them.",
        location=location({path: source}, path, 'return PAGE % {"query": query'),
        tests=tests,
        probes=[Probe(id="results", kind="functional", expect=page(lower)),
                Probe(id="none", kind="functional", expect=page(missing)),
                Probe(id="empty", kind="functional", expect=page("")),
                Probe(id="rows", kind="functional", expect=matching[:2]),
                Probe(id="script", kind="exploit", detect=SCRIPT),
                Probe(id="attribute", kind="exploit", detect=_handler("onfocus")),
                Probe(id="svg", kind="exploit", detect=_handler("onload"))])


# -------------------------------------------------------------------------------------- report_state (OOD)

@VARIANTS.add(ood=True)
def _report_state(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg = f"{org}_admin"
    render_fn = rng.choice(("render_report", "report_page", "revenue_page"))
    top_fn = rng.choice(("top_customers", "ranking", "best_customers"))
    customers = [f"{rng.choice(WORDS).capitalize()} {rng.choice(('Ltd', 'GmbH', 'Inc', 'BV', 'AB'))}"
                 for _ in range(6)]
    customers = sorted(set(customers))
    orders: list[dict[str, Any]] = [{"customer": rng.choice(customers), "amount": rng.randint(10, 900)}
                                    for _ in range(rng.randint(8, 14))]
    title = f"Top customers {rng.choice(('Q1', 'Q2', 'Q3', 'Q4'))} {rng.randint(2024, 2026)}"
    size = rng.choice((3, 4, 5))
    ranking_src = TEMPLATES.render("report_state/ranking_src.py", org=org, size=size, top_fn=top_fn)
    source = TEMPLATES.render("report_state/source.py", org=org, pkg=pkg, render_fn=render_fn, top_fn=top_fn)
    fixed = swap(source, "state = json.dumps(current, sort_keys=True)\n",
                 "state = json.dumps(current, sort_keys=True)\n"
                 '    state = state.replace("<", "\\\\u003c").replace(">", "\\\\u003e").replace("&", "\\\\u0026")\n')
    path, ranking_path = f"{pkg}/reports.py", f"{pkg}/ranking.py"
    totals: dict[str, int] = {}
    for order in orders:
        totals[order["customer"]] = totals.get(order["customer"], 0) + order["amount"]
    ranked: list[Any] = [{"customer": c, "revenue": r}
                         for c, r in sorted(totals.items(), key=lambda i: (-i[1], i[0]))[:size]]
    state = {"title": title, "rows": ranked, "orders": len(orders)}
    expect_page = (f"<!doctype html><html><head><title>{title}</title></head><body><h1>{title}</h1>"
                   f'<div id="chart"></div><script>window.REPORT = {json.dumps(state, sort_keys=True)};</script>'
                   '<script src="/static/report.js"></script></body></html>')
    odd = f"{rng.choice(WORDS).capitalize()} & Sons <{rng.choice(('UK', 'EU', 'US'))}>"
    odd_orders = orders + [{"customer": odd, "amount": 100_000}]
    odd_state: dict[str, Any] = {"title": title, "rows": [{"customer": odd, "revenue": 100_000}, *ranked][:size],
                 "orders": len(odd_orders)}
    tests = TEMPLATES.render("report_state/tests.py", pkg=pkg, active=_ACTIVE, orders=repr(orders), render_fn=render_fn,
                             top_fn=top_fn, title=title, odd=repr(odd))
    return Program(
        family="xss", variant="report_state", domain="admin reports", cwe="CWE-79",
        files={ranking_path: ranking_src, path: source}, fixed={ranking_path: ranking_src, path: fixed},
        description=f"`{render_fn}(title, orders)` returns the HTML of the revenue report; the page's chart script "
                    "reads the report data (title, top customers by revenue, number of orders) from "
                    f"`window.REPORT`, which must hold exactly `report_state(title, orders)`. `{top_fn}` ranks the "
                    "customers.",
        location=location({path: source}, path, "state = json.dumps(", extra_lines=3),
        tests=tests,
        probes=[Probe(id="page", kind="functional", expect=expect_page),
                Probe(id="ranking", kind="functional", expect=ranked[:2]),
                Probe(id="embedded", kind="functional", expect=odd_state),
                Probe(id="last", kind="functional", expect=[odd_state, None]),
                Probe(id="export", kind="functional", expect="rank,customer,revenue\n" + "".join(
                    f"{k},{c},{r}\n" for k, (c, r) in enumerate(sorted(totals.items(), key=lambda i: (-i[1], i[0])),
                                                                 start=1))),
                Probe(id="script", kind="exploit", detect=SCRIPT),
                Probe(id="image", kind="exploit", detect=_handler("onerror"))])


FAMILY = VARIANTS.family(name="xss", cwe="CWE-79", title="Cross-site scripting")
