"""API keys of the T_org_T developer portal: every account holds named keys for calling the public API."""

import hashlib
import secrets

from T_pkg_T.database import db


def T_create_T(owner: str, label: str) -> str:
    """Issue a new key called ``label`` for ``owner`` and return it (it is shown once, on creation)."""
    key = "T_prefix_T" + secrets.token_hex(16)
    with db():
        db().execute("INSERT INTO T_table_T (owner, label, T_col_T) VALUES (?, ?, ?)", (owner, label, key))
    return key


def T_list_fn_T(owner: str) -> list[dict]:
    """The keys of one account, ordered by label, as its settings page lists them."""
    rows = db().execute(f"SELECT label, T_col_T FROM T_table_T WHERE owner = '{owner}' ORDER BY label").fetchall()
    return [{"label": label, "key": key} for label, key in rows]


def fingerprint(key: str) -> str:
    """A short fingerprint of a key, written to audit logs instead of the key itself."""
    return hashlib.sha256(key.encode()).hexdigest()[:12]


def T_revoke_T(owner: str, label: str) -> bool:
    """Delete one key of ``owner``; whether it existed."""
    with db():
        cursor = db().execute("DELETE FROM T_table_T WHERE owner = ? AND label = ?", (owner, label))
    return cursor.rowcount == 1


def key_count(owner: str) -> int:
    return db().execute("SELECT COUNT(*) FROM T_table_T WHERE owner = ?", (owner,)).fetchone()[0]
