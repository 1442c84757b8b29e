"""The ledger of verified uploads: which stored files matched the digest their client claimed."""

import sqlite3

LEDGER = ":memory:"
_db = None


def connect() -> sqlite3.Connection:
    """The table of verified uploads (name, digest), made on first use."""
    global _db
    if _db is None:
        _db = sqlite3.connect(LEDGER)
        _db.execute("CREATE TABLE IF NOT EXISTS verified (name TEXT PRIMARY KEY, digest TEXT NOT NULL)")
    return _db


def record(name: str, digest: str) -> None:
    with connect() as db:
        db.execute("INSERT OR REPLACE INTO verified VALUES (?, ?)", (name, digest))


def verified() -> list[str]:
    return [row[0] for row in connect().execute("SELECT name FROM verified ORDER BY name")]
