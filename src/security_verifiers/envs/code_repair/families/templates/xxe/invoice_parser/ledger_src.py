"""The payables ledger: invoices booked for payment, once per supplier and number."""

import sqlite3
from string import Template

REMITTANCE = Template("${supplier}: invoice ${number}, ${total} ${currency}")


def book(db: sqlite3.Connection, invoice: dict) -> bool:
    """Record an invoice for payment; False when that supplier's invoice number was booked before."""
    db.execute("CREATE TABLE IF NOT EXISTS booked (supplier TEXT, number TEXT, total TEXT, "
               "PRIMARY KEY (supplier, number))")
    try:
        with db:
            db.execute("INSERT INTO booked VALUES (?, ?, ?)",
                       (invoice["supplier"], invoice["number"], invoice["total"]))
    except sqlite3.IntegrityError:
        return False
    return True


def remittance(invoices: list[dict]) -> str:
    """The remittance advice sent with a payment run: one line per invoice, by supplier and number."""
    ordered = sorted(invoices, key=lambda invoice: (invoice["supplier"], invoice["number"]))
    return "\n".join(REMITTANCE.substitute(invoice) for invoice in ordered)
