"""Link previews for the T_org_T chat: URLs in a message are unfurled into cards showing the page's title."""

import html
import ipaddress
import re
import urllib.request
from urllib.parse import urlsplit

opener = urllib.request.urlopen
MAX_BYTES = T_max_bytes_T
BLOCKED_NAMES = {"localhost", "metadata.google.internal"}
_URL = re.compile(r"https?://[^\s<>\"']+")
_TITLE = re.compile(r"<title[^>]*>([^<]*)</title>", re.IGNORECASE)


def _reachable(host: str) -> bool:
    """Whether previews may be fetched from ``host``."""
    if host in BLOCKED_NAMES:
        return False
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return True
    return not (address.is_private or address.is_loopback or address.is_link_local)


def fetch(url: str) -> str:
    """The first MAX_BYTES of the page at ``url``, as text."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or not _reachable(parts.hostname):
        raise ValueError(f"cannot preview {url}")
    with opener(url, timeout=3) as response:
        return response.read(MAX_BYTES).decode("utf-8", "replace")


def title(page: str) -> str:
    match = _TITLE.search(page)
    return " ".join(html.unescape(match.group(1)).split()) if match else ""


def preview(url: str) -> dict:
    return {"url": url, "site": urlsplit(url).hostname, "title": title(fetch(url))}


def T_fn_T(message: str) -> list[dict]:
    """Previews of the distinct URLs in a chat message, in order; URLs that cannot be previewed are left out."""
    cards, done = [], set()
    for url in _URL.findall(message):
        url = url.rstrip(".,;:!?)")
        if url in done:
            continue
        done.add(url)
        try:
            cards.append(preview(url))
        except (ValueError, OSError):
            continue
    return cards


def card_html(item: dict) -> str:
    label = html.escape(item["title"] or item["site"])
    return f'<a class="preview" href="{html.escape(item["url"])}">{label}</a>'
