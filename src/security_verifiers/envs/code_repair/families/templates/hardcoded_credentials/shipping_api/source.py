"""Client of the T_vendor_T shipping API used by the T_org_T shop: rates, labels and tracking."""

import json
import random
import time
import urllib.error
import urllib.request
from urllib.parse import quote, urlencode

from T_pkg_T import settings

opener = urllib.request.urlopen
ATTEMPTS = 3


def _backoff(attempt: int) -> float:
    """Seconds to wait before another attempt: doubling, with jitter so that clients do not retry in step."""
    return min(30.0, 0.5 * 2 ** attempt) * random.uniform(0.5, 1.0)


def _call(method: str, path: str, params: dict | None = None, body: dict | None = None) -> dict:
    url = settings.base_url() + path + ("?" + urlencode(params) if params else "")
    data = json.dumps(body, sort_keys=True).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers={
        "Authorization": f"Bearer {settings.api_token()}", "Accept": "application/json",
        "Content-Type": "application/json"})
    for attempt in range(ATTEMPTS):
        try:
            with opener(request, timeout=15) as response:
                return json.loads(response.read() or b"{}")
        except urllib.error.URLError:
            if attempt == ATTEMPTS - 1:
                raise
            time.sleep(_backoff(attempt))
    raise RuntimeError("unreachable")


def rate(origin: str, destination: str, grams: int) -> int:
    """The price in cents of shipping ``grams`` from postcode ``origin`` to postcode ``destination``."""
    return int(_call("GET", "/rates", {"from": origin, "to": destination, "weight_g": grams})["amount_cents"])


def create_label(order_id: str, address: dict) -> str:
    """Buy a label for an order; returns its tracking number."""
    return _call("POST", "/labels", body={"reference": order_id, "address": address})["tracking_number"]


def tracking(number: str) -> list[str]:
    """The statuses a parcel went through, oldest first."""
    reply = _call("GET", "/tracking/" + quote(number, safe=""))
    return [event["status"] for event in reply.get("events", [])]
