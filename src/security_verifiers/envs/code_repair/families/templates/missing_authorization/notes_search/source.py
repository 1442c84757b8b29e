"""Private notes of the T_org_T app.

Each user keeps their own notes, which nobody else can read. Notes can be pinned, and found again by any
piece of their title or text.
"""

from T_pkg_T.storage import db, like_pattern


def add(user: str, title: str, body: str) -> int:
    cursor = db().execute("INSERT INTO notes (owner, title, body) VALUES (?, ?, ?)", (user, title, body))
    return cursor.lastrowid


def read(user: str, note_id: int) -> dict:
    row = db().execute("SELECT title, body FROM notes WHERE id = ? AND owner = ?", (note_id, user)).fetchone()
    if row is None:
        raise PermissionError(f"{user} has no note {note_id}")
    return {"title": row[0], "body": row[1]}


def pin(user: str, note_id: int, pinned: bool = True) -> None:
    cursor = db().execute("UPDATE notes SET pinned = ? WHERE id = ? AND owner = ?",
                          (int(pinned), note_id, user))
    if cursor.rowcount == 0:
        raise PermissionError(f"{user} has no note {note_id}")


def overview(user: str) -> list[str]:
    """Titles of the user's notes, pinned first, newest first."""
    rows = db().execute("SELECT title FROM notes WHERE owner = ? ORDER BY pinned DESC, id DESC", (user,))
    return [title for (title,) in rows]


def T_search_T(user: str, text: str) -> list[dict]:
    """The user's notes whose title or body contains ``text`` (ignoring case), pinned first, newest first."""
    pattern = like_pattern(text.strip())
    rows = db().execute("SELECT title, body FROM notes WHERE title LIKE ? ESCAPE '!' OR body LIKE ? ESCAPE '!' "
                        "ORDER BY pinned DESC, id DESC", (pattern, pattern))
    return [{"title": title, "body": body} for title, body in rows]
