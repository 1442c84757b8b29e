"""Outgoing webhooks of the T_org_T platform.

Tenants subscribe an HTTP endpoint to an event; when the event happens it is POSTed there as JSON, signed
with the subscription's secret (HMAC-SHA256 of the body, hex, in the X-Signature header).
"""

import json
import sqlite3
from urllib.parse import urlsplit

from T_pkg_T import transport

DB_PATH = ":memory:"
_db = None


def db() -> sqlite3.Connection:
    global _db
    if _db is None:
        _db = sqlite3.connect(DB_PATH)
        _db.execute("CREATE TABLE IF NOT EXISTS hooks (id INTEGER PRIMARY KEY, tenant TEXT NOT NULL, "
                    "event TEXT NOT NULL, url TEXT NOT NULL, secret TEXT NOT NULL)")
    return _db


def T_subscribe_T(tenant: str, event: str, url: str, secret: str) -> int:
    """Subscribe the endpoint ``url`` to ``event`` for ``tenant``; returns the subscription's id."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http(s) endpoint: {url}")
    cursor = db().execute("INSERT INTO hooks (tenant, event, url, secret) VALUES (?, ?, ?, ?)",
                          (tenant, event, url, secret))
    db().commit()
    return cursor.lastrowid


def unsubscribe(tenant: str, hook_id: int) -> bool:
    cursor = db().execute("DELETE FROM hooks WHERE id = ? AND tenant = ?", (hook_id, tenant))
    db().commit()
    return cursor.rowcount == 1


def subscriptions(tenant: str) -> list[dict]:
    rows = db().execute("SELECT event, url FROM hooks WHERE tenant = ? ORDER BY id", (tenant,))
    return [{"event": event, "url": url} for event, url in rows]


def T_publish_T(tenant: str, event: str, data: dict) -> list[dict]:
    """POST ``event`` to every endpoint of ``tenant`` subscribed to it, in subscription order."""
    body = json.dumps({"event": event, "data": data}, sort_keys=True).encode()
    rows = db().execute("SELECT url, secret FROM hooks WHERE tenant = ? AND event = ? ORDER BY id",
                        (tenant, event)).fetchall()
    return [{"url": url, "status": transport.post(url, body, secret)} for url, secret in rows]
