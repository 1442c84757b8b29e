"""Parsed and evaluated config files kept on disk, shared by every process on the machine: a text is parsed once,
not once per process.

Why: under ``sv eval config-audit`` the runner's process parses an item's original (for the prompt and the
policy's scan) and the scoring worker parses it again (validation, the inventory, the fail-closed check); the
autofix policy parses its patched file and the worker parses the same text again; every later run, and every
process of ``sv bench``, starts from nothing. HCL's parser (lark, pure Python) and the Terraform evaluator are
the largest costs left once the scanners' findings are stored (:mod:`.scan_store`): ~20 ms a Terraform file,
against well under 1 ms to load the stored result (``benchmarks/e2_profile.py``).

What is stored, by sha256 of the input: a Terraform file's evaluation (:class:`EvaluatedFile`, keyed by the text
and its module context), hcl2's dict of a text, and a manifest's Kubernetes objects. Each is a pure function of
the text and of the code and libraries that compute it, so the file name carries a hash of those (the engines
package's files, lark, the HCL and YAML parsers, Python); only successes are stored (a parse error is computed
again every time, with the message of the process that reads it).

A value is a pickle, read back by an unpickler that builds only plain containers and the engines' own data
classes (:data:`ALLOWED`): an entry naming anything else is refused (reported once, then computed again), so a
store written by someone else cannot run code here. ``SV_SCAN_STORE=off`` turns this store off with the scan
store; ``sv cache clear`` removes both.
"""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import sys
import threading
import zlib
from pathlib import Path
from typing import Any

from security_verifiers.engines.scan_store import SqliteStore, store_enabled, store_file

#: Bumped when what is stored, or how, changes.
_FORMAT = 1
#: The store stops taking new entries past this size (``SV_PARSE_STORE_MAX_MB``): an RL run parses every sampled
#: patch once, and those are rarely read again; the originals, read every time, are stored first.
DEFAULT_MAX_MB = 2048
#: How many writes pass between two looks at the store's size.
_SIZE_CHECK_EVERY = 256
#: The libraries a stored parse depends on.
_LIBRARIES = ("lark", "bc-python-hcl2", "PyYAML")
#: The only globals a stored value may name: containers and scalars, and the engines' data classes.
ALLOWED: dict[str, frozenset[str]] = {
    "builtins": frozenset({"set", "frozenset", "complex", "bytearray", "slice"}),
    "datetime": frozenset({"date", "datetime", "time", "timedelta", "timezone"}),
    "collections": frozenset({"OrderedDict"}),
    "copyreg": frozenset({"_reconstructor"}),
    "security_verifiers.engines.configs": frozenset({"K8sObject"}),
    "security_verifiers.engines.terraform_eval": frozenset({"EvaluatedFile", "Attribute", "Problem", "Unknown"}),
}


class RefusedEntry(pickle.UnpicklingError):
    """A stored value names a global outside :data:`ALLOWED`."""


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if name not in ALLOWED.get(module, ()):
            raise RefusedEntry(f"{module}.{name}")
        return super().find_class(module, name)


def loads(data: bytes) -> Any:
    """A stored value (zlib-compressed pickle) built with :data:`ALLOWED` globals only; RefusedEntry otherwise."""
    return _Unpickler(io.BytesIO(zlib.decompress(data))).load()


def dumps(value: Any) -> bytes:
    return zlib.compress(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL), 1)


class ParseStore(SqliteStore):
    """Parsed values by (kind, sha256 of the input)."""

    value_type = "BLOB"

    def __init__(self, root: Path | None = None) -> None:
        from security_verifiers.core.fingerprint import library_versions

        super().__init__(store_file(root, "parses", {"format": _FORMAT, "libraries": library_versions(_LIBRARIES)}))
        self._refused = False
        self.max_bytes = int(float(os.environ.get("SV_PARSE_STORE_MAX_MB", DEFAULT_MAX_MB)) * 2**20)
        self._writes = 0
        self.full = False

    @staticmethod
    def key(kind: str, text: str, context: tuple[str, ...] = ()) -> str:
        """sha256 of what the value is computed from (each part length-prefixed: no two inputs share a key)."""
        digest = hashlib.sha256(kind.encode())
        for part in (text, *context):
            data = part.encode()
            digest.update(len(data).to_bytes(8, "big") + data)
        return digest.hexdigest()

    def get(self, key: str) -> Any:
        """The stored value, or None (not stored, unreadable or refused: the caller computes it)."""
        raw = self.get_raw(key)
        if raw is None:
            return None
        try:
            return loads(raw)
        except RefusedEntry as err:
            if not self._refused:
                self._refused = True
                print(f"sv: refused an entry of {self.path} that names {err} (not written by this program); "
                      "parsing again", file=sys.stderr)
            return None
        except Exception:  # noqa: BLE001 - a torn or foreign entry: computed again, never trusted
            return None

    def put(self, key: str, value: Any) -> None:
        """Keep ``value`` if it reads back through the restricted unpickler (one that names anything else, or
        cannot be pickled, is simply not kept: it is computed again next time)."""
        if self.full:
            return
        try:
            data = dumps(value)
            loads(data)
        except Exception:  # noqa: BLE001
            return
        if self._writes % _SIZE_CHECK_EVERY == 0 and self.size() > self.max_bytes:
            self.full = True
            print(f"sv: the parse store {self.path} holds over {self.max_bytes >> 20} MB; new parses are no longer "
                  "kept (SV_PARSE_STORE_MAX_MB raises the limit, `sv cache clear` empties it)", file=sys.stderr)
            return
        self._writes += 1
        self.put_raw(key, data)

    def size(self) -> int:
        """Bytes on disk (the database and its write-ahead log)."""
        return sum(p.stat().st_size for p in (self.path, self.path.with_name(self.path.name + "-wal")) if p.exists())


_STORE: ParseStore | None = None
_STORE_LOCK = threading.Lock()


def parse_store() -> ParseStore | None:
    """The process-wide parse store, or None when ``SV_SCAN_STORE=off``."""
    global _STORE
    if not store_enabled():
        return None
    with _STORE_LOCK:
        if _STORE is None:
            _STORE = ParseStore()
        return _STORE
