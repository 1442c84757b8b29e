"""Sessions of the T_org_T web shop, kept in a cookie so that any web node can serve any request."""

import base64
import pickle
import secrets

COOKIE_NAME = "T_org_T_session"


def new_session(user: str) -> dict:
    """The session of a user who has just signed in."""
    return {"user": user, "csrf": secrets.token_urlsafe(16), "cart": {}}


def dump_session(session: dict) -> str:
    """The cookie value that carries ``session``."""
    return base64.urlsafe_b64encode(pickle.dumps(session)).decode("ascii")


def load_session(cookie: str | None) -> dict:
    """The session a cookie carries; an empty one for a missing or damaged cookie."""
    if not cookie:
        return {}
    try:
        session = pickle.loads(base64.urlsafe_b64decode(cookie.encode("ascii")))
    except Exception:
        return {}
    return session if isinstance(session, dict) else {}


def set_cookie(session: dict) -> str:
    """The Set-Cookie header for a response."""
    return f"{COOKIE_NAME}={dump_session(session)}; Path=/; HttpOnly; Secure; SameSite=Lax"
