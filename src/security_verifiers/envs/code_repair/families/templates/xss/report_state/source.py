"""Admin reports of T_org_T: the revenue page draws its chart client-side from data embedded in the page."""

import html
import json
import pickle
import time

from T_pkg_T import ranking

#: The state of the last page rendered per title (pickled copies: later edits of the orders leave them be).
_last: dict[str, bytes] = {}
render_seconds: list[float] = []


def report_state(title: str, orders: list[dict]) -> dict:
    """What the chart script needs: the title, the ranking and the number of orders."""
    return {"title": title, "rows": ranking.T_top_fn_T(orders), "orders": len(orders)}


def last_state(title: str) -> dict | None:
    """The state the last page with this title was rendered from, if any."""
    return pickle.loads(_last[title]) if title in _last else None


def T_render_fn_T(title: str, orders: list[dict]) -> str:
    """The report page; customer names are the names customers registered with."""
    started = time.monotonic()
    current = report_state(title, orders)
    _last[title] = pickle.dumps(current)
    state = json.dumps(current, sort_keys=True)
    head = f"<!doctype html><html><head><title>{html.escape(title)}</title></head>"
    body = (f'<body><h1>{html.escape(title)}</h1><div id="chart"></div>'
            f"<script>window.REPORT = {state};</script>"
            '<script src="/static/report.js"></script></body></html>')
    render_seconds.append(time.monotonic() - started)
    return head + body
