"""Passwordless sign-in for the T_org_T portal.

We mail the user a one-time link; opening it signs them in and takes them back to the page they were on
when they asked for it (the ``next`` parameter of the link).
"""

from T_pkg_T import sessions

DEFAULT_LANDING = "T_landing_T"


def T_fn_T(next_url: str | None) -> str:
    """Where to send a user after sign-in: the page on this site they asked for, or DEFAULT_LANDING."""
    if next_url and next_url.startswith("/"):
        return next_url
    return DEFAULT_LANDING


def verify(token: str, next_url: str | None = None) -> dict:
    """Redeem a sign-in link; returns the new session (None if the link is unknown, used or expired) and the
    Location to redirect to."""
    email = sessions.redeem(token)
    if email is None:
        return {"session": None, "location": "/login?expired=1"}
    return {"session": sessions.open_session(email), "location": T_fn_T(next_url)}
