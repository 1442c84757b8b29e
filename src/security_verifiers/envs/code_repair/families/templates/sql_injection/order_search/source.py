"""Order history of the T_org_T web shop: signed-in customers search their past orders by item name."""

from T_pkg_T.database import connect, timed

#: Searches slower than this many seconds are kept for the operators' report.
SLOW_S = 0.5
slow_searches: list[str] = []


def money(cents: int) -> str:
    return f"{cents // 100}.{cents % 100:02d}"


def T_search_T(customer_id: int, text: str) -> list[dict]:
    """The customer's orders whose item contains ``text`` (in any case), oldest first."""
    sql = ("SELECT id, item, cents, ship_to FROM orders WHERE customer_id = ? AND item LIKE '%" + text + "%' "
           "ORDER BY id")
    rows, seconds = timed(sql, (customer_id,))
    if seconds > SLOW_S:
        slow_searches.append(text)
    return [{"order": number, "item": item, "total": money(cents), "ship_to": ship_to}
            for number, item, cents, ship_to in rows]


def spent(customer_id: int) -> str:
    """What the customer has spent in all, in dollars."""
    query = "SELECT COALESCE(SUM(cents), 0) FROM orders WHERE customer_id = ?"
    return money(connect().execute(query, (customer_id,)).fetchone()[0])
