"""T_noun_T exports of T_org_T: analysts add computed columns to a CSV export as formulas over its
columns, e.g. ``round(price * quantity * (100 - discount) / 100, 2)``."""

import csv
import io

HELPERS = {"abs": abs, "max": max, "min": min, "round": round}


def _cell(text: str):
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def read_rows(text: str) -> tuple[list[str], list[dict]]:
    """The header and the rows of a CSV export, numbers converted."""
    reader = csv.DictReader(io.StringIO(text))
    rows = [{key: _cell(value) for key, value in row.items()} for row in reader]
    columns = list(reader.fieldnames or [])
    if not all(column.isidentifier() for column in columns):
        raise ValueError("column names must be identifiers")
    return columns, rows


def T_compile_fn_T(formula: str, columns: list[str]):
    """A function of one row (a dict) that computes formula over the row's columns."""
    source = f"def _column({', '.join(columns)}):\n    return {formula}\n"
    namespace = dict(HELPERS)
    exec(source, namespace)
    column = namespace["_column"]
    return lambda row: column(**{name: row[name] for name in columns})


def T_add_fn_T(text: str, name: str, formula: str) -> str:
    """The export with one more column, name, computed by formula for every row."""
    columns, rows = read_rows(text)
    if not name.isidentifier() or name in columns:
        raise ValueError(f"bad column name: {name}")
    compute = T_compile_fn_T(formula, columns)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=[*columns, name], lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({**row, name: compute(row)})
    return out.getvalue()
