"""One-time sign-in links of the T_org_T portal and the sessions they open."""

import secrets
import time
from urllib.parse import urlencode

LINK_TTL_S = T_ttl_T
_pending: dict[str, tuple[str, float]] = {}
_sessions: dict[str, str] = {}


def magic_link(email: str, next_url: str | None = None) -> str:
    """A one-time sign-in link for ``email`` (what the mail contains)."""
    token = secrets.token_urlsafe(24)
    _pending[token] = (email, time.monotonic() + LINK_TTL_S)
    query = {"token": token, "next": next_url} if next_url else {"token": token}
    return "/login/verify?" + urlencode(query)


def redeem(token: str) -> str | None:
    """The address a link was mailed to; None when the link is unknown, used or expired (it works once)."""
    email, expires = _pending.pop(token, ("", 0.0))
    if not email or time.monotonic() > expires:
        return None
    return email


def open_session(email: str) -> str:
    session = secrets.token_urlsafe(24)
    _sessions[session] = email
    return session


def whoami(session: str | None) -> str | None:
    return _sessions.get(session) if session else None
