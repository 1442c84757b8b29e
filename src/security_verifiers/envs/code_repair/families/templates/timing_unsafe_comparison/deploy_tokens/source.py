"""Deploy tokens of the T_org_T CI: a POST to the deploy hook carries one as a bearer token.

The token is rotated now and then; during a rotation both the current and the previous token in
TOKENS_FILE are accepted, so that callers can switch over without downtime.
"""

import json
import shutil
from pathlib import Path

TOKENS_FILE = Path("/etc/T_org_T/deploy-tokens.json")


def accepted_tokens() -> list[str]:
    """The current token, and the previous one while a rotation is under way."""
    with open(TOKENS_FILE, encoding="utf-8") as handle:
        data = json.load(handle)
    return [token for token in (data.get("current"), data.get("previous")) if token]


def bearer(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, or None."""
    if not header:
        return None
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def T_authorized_T(token: str | None) -> bool:
    """Whether ``token`` is one of the accepted tokens."""
    return token is not None and token in accepted_tokens()


def rotate(new_token: str) -> None:
    """Make new_token the current token; the current one stays accepted as the previous one (the old file
    is kept beside it as .bak)."""
    shutil.copyfile(TOKENS_FILE, TOKENS_FILE.with_name(TOKENS_FILE.name + ".bak"))
    current = json.loads(TOKENS_FILE.read_text(encoding="utf-8")).get("current")
    TOKENS_FILE.write_text(json.dumps({"current": new_token, "previous": current}), encoding="utf-8")
