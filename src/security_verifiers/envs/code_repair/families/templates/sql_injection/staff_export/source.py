"""Exports of the T_org_T staff directory: HR picks a team and the columns in the export dialog."""

import csv
import io
import sqlite3
import xml.etree.ElementTree as ET

DB_PATH = "/srv/hr/T_org_T.db"
#: The columns the export dialog offers.
EXPORTABLE = ("name", "team", "title", "phone", "office")
_conn = None


def connect() -> sqlite3.Connection:
    global _conn
    if _conn is None:
        _conn = sqlite3.connect(DB_PATH)
        _conn.execute("CREATE TABLE IF NOT EXISTS staff (id INTEGER PRIMARY KEY, name TEXT, team TEXT, "
                      "title TEXT, phone TEXT, office TEXT, salary INTEGER, T_secret_T TEXT)")
    return _conn


def hire(name: str, team: str, title: str, phone: str, office: str, salary: int, T_secret_T: str) -> int:
    with connect() as db:
        cursor = db.execute("INSERT INTO staff (name, team, title, phone, office, salary, T_secret_T) "
                            "VALUES (?, ?, ?, ?, ?, ?, ?)", (name, team, title, phone, office, salary, T_secret_T))
    return cursor.lastrowid


def T_rows_fn_T(team: str, columns: list[str] | tuple[str, ...] = EXPORTABLE) -> list[list[str]]:
    """The entries of one team with the chosen columns, ordered by name."""
    query = f"SELECT {', '.join(columns)} FROM staff WHERE team = ? ORDER BY name"
    return [[str(value) for value in row] for row in connect().execute(query, (team,))]


def export_csv(team: str, columns: list[str] | tuple[str, ...] = EXPORTABLE) -> str:
    """The same entries as a CSV document with a header line."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(T_rows_fn_T(team, columns))
    return buffer.getvalue()


def export_xml(team: str, columns: list[str] | tuple[str, ...] = EXPORTABLE) -> str:
    """The same entries as an XML document for the payroll system: one <person> per entry."""
    root = ET.Element("staff", team=team)
    for row in T_rows_fn_T(team, columns):
        person = ET.SubElement(root, "person")
        for column, value in zip(columns, row):
            ET.SubElement(person, column).text = value
    return ET.tostring(root, encoding="unicode")


def teams() -> list[str]:
    return [row[0] for row in connect().execute("SELECT DISTINCT team FROM staff ORDER BY team")]
