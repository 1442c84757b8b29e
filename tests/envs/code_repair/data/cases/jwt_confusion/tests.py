import base64
import hashlib
import hmac
import json
import os

import gateway.auth as auth
import gateway.ledger as ledger

FAR = 4102444800  # 2100-01-01: the forged tokens do not expire during the run


def _b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _token(header, claims, key, digest):
    head = _b64(json.dumps(header).encode()) + "." + _b64(json.dumps(claims).encode())
    signature = hmac.new(key, head.encode(), digest).digest() if digest else b""
    return head + "." + _b64(signature)


def _public_key():
    # the key as the gateway reads it: public, in its keys/ folder (any client of the SSO can fetch it)
    with open(os.path.join(WORK, "keys", "sso_ed25519.pub"), "rb") as handle:  # noqa: F821 (the judge's WORK)
        return handle.read()


def _forged(alg, digest, user, scope):
    claims = {"iss": auth.ISSUER, "sub": user, "aud": auth.AUDIENCE, "scope": scope, "exp": FAR}
    return _token({"alg": alg, "typ": "JWT"}, claims, _public_key(), digest)


def _call(function, *args):
    try:
        return function(*args)
    except Exception as error:
        return type(error).__name__


def probe_statement(ctx):
    token = auth.issue("alice", ["ledger:read", "profile"])
    return _call(ledger.statement, "Bearer " + token)


def probe_scope(ctx):
    return [_call(auth.authorize, "Bearer " + auth.issue("bob", ["ledger:read"]), "ledger:write"),
            _call(auth.authorize, "bearer " + auth.issue("bob", ["ledger:read", "ledger:write"]), "ledger:write")]


def probe_audience(ctx):
    return _call(auth.authorize, "Bearer " + auth.issue("alice", ["ledger:read"], "billing-api"), "ledger:read")


def probe_no_token(ctx):
    return [_call(ledger.statement, None), _call(ledger.statement, "Basic YWxpY2U6c2VjcmV0"),
            _call(ledger.statement, "Bearer "), _call(ledger.statement, "Bearer not.a.token")]


def probe_tampered(ctx):
    head, _, signature = auth.issue("bob", ["ledger:read"]).rpartition(".")
    header = head.split(".")[0]
    claims = {"iss": auth.ISSUER, "sub": "alice", "aud": auth.AUDIENCE, "scope": "ledger:read", "exp": FAR}
    return _call(ledger.statement, f"Bearer {header}.{_b64(json.dumps(claims).encode())}.{signature}")


def probe_alg_none(ctx):
    claims = {"iss": auth.ISSUER, "sub": "alice", "aud": auth.AUDIENCE, "scope": "ledger:read", "exp": FAR}
    return _call(ledger.statement, "Bearer " + _token({"alg": "none"}, claims, b"", None))


def probe_hs256(ctx):
    return _call(ledger.statement, "Bearer " + _forged("HS256", hashlib.sha256, ctx["canary"], "ledger:read"))


def probe_hs512(ctx):
    return _call(auth.authorize, "Bearer " + _forged("HS512", hashlib.sha512, ctx["canary"], "admin"), "admin")


def probe_hs384(ctx):
    return _call(auth.authorize, "bearer " + _forged("HS384", hashlib.sha384, ctx["canary"], "ledger:write"),
                 "ledger:write")
