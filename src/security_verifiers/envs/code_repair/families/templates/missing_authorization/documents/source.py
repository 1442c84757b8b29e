"""T_noun_title_T storage of the T_org_T workspace.

Every T_noun_T belongs to the user who created it; only its owner may open, rename or export it.
"""

from T_pkg_T import formats
from T_pkg_T.database import connect


def T_create_T(user: str, title: str, body: str = "") -> int:
    """Create a T_noun_T owned by ``user``; returns its id."""
    cursor = connect().execute("INSERT INTO T_table_T (owner, title, body) VALUES (?, ?, ?)", (user, title, body))
    connect().commit()
    return cursor.lastrowid


def T_get_T(user: str, doc_id: int) -> dict:
    row = connect().execute("SELECT title, body FROM T_table_T WHERE id = ? AND owner = ?",
                            (doc_id, user)).fetchone()
    if row is None:
        raise PermissionError(f"{user} has no T_noun_T {doc_id}")
    return {"id": doc_id, "title": row[0], "body": row[1]}


def rename(user: str, doc_id: int, title: str) -> None:
    cursor = connect().execute("UPDATE T_table_T SET title = ? WHERE id = ? AND owner = ?", (title, doc_id, user))
    connect().commit()
    if cursor.rowcount == 0:
        raise PermissionError(f"{user} has no T_noun_T {doc_id}")


def titles(user: str) -> list[str]:
    rows = connect().execute("SELECT title FROM T_table_T WHERE owner = ? ORDER BY title", (user,))
    return [title for (title,) in rows]


def T_export_T(user: str, doc_id: int, fmt: str = "markdown") -> str:
    """The T_noun_T as a file to download: Markdown (the title as a heading), JSON or XML."""
    row = connect().execute("SELECT title, body FROM T_table_T WHERE id = ?", (doc_id,)).fetchone()
    if row is None:
        raise PermissionError(f"{user} has no T_noun_T {doc_id}")
    return formats.render(*row, fmt)
