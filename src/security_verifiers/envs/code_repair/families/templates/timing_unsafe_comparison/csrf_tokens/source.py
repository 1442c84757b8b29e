"""Account settings pages of the T_org_T web app.

Every form a session is shown carries the session's CSRF token in a hidden field; a POST is applied only
when the token comes back with it.
"""

import html
import secrets

_sessions: dict[str, dict] = {}


def start_session(user: str, email: str) -> str:
    """A session for a signed-in user; returns its id (the cookie's value)."""
    session_id = secrets.token_urlsafe(24)
    _sessions[session_id] = {"user": user, "email": email, "csrf": secrets.token_urlsafe(32)}
    return session_id


def csrf_field(session_id: str) -> str:
    """The hidden input every form of the session carries."""
    return f'<input type="hidden" name="csrf_token" value="{html.escape(_sessions[session_id]["csrf"])}">'


def settings_page(session_id: str) -> str:
    session = _sessions[session_id]
    return (f"<h1>Settings of {html.escape(session['user'])}</h1>\n"
            f'<form method="post" action="/settings/email">{csrf_field(session_id)}'
            f'<input name="email" value="{html.escape(session["email"])}"></form>')


def _token_matches(session: dict, form: dict[str, str]) -> bool:
    submitted = form.get("csrf_token")
    T_compare_T


def T_change_T(session_id: str, form: dict[str, str]) -> int:
    """Apply the e-mail form: 200, or 400 (not an address), 401 (no session) or 403 (token missing or wrong)."""
    session = _sessions.get(session_id)
    if session is None:
        return 401
    if not _token_matches(session, form):
        return 403
    email = form.get("email", "").strip()
    if email.count("@") != 1 or " " in email:
        return 400
    session["email"] = email
    return 200


def T_close_T(session_id: str, form: dict[str, str]) -> int:
    """Apply the close-account form, which repeats the user name; the session ends. 200, 400, 401 or 403."""
    session = _sessions.get(session_id)
    if session is None:
        return 401
    if not _token_matches(session, form):
        return 403
    if form.get("confirm") != session["user"]:
        return 400
    del _sessions[session_id]
    return 200


def account(session_id: str) -> dict[str, str] | None:
    session = _sessions.get(session_id)
    return None if session is None else {"user": session["user"], "email": session["email"]}
