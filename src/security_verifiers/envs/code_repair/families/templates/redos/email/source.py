"""Newsletter of T_org_T: visitors leave an address, confirm it from the mail we send, and are subscribed."""

import re
import secrets

ADDRESS = re.compile(r"^([a-zA-Z0-9]+[._+-]?)*[a-zA-Z0-9]+@([a-z0-9-]+\.)+[a-z]{2,}$")
MAX_ADDRESS = 254

pending: dict[str, str] = {}
subscribed: set[str] = set()


def normalize(address: str) -> str:
    """The address without surrounding blanks and with its domain in lower case."""
    local, at, domain = address.strip().rpartition("@")
    return f"{local}@{domain.lower()}" if at else address.strip()


def T_valid_fn_T(address: str) -> bool:
    """Whether a (normalized) address is one we can mail to."""
    return len(address) <= MAX_ADDRESS and ADDRESS.match(address) is not None


def T_signup_fn_T(address: str) -> str:
    """Start a subscription; returns the confirmation token that is mailed to the address."""
    address = normalize(address)
    if not T_valid_fn_T(address):
        raise ValueError("please enter a valid e-mail address")
    token = secrets.token_urlsafe(16)
    pending[token] = address
    return token


def confirm(token: str) -> bool:
    """Confirm a subscription with the token from the mail; False for an unknown or used token."""
    address = pending.pop(token, None)
    if address is None:
        return False
    subscribed.add(address)
    return True


def subscribers() -> list[str]:
    return sorted(subscribed)
