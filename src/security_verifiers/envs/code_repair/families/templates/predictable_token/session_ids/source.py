"""Server-side sessions for the T_org_T admin dashboard, kept in this process's memory.

The session id is the only thing the browser holds (in the ``T_cookie_T`` cookie); it must stay secret.
"""

import time

from T_pkg_T import ids

SESSION_TTL = T_ttl_T
COOKIE_NAME = "T_cookie_T"
T_store_T: dict[str, dict] = {}


def T_open_fn_T(user: str, roles: list[str], now: float | None = None) -> str:
    """Start a session for ``user`` with ``roles``; returns its id."""
    now = time.time() if now is None else now
    session_id = ids.new_session_id(T_arg_T)
    T_store_T[session_id] = {"user": user, "roles": sorted(roles), "expires": now + SESSION_TTL}
    return session_id


def T_get_fn_T(session_id: str, now: float | None = None) -> dict | None:
    """The user and roles of a live session (its lifetime starts over), or None."""
    now = time.time() if now is None else now
    session = T_store_T.get(session_id)
    if session is None or session["expires"] <= now:
        T_store_T.pop(session_id, None)
        return None
    session["expires"] = now + SESSION_TTL
    return {"user": session["user"], "roles": list(session["roles"])}


def T_close_fn_T(session_id: str) -> bool:
    return T_store_T.pop(session_id, None) is not None


def cookie_header(session_id: str) -> str:
    """The Set-Cookie header that hands a session to the browser."""
    return f"{COOKIE_NAME}={session_id}; Max-Age={SESSION_TTL}; Path=/; HttpOnly; Secure; SameSite=Strict"


def signed_in(now: float | None = None) -> list[str]:
    """The users with a live session, each once, sorted."""
    now = time.time() if now is None else now
    return sorted({s["user"] for s in T_store_T.values() if s["expires"] > now})
