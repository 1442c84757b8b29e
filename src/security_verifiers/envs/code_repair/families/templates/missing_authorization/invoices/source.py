"""Invoices of the T_org_T billing service.

Each invoice belongs to the account that drafted it; only that account may see or change it.
"""

import html
import itertools
import pickle
from dataclasses import asdict, dataclass, field


@dataclass
class Invoice:
    id: int
    owner: str
    customer: str
    lines: list = field(default_factory=list)
    memo: str = ""
    status: str = "draft"


_invoices: dict[int, Invoice] = {}
#: Each issued invoice as it was issued, pickled: what was sent stays on record whatever changes later.
_issued: dict[int, bytes] = {}
_ids = itertools.count(1)


def _owned(user: str, invoice_id: int) -> Invoice:
    invoice = _invoices.get(invoice_id)
    if invoice is None or invoice.owner != user:
        raise PermissionError(f"invoice {invoice_id} is not one of {user}'s")
    return invoice


def T_draft_T(user: str, customer: str) -> int:
    invoice = Invoice(id=next(_ids), owner=user, customer=customer)
    _invoices[invoice.id] = invoice
    return invoice.id


def add_line(user: str, invoice_id: int, description: str, cents: int) -> int:
    """Add a line to a draft; returns the new total in cents."""
    invoice = _owned(user, invoice_id)
    if invoice.status != "draft":
        raise ValueError("only drafts can be changed")
    invoice.lines.append([description, int(cents)])
    return total(user, invoice_id)


def total(user: str, invoice_id: int) -> int:
    return sum(cents for _, cents in _owned(user, invoice_id).lines)


def T_set_memo_T(user: str, invoice_id: int, memo: str) -> dict:
    """Set the note printed under the lines; returns the updated invoice."""
    if invoice_id not in _invoices:
        raise PermissionError(f"invoice {invoice_id} is not one of {user}'s")
    invoice = _invoices[invoice_id]
    invoice.memo = memo.strip()
    return asdict(invoice)


def issue(user: str, invoice_id: int) -> dict:
    invoice = _owned(user, invoice_id)
    if not invoice.lines:
        raise ValueError("an invoice needs at least one line")
    invoice.status = "issued"
    _issued[invoice_id] = pickle.dumps(invoice)
    return asdict(invoice)


def as_issued(user: str, invoice_id: int) -> dict:
    """The invoice as it was when it was issued."""
    _owned(user, invoice_id)
    if invoice_id not in _issued:
        raise ValueError("the invoice has not been issued")
    return asdict(pickle.loads(_issued[invoice_id]))


def render(user: str, invoice_id: int) -> str:
    """The invoice as an HTML fragment for the billing page."""
    invoice = _owned(user, invoice_id)
    rows = "".join(f"<tr><td>{html.escape(text)}</td><td>{cents / 100:.2f}</td></tr>"
                   for text, cents in invoice.lines)
    memo = f"<p>{html.escape(invoice.memo)}</p>" if invoice.memo else ""
    return f"<h1>{html.escape(invoice.customer)}</h1><table>{rows}</table>{memo}"


def invoices_of(user: str) -> list[int]:
    return sorted(number for number, invoice in _invoices.items() if invoice.owner == user)
