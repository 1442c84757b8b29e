"""The T_org_T web shop's database: its schema, its connection, and the accounts and orders written to it."""

import sqlite3
import time

DB_PATH = "/srv/T_org_T/shop.db"
SCHEMA = """
CREATE TABLE IF NOT EXISTS customers (id INTEGER PRIMARY KEY, email TEXT UNIQUE NOT NULL, T_card_T TEXT);
CREATE TABLE IF NOT EXISTS orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL, item TEXT NOT NULL,
                                   cents INTEGER NOT NULL, ship_to TEXT NOT NULL);
"""
_conn = None


def connect() -> sqlite3.Connection:
    global _conn
    if _conn is None:
        _conn = sqlite3.connect(DB_PATH)
        _conn.executescript(SCHEMA)
    return _conn


def register(email: str, T_card_T: str | None = None) -> int:
    """Create a customer account; returns its id."""
    with connect() as db:
        cursor = db.execute("INSERT INTO customers (email, T_card_T) VALUES (?, ?)", (email.lower(), T_card_T))
    return cursor.lastrowid


def place_order(customer_id: int, item: str, cents: int, ship_to: str) -> int:
    """Record an order; returns its number."""
    if cents <= 0:
        raise ValueError("an order must cost something")
    with connect() as db:
        cursor = db.execute("INSERT INTO orders (customer_id, item, cents, ship_to) VALUES (?, ?, ?, ?)",
                            (customer_id, item, cents, ship_to))
    return cursor.lastrowid


def timed(query: str, params: tuple = ()) -> tuple[list, float]:
    """The rows of a read-only query and the seconds it took (slow queries are counted by the caller)."""
    started = time.monotonic()
    rows = connect().execute(query, params).fetchall()
    return rows, time.monotonic() - started
