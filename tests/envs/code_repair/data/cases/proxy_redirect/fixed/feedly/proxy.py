"""The outbound proxy of the feed fetcher, configured as a URL: `http://user:password@proxy.internal:3128`."""

import base64
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit


@dataclass(frozen=True)
class Proxy:
    host: str
    port: int
    username: str = ""
    password: str = ""

    def authorization(self) -> str | None:
        """The Proxy-Authorization value the proxy expects, when it needs credentials."""
        if not self.username:
            return None
        token = base64.b64encode(f"{self.username}:{self.password}".encode()).decode("ascii")
        return f"Basic {token}"


def proxy_from_url(url: str) -> Proxy:
    """The proxy a configuration URL names (percent-encoded credentials decoded)."""
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        raise ValueError(f"not an http proxy URL: {url!r}")
    return Proxy(parts.hostname, parts.port or 3128, unquote(parts.username or ""), unquote(parts.password or ""))
