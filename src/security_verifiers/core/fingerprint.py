"""What a result kept on disk was computed with, so that a cache is never read across a change: a digest of source
files and the versions of installed libraries. Used by the caches whose content is a pure function of the code
(E4's fitted classical model, E2's stored scanner findings)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path


def files_digest(root: Path, files: Iterable[Path]) -> str:
    """sha256 over each file's path relative to ``root`` and its bytes, in sorted order."""
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def library_versions(names: Iterable[str]) -> dict[str, str | None]:
    """Each distribution's installed version (``None`` when it is not installed)."""
    found: dict[str, str | None] = {}
    for name in names:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return found
