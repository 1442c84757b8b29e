"""Settings sync of the T_org_T desktop app: a device uploads its preferences, the other devices fetch them."""

import hashlib
import json
import pickle
import sqlite3
import zlib

DB_PATH = "/var/lib/T_org_T/sync.db"
DEFAULTS = T_defaults_T
_conn = None


def connect() -> sqlite3.Connection:
    global _conn
    if _conn is None:
        _conn = sqlite3.connect(DB_PATH)
        _conn.execute("CREATE TABLE IF NOT EXISTS prefs (user TEXT PRIMARY KEY, blob BLOB NOT NULL, "
                      "etag TEXT NOT NULL)")
    return _conn


def pack(prefs: dict) -> bytes:
    """The compact form in which devices send and receive preferences."""
    return zlib.compress(pickle.dumps(prefs))


def unpack(blob: bytes) -> dict:
    prefs = pickle.loads(zlib.decompress(blob))
    if not isinstance(prefs, dict):
        raise ValueError("preferences are a mapping")
    return prefs


def etag(prefs: dict) -> str:
    """A tag of the preferences' content, with which devices tell whether theirs are current."""
    return hashlib.sha256(json.dumps(prefs, sort_keys=True).encode()).hexdigest()[:16]


def T_upload_T(user: str, blob: bytes) -> str:
    """Store the preferences a device sent (unknown keys dropped, missing ones defaulted); returns the etag."""
    sent = unpack(blob)
    merged = {key: sent.get(key, default) for key, default in DEFAULTS.items()}
    with connect() as db:
        db.execute("INSERT INTO prefs (user, blob, etag) VALUES (?, ?, ?) ON CONFLICT (user) DO UPDATE "
                   "SET blob = excluded.blob, etag = excluded.etag", (user, pack(merged), etag(merged)))
    return etag(merged)


def T_fetch_T(user: str) -> dict:
    """The user's stored preferences (the defaults if none were uploaded)."""
    row = connect().execute("SELECT blob FROM prefs WHERE user = ?", (user,)).fetchone()
    return unpack(row[0]) if row else dict(DEFAULTS)


def current(user: str, tag: str) -> bool:
    row = connect().execute("SELECT etag FROM prefs WHERE user = ?", (user,)).fetchone()
    return row is not None and row[0] == tag
