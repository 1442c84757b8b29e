"""Article addresses of the T_org_T CMS: editors pick a slug, readers open /posts/<slug>."""

import re
import sqlite3
import unicodedata

SLUG = re.compile(r"^([a-z0-9]+-?)*[a-z0-9]+$")
MAX_LENGTH = 80
_db = None


def db() -> sqlite3.Connection:
    """The article table, made on first use."""
    global _db
    if _db is None:
        _db = sqlite3.connect(":memory:")
        _db.execute("CREATE TABLE articles (slug TEXT PRIMARY KEY, title TEXT NOT NULL)")
    return _db


def T_suggest_fn_T(title: str) -> str:
    """A slug made from a title: its ASCII letters and digits in lower case, words joined by hyphens."""
    text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode().lower()
    return "-".join(re.findall(r"[a-z0-9]+", text))[:MAX_LENGTH].strip("-")


def T_valid_fn_T(slug: str) -> bool:
    """Whether slug is well formed: words of a-z and 0-9 joined by single hyphens, at most MAX_LENGTH long."""
    return len(slug) <= MAX_LENGTH and SLUG.match(slug) is not None


def publish(slug: str, title: str) -> None:
    """Store an article under the slug its editor chose."""
    if not T_valid_fn_T(slug):
        raise ValueError(f"not a valid slug: {slug!r}")
    with db():
        db().execute("INSERT INTO articles VALUES (?, ?)", (slug, title))


def title_of(slug: str) -> str | None:
    row = db().execute("SELECT title FROM articles WHERE slug = ?", (slug,)).fetchone()
    return row[0] if row else None
