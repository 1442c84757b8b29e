"""Bearer tokens of the Ledgerly API gateway.

The single sign-on service signs access tokens with its Ed25519 key (EdDSA); the gateway checks them with the
public half, kept in OpenSSH format beside the private key in the project's keys/ folder. A token names its user
(`sub`), the API it is for (`aud`), its scopes (`scope`, space-separated) and when it expires (`exp`).
"""

import os
import time

import jwt

ISSUER = "https://sso.ledgerly.test"
AUDIENCE = "ledger-api"
LIFETIME = 900
KEY_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "keys")


class Unauthorized(Exception):
    """No valid token for this API (answered with 401)."""


class Forbidden(Exception):
    """A valid token that does not grant the scope (answered with 403)."""


def _key(name: str) -> str:
    with open(os.path.join(KEY_DIR, name), encoding="ascii") as handle:
        return handle.read()


def issue(user: str, scopes: list, audience: str = AUDIENCE) -> str:
    """An access token for ``user``, as the sign-on service hands it out after a login."""
    now = int(time.time())
    claims = {"iss": ISSUER, "sub": user, "aud": audience, "scope": " ".join(scopes), "iat": now,
              "exp": now + LIFETIME}
    return jwt.encode(claims, _key("sso_ed25519"), algorithm="EdDSA")


def verify(token: str) -> dict:
    """The claims of a valid token for this API; Unauthorized otherwise."""
    try:
        return jwt.decode(token, _key("sso_ed25519.pub"), algorithms=["EdDSA"],
                          audience=AUDIENCE, issuer=ISSUER, options={"require": ["exp", "sub"]})
    except jwt.PyJWTError as error:
        raise Unauthorized(str(error)) from None


def authorize(header: str | None, scope: str) -> str:
    """The user an `Authorization: Bearer <token>` header stands for, when its token grants ``scope``."""
    kind, _, token = (header or "").partition(" ")
    if kind.lower() != "bearer" or not token.strip():
        raise Unauthorized("a bearer token is required")
    claims = verify(token.strip())
    if scope not in str(claims.get("scope", "")).split():
        raise Forbidden(f"the token does not grant {scope}")
    return str(claims["sub"])
