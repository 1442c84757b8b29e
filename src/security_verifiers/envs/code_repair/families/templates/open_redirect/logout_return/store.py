"""The sessions of the T_org_T apps' single sign-on."""

import secrets

_sessions: dict[str, str] = {}


def start_session(user: str) -> str:
    token = secrets.token_urlsafe(24)
    _sessions[token] = user
    return token


def sessions_of(user: str) -> int:
    return sum(1 for owner in _sessions.values() if owner == user)


def end(token: str, everywhere: bool = False) -> None:
    """End one session, or with ``everywhere`` every session of its user."""
    user = _sessions.pop(token, None)
    if user is not None and everywhere:
        for other in [t for t, owner in _sessions.items() if owner == user]:
            del _sessions[other]
