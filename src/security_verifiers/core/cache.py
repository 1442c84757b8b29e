"""An on-disk cache of model completions, so a rerun or a resumed run does not pay for the same answer twice.

It is one sqlite table in WAL mode. Every write is its own transaction, so a run that is killed
mid-way leaves a consistent file holding every answer stored before the kill. The calls are
quick local reads and writes, so they are made synchronously from the event loop; one process
uses one :class:`ResponseCache` (sqlite's locking keeps a second reader of the file safe).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from security_verifiers.core.types import Completion

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, value TEXT NOT NULL, created REAL NOT NULL, "
    "model TEXT, base_url TEXT)"
)
#: Columns added after the first layout; a cache file written before them gains them, empty, when opened.
_ADDED_COLUMNS = ("model", "base_url")


class CacheOrigin(BaseModel):
    """Entries of one model at one endpoint (and one deployment, where the endpoint names it)."""

    model: str | None = Field(description="Model name; None for entries written before the cache recorded it.")
    base_url: str | None = Field(description="Endpoint; None for entries written before the cache recorded it.")
    system_fingerprint: str | None = Field(
        description="The endpoint's system_fingerprint (OpenAI's name for a backend configuration), when it sent one.")
    entries: int


class CacheInfo(BaseModel):
    """What ``sv cache info`` shows: where the cache is, how big it is, and whose answers it holds."""

    path: str
    entries: int
    bytes_on_disk: int = Field(description="The sqlite file with its write-ahead log and shared-memory file.")
    origins: list[CacheOrigin]


class ResponseCache:
    """Completions by request key, stored in the sqlite file at ``path`` (created if missing)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(self.path)
        # WAL: readers never block the writer, and a killed writer leaves the last commit intact.
        # synchronous=NORMAL is crash-safe for a killed process in WAL mode (only power loss can
        # drop the latest commits, never corrupt the file), and much faster than FULL.
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        with self._conn:
            self._conn.execute(_SCHEMA)
            present = {row[1] for row in self._conn.execute("PRAGMA table_info(responses)")}
            for column in _ADDED_COLUMNS:
                if column not in present:
                    self._conn.execute(f"ALTER TABLE responses ADD COLUMN {column} TEXT")

    @staticmethod
    def key(
        model: str,
        base_url: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        sampling: dict[str, Any],
        sample: int,
    ) -> str:
        """The sha256 of the canonical JSON of everything that can change the answer.

        - ``model`` and ``base_url``: the same model name served by another endpoint (a local vLLM
          versus OpenAI, another quantisation) is another model, so its answer must never be reused.
        - ``messages`` and ``tools``: the whole request the model sees, tool schemas included.
        - ``sampling``: a different temperature, token limit, top_p or seed gives another
          distribution of answers (a truncated reply must not stand in for a full one).
        - ``sample``: at temperature > 0 repeated rollouts of one item are meant to be independent
          draws; without the index every repeat would replay the first answer.
        """
        payload = {
            "model": model,
            "base_url": base_url,
            "messages": messages,
            "tools": tools,
            "sampling": sampling,
            "sample": sample,
        }
        canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    def get(self, key: str) -> Completion | None:
        """The stored completion, marked ``cached=True``; ``None`` on a miss.

        An entry that no longer validates (written by an older :class:`Completion` layout) is a
        miss, so it is fetched again and overwritten rather than failing the run.
        """
        row = self._conn.execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        try:
            completion = Completion.model_validate_json(row[0])
        except ValidationError:
            return None
        return completion.model_copy(update={"cached": True})

    def put(self, key: str, completion: Completion, *, model: str, base_url: str) -> None:
        """Store ``completion`` under ``key`` (replacing any entry) in one committed transaction.

        ``model`` and ``base_url`` are part of the key already; they are stored beside it too (the key is a hash) so
        that ``sv cache info`` can say whose answers the cache holds and ``sv cache clear --model`` remove them."""
        value = completion.model_copy(update={"cached": False}).model_dump_json()
        with self._conn:
            self._conn.execute(
                "INSERT OR REPLACE INTO responses (key, value, created, model, base_url) VALUES (?, ?, ?, ?, ?)",
                (key, value, time.time(), model, base_url),
            )

    def info(self) -> CacheInfo:
        """Entries, size on disk and the models, endpoints and deployments the answers came from."""
        rows = self._conn.execute(
            "SELECT model, base_url, json_extract(value, '$.system_fingerprint') AS fp, COUNT(*) FROM responses "
            "GROUP BY model, base_url, fp ORDER BY model, base_url, fp").fetchall()
        origins = [CacheOrigin(model=m, base_url=u, system_fingerprint=fp, entries=n) for m, u, fp, n in rows]
        files = [self.path, self.path.with_name(self.path.name + "-wal"), self.path.with_name(self.path.name + "-shm")]
        return CacheInfo(path=str(self.path), entries=sum(o.entries for o in origins), origins=origins,
                         bytes_on_disk=sum(f.stat().st_size for f in files if f.exists()))

    def clear(self, model: str | None = None) -> int:
        """Remove every entry (or those of ``model``) and return how many went; the file shrinks with them."""
        with self._conn:
            if model is None:
                removed = self._conn.execute("DELETE FROM responses").rowcount
            else:
                removed = self._conn.execute("DELETE FROM responses WHERE model = ?", (model,)).rowcount
        self._conn.execute("VACUUM")
        return int(removed)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
