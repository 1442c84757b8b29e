"""Return-to handling of the T_org_T single sign-on gateway.

The login form carries the page to come back to, percent-encoded, in a hidden field ``return_to``; after
sign-in the gateway redirects there, provided it is a page of this site.
"""

import html
from urllib.parse import quote, unquote, urlsplit

HOME = "T_home_T"


def is_local(path: str) -> bool:
    """Whether ``path`` is a path on this site (and not the address of another site)."""
    parts = urlsplit(path)
    return (path.startswith("/") and not path.startswith("//") and "\\" not in path
            and not parts.scheme and not parts.netloc)


def return_field(path: str) -> str:
    """The value of the hidden ``return_to`` field for ``path``."""
    return quote(path, safe="/")


def login_form(path: str, error: str = "") -> str:
    field = html.escape(return_field(path), quote=True)
    note = f'<p class="error">{html.escape(error)}</p>' if error else ""
    return (f'<form method="post" action="/sso/login">{note}'
            f'<input type="hidden" name="return_to" value="{field}"></form>')


def T_fn_T(return_to: str | None) -> str:
    """The Location to redirect to after sign-in, from the form's ``return_to`` field."""
    if return_to and is_local(return_to):
        return unquote(return_to)
    return HOME
