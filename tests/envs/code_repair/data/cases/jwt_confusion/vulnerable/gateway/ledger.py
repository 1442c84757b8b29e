"""Account statements of the Ledgerly API, behind the gateway's bearer tokens."""

from gateway.auth import authorize

ACCOUNTS = {
    "alice": [("2024-05-01", "salary", 412000), ("2024-05-03", "rent", -98000)],
    "bob": [("2024-05-02", "refund", 1250)],
}


def statement(header: str | None) -> dict:
    """The caller's own account: its entries and balance (in cents); needs the scope ledger:read."""
    user = authorize(header, "ledger:read")
    entries = ACCOUNTS.get(user, [])
    return {"user": user, "entries": [list(entry) for entry in entries],
            "balance": sum(amount for _, _, amount in entries)}
