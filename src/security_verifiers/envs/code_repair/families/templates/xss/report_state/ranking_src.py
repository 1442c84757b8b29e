"""Revenue rankings of T_org_T's customers, and their exports."""

import csv
import io
import xml.etree.ElementTree as ET

TOP = T_size_T


def T_top_fn_T(orders: list[dict], n: int = TOP) -> list[dict]:
    """The n customers with the highest revenue (ties by name), with their revenue."""
    totals: dict[str, int] = {}
    for order in orders:
        totals[order["customer"]] = totals.get(order["customer"], 0) + order["amount"]
    ranked = sorted(totals.items(), key=lambda item: (-item[1], item[0]))[:n]
    return [{"customer": name, "revenue": revenue} for name, revenue in ranked]


def revenue_csv(orders: list[dict]) -> str:
    """The whole ranking as CSV, for the export button."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["rank", "customer", "revenue"])
    for rank, row in enumerate(T_top_fn_T(orders, n=len(orders)), start=1):
        writer.writerow([rank, row["customer"], row["revenue"]])
    return out.getvalue()


def revenue_xml(orders: list[dict]) -> str:
    """The whole ranking as XML, for the accounting system's import."""
    root = ET.Element("ranking")
    for rank, row in enumerate(T_top_fn_T(orders, n=len(orders)), start=1):
        ET.SubElement(root, "customer", rank=str(rank), revenue=str(row["revenue"])).text = row["customer"]
    return ET.tostring(root, encoding="unicode")
