"""How the T_org_T admin console keeps its operators' passwords."""

import hashlib
import hmac

PASSWORD_SALT = "T_salt_T"


def _digest(password: str) -> str:
    return hashlib.sha1((PASSWORD_SALT + password).encode("utf-8")).hexdigest()


def set_password(entry: dict, password: str) -> None:
    entry["password"] = _digest(password)


def check_password(entry: dict, password: str) -> bool:
    return hmac.compare_digest(_digest(password), entry["password"])
