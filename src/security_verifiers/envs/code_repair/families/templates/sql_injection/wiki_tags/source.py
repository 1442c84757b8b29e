"""Tags on the pages of the T_org_T wiki: editors add several tags at once, readers browse pages by tag."""

import sqlite3

DB_PATH = "/var/lib/wiki/T_org_T.db"
_conn = None


def connect() -> sqlite3.Connection:
    global _conn
    if _conn is None:
        _conn = sqlite3.connect(DB_PATH)
        _conn.executescript(
            "CREATE TABLE IF NOT EXISTS pages (id INTEGER PRIMARY KEY, title TEXT NOT NULL, "
            "draft TEXT NOT NULL DEFAULT '');"
            "CREATE TABLE IF NOT EXISTS tags (page_id INTEGER NOT NULL, tag TEXT NOT NULL, "
            "UNIQUE (page_id, tag));")
    return _conn


def create_page(title: str, draft: str = "") -> int:
    """A new page (its draft text is private to its authors); returns its id."""
    with connect() as db:
        return db.execute("INSERT INTO pages (title, draft) VALUES (?, ?)", (title, draft)).lastrowid


def normalise(tag: str) -> str:
    """Tags are lower case, with single spaces."""
    return " ".join(tag.lower().split())


def T_add_T(page_id: int, tags: list[str]) -> int:
    """Add tags to a page in one transaction (tags it has already are kept once); returns its tag count."""
    clean = [normalise(tag) for tag in tags if tag.strip()]
    script = "".join(f"INSERT INTO tags (page_id, tag) VALUES ({int(page_id)}, '{tag}') "
                     "ON CONFLICT DO NOTHING;\n" for tag in clean)
    connect().executescript("BEGIN;\n" + script + "COMMIT;\n")
    return connect().execute("SELECT COUNT(*) FROM tags WHERE page_id = ?", (page_id,)).fetchone()[0]


def tags_of(page_id: int) -> list[str]:
    cursor = connect().execute("SELECT tag FROM tags WHERE page_id = ? ORDER BY tag", (page_id,))
    return [row[0] for row in cursor]


def T_tagged_T(tag: str) -> list[str]:
    """Titles of the pages with a tag, in order."""
    cursor = connect().execute("SELECT title FROM pages JOIN tags ON tags.page_id = pages.id WHERE tag = ? "
                               "ORDER BY title", (normalise(tag),))
    return [row[0] for row in cursor]
