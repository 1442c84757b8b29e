"""Read-only site directories of third-party packages for programs that need them (imported real-code cases).

A case that imports a package (PyYAML, PyJWT...) names it, pinned, in its requirements. ``sv data import code-repair
--format cases --wheelhouse DIR`` installs those wheels, offline, into a directory of their own under
:func:`sites_root` named by the hash of what was installed (:func:`site_key`); the item records that key. When the
item is judged, the directory is shown to its program read-only (engines/sandbox/judged.py ``site_dirs``) and put on
its ``sys.path``; nothing else of the host's packages is visible. A key whose directory is missing is an error that
says how to make it, never a run without the packages.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from security_verifiers.core.errors import ConfigError
from security_verifiers.core.paths import cache_dir


def sites_root() -> Path:
    """Where site directories live: $SV_CACHE_DIR (or ~/.cache/security-verifiers)/code-repair-sites. A ConfigError
    when that is under a directory the judge's sandbox replaces with its own (/tmp, /work, /run/judge)."""
    from security_verifiers.engines.sandbox.judged import JUDGE_CODE, JUDGE_PRIVATE, SHARED_TMP, SHARED_WORK

    root = cache_dir().resolve() / "code-repair-sites"
    for hidden in (SHARED_TMP, SHARED_WORK, JUDGE_PRIVATE, JUDGE_CODE):
        if root == Path(hidden) or Path(hidden) in root.parents:
            raise ConfigError(f"the site directories would be under {hidden} ({root}), which the judge's sandbox "
                              f"covers with its own {hidden}: set SV_CACHE_DIR to a folder outside {SHARED_TMP}, "
                              f"{SHARED_WORK} and {JUDGE_PRIVATE}")
    return root


def site_key(requirements: Sequence[str], wheel_hashes: Sequence[str]) -> str:
    """The name of the site directory of pinned ``requirements`` installed from wheels with these sha256 sums."""
    text = "\n".join(sorted(r.strip().lower() for r in requirements)) + "\n--\n" + "\n".join(sorted(wheel_hashes))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def site_dir(key: str, requirements: Sequence[str] = ()) -> Path:
    """The installed site directory of ``key``; a ConfigError naming what to run when it is not there."""
    path = sites_root() / key
    if not (path / ".complete").is_file():
        need = ", ".join(requirements) or "its packages"
        raise ConfigError(f"code-repair: this item needs {need} installed in the site directory {path}, which is "
                          "missing; import the cases again with `sv data import code-repair --format cases DIR "
                          "--wheelhouse WHEELS` on this machine (the wheelhouse made with `pip download`)")
    return path
