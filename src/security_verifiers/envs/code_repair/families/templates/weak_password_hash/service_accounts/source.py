"""Service accounts of the T_org_T metrics push gateway.

Each team creates accounts for its jobs and chooses their secrets; jobs push metrics with HTTP basic auth.
"""

import base64
import binascii
import hashlib
import hmac
import os
import sqlite3

DB_PATH = "/var/lib/T_org_T/pushgateway.sqlite3"


def _db() -> sqlite3.Connection:
    db = sqlite3.connect(DB_PATH)
    db.execute("CREATE TABLE IF NOT EXISTS accounts (name TEXT PRIMARY KEY, team TEXT NOT NULL, "
               "secret TEXT NOT NULL)")
    return db


def _hash_secret(name: str, secret: str) -> str:
    return hashlib.sha256(f"{name}:{secret}".encode("utf-8")).hexdigest()


def _secret_matches(name: str, secret: str, stored: str) -> bool:
    return hmac.compare_digest(_hash_secret(name, secret), stored)


def T_create_T(name: str, team: str, secret: str) -> None:
    """Create a push account for ``team``; ValueError when the name is taken or the secret is short."""
    if len(secret) < 12:
        raise ValueError("secrets have at least 12 characters")
    db = _db()
    try:
        with db:
            db.execute("INSERT INTO accounts VALUES (?, ?, ?)", (name, team, _hash_secret(name, secret)))
    except sqlite3.IntegrityError:
        raise ValueError(f"account exists: {name}") from None
    finally:
        db.close()


def T_check_T(header: str) -> str | None:
    """The account an ``Authorization: Basic ...`` header authenticates, or None."""
    scheme, _, encoded = header.partition(" ")
    try:
        name, sep, secret = base64.b64decode(encoded, validate=True).decode("utf-8").partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return None
    if scheme != "Basic" or not sep:
        return None
    db = _db()
    row = db.execute("SELECT secret FROM accounts WHERE name = ?", (name,)).fetchone()
    db.close()
    return name if row is not None and _secret_matches(name, secret, row[0]) else None


def T_rotate_T(name: str, secret: str) -> bool:
    """Give an account a new secret; False for an unknown account."""
    if len(secret) < 12:
        raise ValueError("secrets have at least 12 characters")
    db = _db()
    with db:
        found = db.execute("UPDATE accounts SET secret = ? WHERE name = ?",
                           (_hash_secret(name, secret), name)).rowcount
    db.close()
    return found > 0


def accounts_of(team: str) -> list[str]:
    db = _db()
    names = [row[0] for row in db.execute("SELECT name FROM accounts WHERE team = ? ORDER BY name", (team,))]
    db.close()
    return names
