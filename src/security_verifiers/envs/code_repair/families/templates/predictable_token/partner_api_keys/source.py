"""API keys for T_org_T's partner integrations: one live key per client, shown to the partner once.

Only a SHA-256 of each key is stored, so a leaked table does not leak usable keys.
"""

import hashlib
import random
import sqlite3
import string
import time

DB_PATH = "/var/lib/T_org_T/partners.sqlite3"
KEY_PREFIX = "T_prefix_T"
KEY_BODY = T_body_T
ALPHABET = string.ascii_letters + string.digits


def _db() -> sqlite3.Connection:
    db = sqlite3.connect(DB_PATH)
    db.execute("CREATE TABLE IF NOT EXISTS api_keys (client TEXT PRIMARY KEY, digest TEXT UNIQUE, "
               "created REAL NOT NULL)")
    return db


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def _generator(client_id: str) -> random.Random:
    return T_seed_form_T


def generate_key(client_id: str) -> str:
    """A new key: KEY_PREFIX, then KEY_BODY letters and digits."""
    rng = _generator(client_id)
    return KEY_PREFIX + "".join(rng.choice(ALPHABET) for _ in range(KEY_BODY))


def T_issue_T(client_id: str) -> str:
    """Give ``client_id`` a new key (replacing any old one) and return it."""
    key = generate_key(client_id)
    db = _db()
    with db:
        db.execute("INSERT OR REPLACE INTO api_keys VALUES (?, ?, ?)", (client_id, _digest(key), time.time()))
    db.close()
    return key


def T_auth_T(key: str) -> str | None:
    """The client a presented key belongs to, or None."""
    if not key.startswith(KEY_PREFIX):
        return None
    db = _db()
    row = db.execute("SELECT client FROM api_keys WHERE digest = ?", (_digest(key),)).fetchone()
    db.close()
    return row[0] if row else None


def T_revoke_T(client_id: str) -> bool:
    db = _db()
    with db:
        gone = db.execute("DELETE FROM api_keys WHERE client = ?", (client_id,)).rowcount
    db.close()
    return gone > 0
