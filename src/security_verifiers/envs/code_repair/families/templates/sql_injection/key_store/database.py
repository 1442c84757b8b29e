"""The T_org_T portal's database connection, shared by the portal's modules."""

import os
import sqlite3

DB_PATH = os.environ.get("T_upper_T_PORTAL_DB", "/var/lib/T_org_T/portal.db")
_conn = None


def db() -> sqlite3.Connection:
    """The portal database, opened (and its table made) on first use."""
    global _conn
    if _conn is None:
        _conn = sqlite3.connect(DB_PATH)
        _conn.execute("CREATE TABLE IF NOT EXISTS T_table_T (owner TEXT NOT NULL, label TEXT NOT NULL, "
                      "T_col_T TEXT NOT NULL, PRIMARY KEY (owner, label))")
    return _conn
