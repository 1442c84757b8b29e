"""The work directory: checked before a run, and in root mode lent to uid 65534 for its duration.

In root mode the command runs as host uid 65534 (see ``host.py``), which cannot write a directory root owns.
Rather than make the directory world-writable, every entry is handed to uid/gid 65534 before the run and
handed back after it: entries that existed get their own owner back, entries the command made get the
directory's owner. The walk never follows a symbolic link and changes the link itself, so a link the
command planted cannot redirect a ``chown`` outside the directory; hard links to files outside cannot be
made from inside (bind mounts are separate mounts: ``link`` fails with EXDEV). The sandbox is gone when the
directory is handed back, so nothing races the walk. A process killed between the two walks (SIGKILL of
``sv``) leaves the entries owned by uid 65534.

User mode needs none of this: the command's files are the caller's on the host.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from security_verifiers.core.errors import ConfigError
from security_verifiers.engines.sandbox.host import SANDBOX_GID, SANDBOX_UID

#: Root mode refuses to lend a directory with more entries than this (two walks per run).
MAX_LENT_ENTRIES = 100_000

_Owner = tuple[int, int, int, int]  # uid, gid, st_dev, st_ino


def check_workdir(workdir: Path) -> Path:
    """The absolute, resolved work directory; a ConfigError when it is not one the sandbox may use."""
    resolved = workdir.resolve()
    if not resolved.is_dir():
        problem = "not a directory" if resolved.exists() else "no such directory"
        raise ConfigError(f"sandbox work directory {workdir}: {problem}")
    if resolved == Path("/"):
        raise ConfigError("sandbox work directory /: that would make the whole host writable from the sandbox")
    return resolved


def _entries(workdir: Path) -> Iterator[Path]:
    """The directory and everything under it, links not followed."""
    yield workdir
    for parent, dirs, files in os.walk(workdir, followlinks=False):
        for name in (*dirs, *files):
            yield Path(parent, name)


def _lend(workdir: Path) -> dict[Path, _Owner]:
    device = workdir.lstat().st_dev
    owners: dict[Path, _Owner] = {}
    for path in _entries(workdir):
        st = path.lstat()
        if st.st_dev != device:
            raise ConfigError(f"sandbox work directory {workdir}: {path} is another mount, which root mode will not "
                              "lend to the sandbox's user; use a directory without mount points")
        owners[path] = (st.st_uid, st.st_gid, st.st_dev, st.st_ino)
        if len(owners) > MAX_LENT_ENTRIES:
            raise ConfigError(f"sandbox work directory {workdir}: more than {MAX_LENT_ENTRIES} entries; as root every "
                              "entry is lent to uid 65534 for the run, so use a smaller directory")
    for path in owners:
        os.chown(path, SANDBOX_UID, SANDBOX_GID, follow_symlinks=False)
    return owners


def _give_back(workdir: Path, owners: dict[Path, _Owner]) -> None:
    root_uid, root_gid = owners[workdir][:2]
    for path in _entries(workdir):
        st = path.lstat()
        before = owners.get(path)
        uid, gid = before[:2] if before and before[2:] == (st.st_dev, st.st_ino) else (root_uid, root_gid)
        if (st.st_uid, st.st_gid) != (uid, gid):
            os.chown(path, uid, gid, follow_symlinks=False)


@contextmanager
def lent(workdir: Path, as_root: bool) -> Iterator[None]:
    """In root mode, ``workdir`` belongs to uid 65534 inside the block and to its owners again after it."""
    if not as_root:
        yield
        return
    owners = _lend(workdir)
    try:
        yield
    finally:
        _give_back(workdir, owners)
