"""The shopping cart of the T_org_T web shop, which lives in the session cookie."""

from T_pkg_T.T_mod_T import dump_session, load_session


def T_add_T(cookie: str | None, sku: str, quantity: int = 1) -> str:
    """Put ``quantity`` of ``sku`` in the cart of the signed-in session; returns the new cookie value."""
    if quantity < 1:
        raise ValueError("quantity must be positive")
    session = load_session(cookie)
    if "user" not in session:
        raise PermissionError("sign in first")
    cart = session.setdefault("cart", {})
    cart[sku] = cart.get(sku, 0) + quantity
    return dump_session(session)


def cart_lines(cookie: str | None, prices: dict[str, int]) -> list[list]:
    """The cart of a session: SKU, quantity and line total (in cents), by SKU."""
    cart = load_session(cookie).get("cart", {})
    return [[sku, quantity, quantity * prices[sku]] for sku, quantity in sorted(cart.items())]
