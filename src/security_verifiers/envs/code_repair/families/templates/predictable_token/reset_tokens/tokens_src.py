"""The tokens of the T_org_T portal's password-reset links."""

import random
import string

TOKEN_LENGTH = T_length_T
ALPHABET = string.ascii_letters + string.digits


def new_token() -> str:
    """A fresh token: TOKEN_LENGTH letters and digits."""
    return "".join(random.choice(ALPHABET) for _ in range(TOKEN_LENGTH))
