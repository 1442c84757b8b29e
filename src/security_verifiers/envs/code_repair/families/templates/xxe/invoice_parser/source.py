"""Supplier invoices arrive as XML documents; this reads the fields that accounts payable books."""

import xml.dom.minidom
import xml.sax
import xml.sax.handler
from decimal import Decimal


def _text(parent, tag: str) -> str:
    """The text of parent's first <tag> element ('' when there is none)."""
    nodes = parent.getElementsByTagName(tag)
    if not nodes:
        return ""
    return "".join(child.data for child in nodes[0].childNodes if child.nodeType == child.TEXT_NODE).strip()


def T_parse_fn_T(document: str) -> dict:
    """Number, supplier, currency, note, lines and total of an invoice document."""
    parser = xml.sax.make_parser()
    T_feature_on_T
    root = xml.dom.minidom.parseString(document, parser=parser).documentElement
    lines = [{"description": _text(line, "Description"), "quantity": int(_text(line, "Quantity")),
              "unit_price": _text(line, "UnitPrice")} for line in root.getElementsByTagName("Line")]
    total = sum((Decimal(line["unit_price"]) * line["quantity"] for line in lines), Decimal(0))
    return {"number": _text(root, "ID"), "supplier": _text(root, "Name"),
            "currency": root.getAttribute("currency") or "EUR", "note": _text(root, "Note"),
            "lines": lines, "total": str(total.quantize(Decimal("0.01")))}
