"""Requests of the feed fetcher, sent through the company proxy, and how it follows redirects.

A plain-http request goes to the proxy in absolute form and carries the proxy's credentials; the proxy takes them
out before forwarding it. An https request goes through a CONNECT tunnel: the credentials go in the CONNECT
request, and the request itself travels encrypted to the origin server, which receives every header it holds.
"""

from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

from feedly.proxy import Proxy

REDIRECTS = (301, 302, 303, 307, 308)
PORTS = {"http": 80, "https": 443}


@dataclass
class Request:
    method: str
    url: str
    headers: dict = field(default_factory=dict)
    body: str = ""


def origin(url: str) -> tuple:
    """The scheme, host and port a URL addresses."""
    parts = urlsplit(url)
    if parts.scheme not in PORTS or not parts.hostname:
        raise ValueError(f"unsupported URL {url!r}")
    return parts.scheme, parts.hostname, parts.port or PORTS[parts.scheme]


def _proxy_credentials(request: Request, proxy: Proxy | None) -> None:
    """A plain-http request through the proxy carries the proxy's credentials (https ones: see wire())."""
    if proxy is not None and proxy.authorization() and origin(request.url)[0] == "http":
        request.headers["Proxy-Authorization"] = proxy.authorization()


def prepare(method: str, url: str, headers: dict | None = None, body: str = "", proxy: Proxy | None = None) -> Request:
    """A request ready to send (through ``proxy`` when one is given)."""
    origin(url)
    request = Request(method.upper(), url, dict(headers or {}), body)
    _proxy_credentials(request, proxy)
    return request


def follow(request: Request, status: int, location: str | None, proxy: Proxy | None = None) -> Request | None:
    """The request that follows a response of ``status`` with this Location header; None when it is no redirect.

    303 (and 301/302 after a POST) turns it into a GET without a body; a redirect to another origin drops the
    caller's Authorization and Cookie headers."""
    if status not in REDIRECTS or not location:
        return None
    url = urljoin(request.url, location)
    method, body = request.method, request.body
    if (status == 303 and method != "HEAD") or (status in (301, 302) and method == "POST"):
        method, body = "GET", ""
    headers = dict(request.headers)
    if not body:
        headers.pop("Content-Type", None)
    if origin(url) != origin(request.url):
        headers.pop("Authorization", None)
        headers.pop("Cookie", None)
    if proxy is not None and proxy.authorization():
        headers["Proxy-Authorization"] = proxy.authorization()
    return Request(method, url, headers, body)


def wire(request: Request, proxy: Proxy | None = None) -> dict:
    """What each party receives of a request, as header lines: the proxy, and the origin server of its URL."""
    scheme, host, port = origin(request.url)
    parts = urlsplit(request.url)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    authority = host if port == PORTS[scheme] else f"{host}:{port}"
    lines = [f"Host: {authority}"] + [f"{name}: {value}" for name, value in request.headers.items()]
    sent = "\r\n".join([f"{request.method} {target} HTTP/1.1", *lines])
    if proxy is None:
        return {"proxy": "", "origin": sent}
    if scheme == "http":  # the proxy reads the request in absolute form, and forwards it without its credentials
        forwarded = [line for line in lines if not line.lower().startswith("proxy-authorization:")]
        return {"proxy": "\r\n".join([f"{request.method} {request.url} HTTP/1.1", *lines]),
                "origin": "\r\n".join([f"{request.method} {target} HTTP/1.1", *forwarded])}
    connect = [f"CONNECT {host}:{port} HTTP/1.1", f"Host: {host}:{port}"]
    if proxy.authorization():
        connect.append(f"Proxy-Authorization: {proxy.authorization()}")
    return {"proxy": "\r\n".join(connect), "origin": sent}
