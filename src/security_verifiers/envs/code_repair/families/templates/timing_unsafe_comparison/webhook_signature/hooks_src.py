"""Receives T_vendor_T webhooks for the T_org_T billing service and queues the events they carry."""

import json
from xml.sax.saxutils import quoteattr

from T_pkg_T import signing

_queue: list[dict] = []


def T_receive_T(headers: dict[str, str], body: bytes) -> int:
    """Handle one delivery; returns the HTTP status to answer with (202 once the event is queued)."""
    signature = headers.get(signing.SIGNATURE_HEADER)
    if not signature or not signing.T_verify_T(body, signature):
        return 401
    try:
        event = json.loads(body)
    except ValueError:
        return 400
    if not isinstance(event, dict) or not isinstance(event.get("type"), str):
        return 422
    _queue.append(event)
    return 202


def drain() -> list[dict]:
    """The queued events, oldest first; the queue is emptied."""
    events = list(_queue)
    _queue.clear()
    return events


def tally(events: list[dict]) -> dict[str, int]:
    """How many events of each type."""
    counts: dict[str, int] = {}
    for event in events:
        counts[event["type"]] = counts.get(event["type"], 0) + 1
    return counts


def tally_xml(events: list[dict]) -> str:
    """The tally as the XML the finance dashboard imports."""
    rows = "".join(f"<count type={quoteattr(kind)}>{n}</count>" for kind, n in sorted(tally(events).items()))
    return f"<events>{rows}</events>"
