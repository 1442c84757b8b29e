"""Where the project keeps what it can rebuild: one rule for every cache, so that one variable moves them all and
``sv cache`` knows where to look."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir(override: str | Path | None = None) -> Path:
    """``override`` (a ``--cache-dir``), else ``$SV_CACHE_DIR``, else ``~/.cache/security-verifiers``."""
    return Path(override or os.environ.get("SV_CACHE_DIR") or Path.home() / ".cache" / "security-verifiers")
