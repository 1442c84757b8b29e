"""Storage of the T_org_T notes app: one sqlite table, and how searches are written for it."""

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
