"""The proxy's in-memory store of fetched images: one record per origin address, oldest dropped first."""

import pickle
import time

MAX_ENTRIES = T_max_entries_T
_cache: dict[str, bytes] = {}


def get(url: str) -> bytes | None:
    record = _cache.get(url)
    return None if record is None else pickle.loads(record)["data"]


def put(url: str, data: bytes) -> None:
    if len(_cache) >= MAX_ENTRIES:
        _cache.pop(next(iter(_cache)))
    _cache[url] = pickle.dumps({"data": data, "stored": time.monotonic()})


def age(url: str) -> float:
    """Seconds since the image at ``url`` was stored."""
    return time.monotonic() - pickle.loads(_cache[url])["stored"]


def urls() -> list[str]:
    return sorted(_cache)


def drop(prefix: str) -> int:
    gone = [url for url in _cache if url.startswith(prefix)]
    for url in gone:
        del _cache[url]
    return len(gone)
