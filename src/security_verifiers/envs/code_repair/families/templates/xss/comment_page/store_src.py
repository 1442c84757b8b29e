"""Where the T_org_T blog keeps its readers' comments."""

import datetime
import sqlite3

_db = None


def db() -> sqlite3.Connection:
    """The comment store, made on first use."""
    global _db
    if _db is None:
        _db = sqlite3.connect(":memory:")
        _db.execute("CREATE TABLE comments (id INTEGER PRIMARY KEY, post TEXT, author TEXT, body TEXT, "
                    "posted TEXT)")
    return _db


def T_add_fn_T(post: str, author: str, body: str, day: datetime.date) -> int:
    """Store a reader's comment on a post; returns its id."""
    if not body.strip() or not author.strip():
        raise ValueError("a comment needs an author and a text")
    cursor = db().execute("INSERT INTO comments (post, author, body, posted) VALUES (?, ?, ?, ?)",
                          (post, author.strip(), body, day.isoformat()))
    db().commit()
    return cursor.lastrowid


def thread(post: str) -> list[tuple[str, str, str]]:
    """(author, body, posted) of a post's comments, oldest first."""
    return db().execute("SELECT author, body, posted FROM comments WHERE post = ? ORDER BY id",
                        (post,)).fetchall()
