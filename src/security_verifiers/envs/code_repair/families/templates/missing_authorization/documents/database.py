"""The T_org_T workspace's database."""

import sqlite3

DB_PATH = ":memory:"
_conn = None


def connect() -> sqlite3.Connection:
    global _conn
    if _conn is None:
        _conn = sqlite3.connect(DB_PATH)
        _conn.execute("CREATE TABLE IF NOT EXISTS T_table_T (id INTEGER PRIMARY KEY, owner TEXT NOT NULL, "
                      "title TEXT NOT NULL, body TEXT NOT NULL)")
    return _conn
