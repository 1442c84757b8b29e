"""Password reset for the T_org_T customer portal: a one-time link is mailed to the account's address.

The link carries a token; whoever presents it within TTL_SECONDS may set a new password for the account.
"""

import os
import sqlite3
import time
from contextlib import closing

from T_pkg_T import tokens

DB_PATH = os.environ.get("T_upper_T_RESET_DB", "/var/lib/T_org_T/resets.sqlite3")
TTL_SECONDS = T_ttl_T


def _connect() -> sqlite3.Connection:
    db = sqlite3.connect(DB_PATH)
    db.execute("CREATE TABLE IF NOT EXISTS resets "
               "(token TEXT PRIMARY KEY, email TEXT NOT NULL, expires REAL NOT NULL)")
    return db


def T_request_T(email: str, now: float | None = None) -> str:
    """Record a reset for ``email`` valid for TTL_SECONDS and return its token (for the mail)."""
    email = email.strip().lower()
    if email.count("@") != 1:
        raise ValueError(f"not an email address: {email!r}")
    now = time.time() if now is None else now
    token = tokens.new_token()
    with closing(_connect()) as db, db:
        db.execute("INSERT INTO resets VALUES (?, ?, ?)", (token, email, now + TTL_SECONDS))
    return token


def T_redeem_T(token: str, now: float | None = None) -> str | None:
    """The address ``token`` was issued for, if it is known and unexpired; a token works once."""
    now = time.time() if now is None else now
    with closing(_connect()) as db, db:
        row = db.execute("SELECT email, expires FROM resets WHERE token = ?", (token,)).fetchone()
        if row is None:
            return None
        db.execute("DELETE FROM resets WHERE token = ?", (token,))
    return row[0] if now < row[1] else None


def T_purge_T(now: float | None = None) -> int:
    """Delete the expired resets; returns how many there were."""
    now = time.time() if now is None else now
    with closing(_connect()) as db, db:
        return db.execute("DELETE FROM resets WHERE expires <= ?", (now,)).rowcount


def outstanding(email: str, now: float | None = None) -> int:
    """How many unexpired resets an address has."""
    now = time.time() if now is None else now
    with closing(_connect()) as db:
        query = "SELECT COUNT(*) FROM resets WHERE email = ? AND expires > ?"
        return db.execute(query, (email.strip().lower(), now)).fetchone()[0]
