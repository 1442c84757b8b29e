"""Sign-in by one-time code for the T_org_T mobile app: a code is texted to the user's phone number.

A code is valid for CODE_TTL seconds and for MAX_ATTEMPTS tries; sending a new code replaces the old one.
"""

import hmac
import random
import string
import time

CODE_DIGITS = T_digits_T
CODE_TTL = T_ttl_T
MAX_ATTEMPTS = T_attempts_T
_pending: dict[str, dict] = {}


def normalize(phone: str) -> str:
    """``phone`` as + and digits only; a ValueError if it cannot be a phone number."""
    number = "+" + "".join(ch for ch in phone if ch in string.digits)
    if not 9 <= len(number) <= 16:
        raise ValueError(f"not a phone number: {phone!r}")
    return number


def T_send_T(phone: str, now: float | None = None) -> str:
    """Make a code for ``phone`` and return it (the SMS gateway sends it)."""
    now = time.time() if now is None else now
    T_form_T
    _pending[normalize(phone)] = {"code": code, "expires": now + CODE_TTL, "attempts": 0}
    return code


def T_check_T(phone: str, code: str, now: float | None = None) -> bool:
    """Whether ``code`` is the live code of ``phone``; a right code is used up."""
    now = time.time() if now is None else now
    number = normalize(phone)
    entry = _pending.get(number)
    if entry is None or entry["expires"] <= now or entry["attempts"] >= MAX_ATTEMPTS:
        _pending.pop(number, None)
        return False
    entry["attempts"] += 1
    if hmac.compare_digest(entry["code"], code.strip()):
        del _pending[number]
        return True
    return False


def message(code: str) -> str:
    """The text of the SMS."""
    return f"{code} is your T_org_T sign-in code. It expires in {CODE_TTL // 60} minutes."
