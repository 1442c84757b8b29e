"""The download area of the T_org_T customer portal: release notes, manuals and data files under DOWNLOAD_ROOT."""

import hashlib
import os
import random
from pathlib import Path

from T_pkg_T import config


def T_read_T(name: str) -> bytes:
    """The content of the download ``name``, a path relative to DOWNLOAD_ROOT as in the download links."""
    path = os.path.join(config.DOWNLOAD_ROOT, name)
    with open(path, "rb") as handle:
        return handle.read()


def checksum(name: str) -> str:
    """The SHA-256 shown next to each download link."""
    return hashlib.sha256(T_read_T(name)).hexdigest()


def headers(name: str) -> dict[str, str]:
    """The response headers of a download."""
    size = len(T_read_T(name))
    kind = config.content_type(name)
    filename = os.path.basename(name)
    return {"Content-Type": kind, "Content-Length": str(size),
            "Content-Disposition": f'attachment; filename="{filename}"'}


def catalogue() -> list[str]:
    """Every download, as a path relative to DOWNLOAD_ROOT, sorted."""
    root = Path(config.DOWNLOAD_ROOT)
    return sorted(path.relative_to(root).as_posix() for path in root.rglob("*") if path.is_file())


def featured() -> list[str]:
    """A few downloads for the landing page, a different pick on every visit."""
    names = catalogue()
    return random.sample(names, min(config.FEATURED, len(names)))
