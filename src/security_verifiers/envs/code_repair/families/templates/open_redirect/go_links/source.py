"""go/ links for T_org_T: short names for internal pages, e.g. go/onboarding. Links may only point at the
company's own sites."""

import random
import re
import sqlite3

INTERNAL_HOSTS = ("T_host0_T", "T_host1_T")
NOT_FOUND = "T_not_found_T"
_SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{0,40}$")
_db = None


def db() -> sqlite3.Connection:
    global _db
    if _db is None:
        _db = sqlite3.connect(":memory:")
        _db.execute("CREATE TABLE links (slug TEXT PRIMARY KEY, target TEXT NOT NULL, owner TEXT NOT NULL, "
                    "hits INTEGER NOT NULL DEFAULT 0)")
    return _db


def _internal(target: str) -> bool:
    return target.startswith(tuple(f"https://{host}" for host in INTERNAL_HOSTS))


def T_create_T(slug: str, target: str, owner: str) -> str:
    """Create go/``slug`` pointing at ``target``; returns the short link."""
    if not _SLUG.match(slug):
        raise ValueError(f"bad slug: {slug!r}")
    if not _internal(target):
        raise ValueError("go links may only point at " + ", ".join(INTERNAL_HOSTS))
    try:
        db().execute("INSERT INTO links (slug, target, owner) VALUES (?, ?, ?)", (slug, target, owner))
    except sqlite3.IntegrityError:
        raise ValueError(f"go/{slug} exists already") from None
    return f"go/{slug}"


def T_follow_T(slug: str) -> str:
    """The Location for go/``slug`` (counting the visit), or NOT_FOUND."""
    row = db().execute("SELECT target FROM links WHERE slug = ?", (slug.lower(),)).fetchone()
    if row is None:
        return NOT_FOUND
    db().execute("UPDATE links SET hits = hits + 1 WHERE slug = ?", (slug.lower(),))
    return row[0]


def links_of(owner: str) -> list[list]:
    rows = db().execute("SELECT slug, hits FROM links WHERE owner = ? ORDER BY slug", (owner,))
    return [[slug, hits] for slug, hits in rows]


def lucky() -> str:
    """go/lucky: the Location of a link picked at random, for people who like to explore the intranet."""
    slugs = [row[0] for row in db().execute("SELECT slug FROM links ORDER BY slug")]
    return T_follow_T(random.choice(slugs)) if slugs else NOT_FOUND
