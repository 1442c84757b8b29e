"""Sign-out for the T_org_T apps: after signing out, users go back to the app they came from, if it is ours."""

from urllib.parse import urlsplit

from T_pkg_T import session_store

COMPANY_DOMAIN = "T_domain_T"
SIGNED_OUT_PAGE = "https://accounts.T_domain_T/signed-out"


def T_check_T(url: str) -> bool:
    """Whether ``url`` is an https address on the company's domain (or one of its subdomains)."""
    parts = urlsplit(url)
    return parts.scheme == "https" and parts.netloc.endswith(COMPANY_DOMAIN)


def T_fn_T(token: str, return_to: str | None = None, everywhere: bool = False) -> str:
    """End the session (all of the user's sessions with ``everywhere``); returns the Location to send the
    browser to: ``return_to`` when it is one of our apps, the signed-out page otherwise."""
    session_store.end(token, everywhere)
    if return_to and T_check_T(return_to):
        return return_to
    return SIGNED_OUT_PAGE
