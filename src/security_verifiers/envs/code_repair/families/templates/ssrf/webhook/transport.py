"""HTTP delivery of the T_org_T platform's webhooks: signing, posting, and noting slow endpoints."""

import hashlib
import hmac
import time
import urllib.request

TIMEOUT_S = T_timeout_T
#: Endpoints that took longer than this many seconds are listed on the tenant's dashboard.
SLOW_S = 2.0
opener = urllib.request.urlopen
slow: list[str] = []


def signature(secret: str, body: bytes) -> str:
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def post(url: str, body: bytes, secret: str) -> int:
    """POST a JSON body, signed with ``secret``; the response status, 0 when the endpoint is unreachable."""
    request = urllib.request.Request(url, data=body, method="POST", headers={
        "Content-Type": "application/json", "X-Signature": signature(secret, body)})
    started = time.monotonic()
    try:
        with opener(request, timeout=TIMEOUT_S) as response:
            status = response.status
    except OSError:
        status = 0
    if time.monotonic() - started > SLOW_S:
        slow.append(url)
    return status
