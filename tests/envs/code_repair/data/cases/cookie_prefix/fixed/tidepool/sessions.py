"""Sessions of the Tidepool web app.

The session cookie is `__Host-sid`: a browser accepts a cookie with that prefix only from this exact host, over
HTTPS, with `Path=/` and no `Domain`, so the other apps on sibling subdomains (the blog, the status page) can
neither set nor overwrite it. Everything else in the `Cookie:` header is theirs or the browser's.
"""

import secrets

COOKIE = "__Host-sid"
SESSIONS: dict = {}


def parse_cookie(header: str | None) -> dict:
    """The cookies of a `Cookie:` request header by name (a double-quoted value is unquoted)."""
    cookies = {}
    for pair in (header or "").split(";"):
        name, sep, value = pair.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name:  # a nameless cookie ("=value") is never one of ours
            continue
        if len(value) >= 2 and value[0] == value[-1] == '"':
            value = value[1:-1]
        cookies[name] = value
    return cookies


def login(user: str) -> str:
    """Start a session for ``user`` (who has just signed in); returns the Set-Cookie header's value."""
    sid = secrets.token_urlsafe(24)
    SESSIONS[sid] = user
    return f"{COOKIE}={sid}; Path=/; Secure; HttpOnly; SameSite=Lax"


def current_user(header: str | None) -> str | None:
    """The signed-in user of a request, from its `Cookie:` header; None when there is no live session."""
    sid = parse_cookie(header).get(COOKIE)
    return SESSIONS.get(sid) if sid else None


def logout(header: str | None) -> str:
    """End the request's session; returns the Set-Cookie header's value that clears the cookie."""
    sid = parse_cookie(header).get(COOKIE)
    if sid:
        SESSIONS.pop(sid, None)
    return f"{COOKIE}=; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=0"
