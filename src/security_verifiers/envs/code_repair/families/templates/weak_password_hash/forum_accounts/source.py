"""Member accounts of the T_org_T community forum, kept in sqlite."""

import os
import re
import shutil
import sqlite3
from contextlib import closing

from T_pkg_T import passwords

DB_PATH = os.environ.get("T_upper_T_FORUM_DB", "/var/lib/T_org_T/forum.sqlite3")
NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{2,23}")
MIN_PASSWORD = T_minimum_T


def _db() -> sqlite3.Connection:
    db = sqlite3.connect(DB_PATH)
    db.execute("CREATE TABLE IF NOT EXISTS T_table_T (name TEXT PRIMARY KEY, email TEXT NOT NULL, "
               "password TEXT NOT NULL, posts INTEGER NOT NULL DEFAULT 0)")
    return db


def T_register_T(name: str, email: str, password: str) -> None:
    """Create a member; ValueError for a malformed or taken name or a short password."""
    if not NAME.fullmatch(name):
        raise ValueError(f"bad member name: {name!r}")
    if len(password) < MIN_PASSWORD:
        raise ValueError(f"passwords have at least {MIN_PASSWORD} characters")
    with closing(_db()) as db, db:
        if db.execute("SELECT 1 FROM T_table_T WHERE name = ?", (name,)).fetchone():
            raise ValueError(f"name taken: {name}")
        db.execute("INSERT INTO T_table_T (name, email, password) VALUES (?, ?, ?)",
                   (name, email.strip().lower(), passwords.hash_password(password)))


def T_login_T(name: str, password: str) -> bool:
    """Whether ``password`` is the member's password."""
    with closing(_db()) as db:
        row = db.execute("SELECT password FROM T_table_T WHERE name = ?", (name,)).fetchone()
    return row is not None and passwords.password_matches(password, row[0])


def T_change_T(name: str, old: str, new: str) -> bool:
    """Replace the member's password when ``old`` is the current one."""
    if len(new) < MIN_PASSWORD:
        raise ValueError(f"passwords have at least {MIN_PASSWORD} characters")
    if not T_login_T(name, old):
        return False
    with closing(_db()) as db, db:
        db.execute("UPDATE T_table_T SET password = ? WHERE name = ?", (passwords.hash_password(new), name))
    return True


def roster() -> list[dict]:
    """The members with their post counts, by name."""
    with closing(_db()) as db:
        rows = db.execute("SELECT name, posts FROM T_table_T ORDER BY name").fetchall()
    return [{"name": name, "posts": posts} for name, posts in rows]


def backup(destination: str) -> None:
    """Copy the member database to ``destination`` (the nightly job runs this while the forum is read-only)."""
    shutil.copyfile(DB_PATH, destination)
