"""Upload verification: clients send a file and its SHA-256; we check the stored copy against it."""

import hashlib
import os
import subprocess

from T_pkg_T import ledger

UPLOAD_ROOT = "/srv/uploads"


def store(name: str, data: bytes) -> str:
    """Save an upload under UPLOAD_ROOT and return its SHA-256."""
    if os.path.basename(name) != name or name.startswith("."):
        raise ValueError("bad upload name")
    with open(os.path.join(UPLOAD_ROOT, name), "wb") as handle:
        handle.write(data)
    return hashlib.sha256(data).hexdigest()


def stored_digest(name: str) -> str:
    output = subprocess.check_output(f"sha256sum {UPLOAD_ROOT}/{name}", shell=True, text=True)
    return output.split()[0]


def verify(name: str, claimed: str) -> bool:
    """Whether the stored upload ``name`` has the SHA-256 ``claimed`` (hex, any case); a match is recorded."""
    digest = stored_digest(name)
    ok = digest == claimed.strip().lower()
    if ok:
        ledger.record(name, digest)
    return ok
