"""How the T_org_T forum keeps its members' passwords."""

import hashlib
import hmac


def hash_password(password: str) -> str:
    return hashlib.md5(password.encode("utf-8")).hexdigest()


def password_matches(password: str, stored: str) -> bool:
    return hmac.compare_digest(hash_password(password), stored)
