"""Scanner findings kept on disk, shared by every process on the machine: a file is scanned by Rego, Checkov and
the secret-values engine once, not once per process.

Why: under ``sv eval config-audit`` the same original file is scanned by the policy in the runner's process (the
``autofix`` baseline reads the scanners' findings), again by the scorer in its worker process, and again in
every later run; in an RL run every sample of an item is scored against the same original. These scans are most
of E2's scoring time (``benchmarks/e2_profile.py``).

What makes a stored result valid: the findings are a function of the file (platform, text, module context) and
of the code that computes them. The store's file name carries a hash of all of it: the engines' versions, the
versions of the libraries they parse and check with (Checkov, regopy, the HCL and YAML parsers, pydantic), the
Python version, and every file of the ``engines`` package (Python, Rego policies, rule catalogs). Change any of
them and the store is a new, empty file; nothing stale is read. Only successful scans are stored (an engine
failure or a parse error is recomputed every time).

SQLite in WAL mode lets worker processes read and write it at once; a connection is opened per process (never
inherited across a fork). ``SV_SCAN_STORE=off`` turns the store off (the figures of a cold run); a store that
cannot be opened (a read-only cache directory) is reported once on stderr and scanning goes on without it: the
store only saves time, it never changes a result.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import sys
import threading
from functools import cache
from pathlib import Path
from typing import Any

from security_verifiers.core.fingerprint import files_digest, library_versions
from security_verifiers.core.paths import cache_dir
from security_verifiers.engines.findings import Finding

#: Bumped when the layout of a stored row changes.
_FORMAT = 1
#: The libraries the scanners parse and check with (their versions are part of a stored result's identity).
_LIBRARIES = ("checkov", "regopy", "bc-python-hcl2", "PyYAML", "lark", "pydantic")


@cache
def _libraries() -> dict[str, str | None]:
    return library_versions(_LIBRARIES)


@cache
def code_hash() -> str:
    """sha256 of every file of the ``engines`` package (its code, Rego policies and rule catalogs)."""
    root = Path(__file__).resolve().parent
    return files_digest(root, (p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts))


class SqliteStore:
    """One SQLite file of key -> value, read and written by every process of the machine (WAL; a connection per
    process, never inherited across a fork). A store that cannot be opened is reported once on stderr and only
    costs time: every ``get`` misses and every ``put`` is dropped. A subclass says what a value is."""

    #: The column type of ``value`` (TEXT for JSON, BLOB for bytes).
    value_type = "TEXT"

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._pid: int | None = None
        self._db: sqlite3.Connection | None = None
        self._broken = False

    def _connection(self) -> sqlite3.Connection | None:
        if self._broken:
            return None
        if self._db is None or self._pid != os.getpid():  # a fork's child opens its own
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                db = sqlite3.connect(self.path, timeout=60, isolation_level=None, check_same_thread=False)
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")  # a cache: a write lost in a power cut is computed again
                db.execute(f"CREATE TABLE IF NOT EXISTS findings (key TEXT PRIMARY KEY, value {self.value_type} "
                           "NOT NULL)")
            except (OSError, sqlite3.Error) as err:
                print(f"sv: the store {self.path} cannot be used ({err}); going on without it", file=sys.stderr)
                self._broken = True
                return None
            self._db, self._pid = db, os.getpid()
        return self._db

    def get_raw(self, key: str) -> Any:
        with self._lock:
            db = self._connection()
            if db is None:
                return None
            try:
                row = db.execute("SELECT value FROM findings WHERE key = ?", (key,)).fetchone()
            except sqlite3.Error:
                return None
        return None if row is None else row[0]

    def put_raw(self, key: str, value: Any) -> None:
        with self._lock:
            db = self._connection()
            if db is None:
                return
            try:
                db.execute("INSERT OR IGNORE INTO findings (key, value) VALUES (?, ?)", (key, value))
            except sqlite3.Error:  # a busy or full disk: the result stands, it is just not kept
                pass


class ScanStore(SqliteStore):
    """Findings by scan key (:func:`~security_verifiers.engines.oracle.cache_key`), for one set of engine
    versions."""

    def __init__(self, versions: dict[str, str], root: Path | None = None) -> None:
        super().__init__(store_file(root, "scanners", {"format": _FORMAT, "versions": versions,
                                                       "libraries": _libraries()}))

    def get(self, key: str) -> list[Finding] | None:
        raw = self.get_raw(key)
        if raw is None:
            return None
        return [Finding.model_validate(f) for f in json.loads(raw)]

    def put(self, key: str, findings: list[Finding]) -> None:
        self.put_raw(key, json.dumps([f.model_dump(mode="json") for f in findings], separators=(",", ":")))


def store_root() -> Path:
    """Where config-audit's stores live (``sv cache clear`` removes them)."""
    return cache_dir() / "config-audit-scans"


def store_file(root: Path | None, prefix: str, identity: dict[str, object]) -> Path:
    """The file of a store whose values are a function of ``identity``, of the Python version and of every file of
    the engines package: another identity, Python or engines code is another (empty) file, never a stale one."""
    digest = hashlib.sha256(json.dumps({**identity, "python": sys.version, "code": code_hash()},
                                       sort_keys=True).encode()).hexdigest()[:20]
    return (root or store_root()) / f"{prefix}-{digest}.sqlite"


def store_enabled() -> bool:
    return os.environ.get("SV_SCAN_STORE", "on").strip().lower() not in ("off", "0", "false", "no")
