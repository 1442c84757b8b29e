"""Product search of the T_org_T shop: /search?q=... renders the results page."""

import html
import sqlite3

PRODUCTS = T_products_T
PAGE = """<!doctype html>
<title>Search - T_org_T shop</title>
<form action="/search"><input name="q" value="%(query)s"><button>Search</button></form>
<h1>%(count)d results for %(query)s</h1>
<ul class="results">%(items)s</ul>"""
_db = None


def catalog() -> sqlite3.Connection:
    """The product table, loaded on first use."""
    global _db
    if _db is None:
        _db = sqlite3.connect(":memory:")
        _db.execute("CREATE TABLE products (name TEXT PRIMARY KEY, cents INTEGER NOT NULL)")
        _db.executemany("INSERT INTO products VALUES (?, ?)", PRODUCTS)
    return _db


def T_search_fn_T(query: str, limit: int = 20) -> list[tuple[str, int]]:
    """Products whose name contains query (any case), by name."""
    rows = catalog().execute("SELECT name, cents FROM products WHERE name LIKE ? ORDER BY name LIMIT ?",
                             ("%" + query + "%", limit))
    return rows.fetchall()


def _item(name: str, cents: int) -> str:
    return '<li>%s <span class="price">%d.%02d</span></li>' % (html.escape(name), cents // 100, cents % 100)


def T_page_fn_T(query: str) -> str:
    """The results page for what a shopper typed into the search box."""
    query = " ".join(query.split())
    rows = T_search_fn_T(query) if query else []
    return PAGE % {"query": query, "count": len(rows), "items": "".join(_item(*row) for row in rows)}
