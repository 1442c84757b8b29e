"""Image proxy of the T_org_T storefront.

Pages ask for product images by their path relative to the media origin; the proxy fetches each image from
the origin once, keeps it in memory and serves it from there.
"""

import hashlib
import mimetypes
import urllib.request
from urllib.parse import urljoin

from T_pkg_T import cache

opener = urllib.request.urlopen
MEDIA_ORIGIN = "T_origin_T"


def origin_url(path: str) -> str:
    """The address on the media origin of the image at ``path``."""
    return urljoin(MEDIA_ORIGIN, path)


def T_fn_T(path: str) -> bytes:
    url = origin_url(path)
    data = cache.get(url)
    if data is None:
        with opener(url, timeout=5) as response:
            data = response.read()
        cache.put(url, data)
    return data


def serve(path: str) -> dict:
    """What the storefront sends for an image: its type, its size, and an ETag (SHA-256 prefix of the bytes)."""
    data = T_fn_T(path)
    kind = mimetypes.guess_type(path)[0] or "application/octet-stream"
    return {"type": kind, "length": len(data), "etag": hashlib.sha256(data).hexdigest()[:16]}


def cached() -> list[str]:
    return cache.urls()


def purge(prefix: str = "") -> int:
    """Drop the cached images whose origin address starts with MEDIA_ORIGIN + ``prefix``; returns how many."""
    return cache.drop(MEDIA_ORIGIN + prefix)
