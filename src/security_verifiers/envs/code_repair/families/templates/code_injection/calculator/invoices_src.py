"""Invoices of the T_org_T invoicing app, built from amount fields as users typed them."""

import json
from string import Template

from T_pkg_T import formulas

TAX_RATES = T_rates_T
SUMMARY = Template("net ${net} + tax ${tax} = ${gross} (${region})")


def line_total(quantity: str, unit_price: str) -> float:
    """One invoice line: quantity times unit price, both as typed."""
    return round(formulas.T_calc_T(quantity) * formulas.T_calc_T(unit_price), 2)


def totals(lines: list[dict], region: str) -> dict:
    """Net, tax at the region's rate, and gross of an invoice's lines."""
    if region not in TAX_RATES:
        raise KeyError(f"no tax rate for {region}")
    net = round(sum(line_total(line["quantity"], line["price"]) for line in lines), 2)
    tax = round(net * TAX_RATES[region], 2)
    return {"net": net, "tax": tax, "gross": round(net + tax, 2)}


def summary(lines: list[dict], region: str) -> str:
    """The one-line summary under an invoice."""
    amounts = {key: f"{value:.2f}" for key, value in totals(lines, region).items()}
    return SUMMARY.substitute(amounts, region=region.upper())


def draft(lines: list[dict], region: str) -> str:
    """The JSON document saved for a draft invoice."""
    return json.dumps({"region": region, "lines": lines, "totals": totals(lines, region)}, sort_keys=True)


def T_split_T(total: float, parts: int) -> list[float]:
    """total shared into parts amounts that differ by at most a cent and add up to it exactly."""
    if parts < 1:
        raise ValueError("parts must be at least 1")
    share, rest = divmod(round(total * 100), parts)
    return [(share + (1 if k < rest else 0)) / 100 for k in range(parts)]
