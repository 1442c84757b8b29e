"""Lists what an uploaded tarball holds before the import job unpacks it."""

import os
import subprocess

from T_pkg_T import inbox


def members(archive: str) -> list[str]:
    """Names of the members of the tarball ``archive`` in the inbox, sorted."""
    path = inbox.path_of(archive)
    proc = subprocess.Popen("tar -tf " + path, shell=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate()
    if proc.returncode != 0:
        raise ValueError(f"not a readable archive: {archive}")
    return sorted(line for line in out.decode().splitlines() if line)


def pending() -> list[dict]:
    """The archives waiting in the inbox, with their sizes in bytes."""
    out = []
    for name in inbox.names():
        if name.endswith((".tar", ".tar.gz", ".tgz")):
            out.append({"name": name, "bytes": os.stat(inbox.path_of(name)).st_size})
    return out


def plan(archive: str) -> dict:
    """What the import job will do with an archive: its members, which of them it skips, whether it fits."""
    names = members(archive)
    keep = [name for name in names if name.endswith((".txt", ".csv"))]
    return {"archive": archive, "import": keep, "skip": [name for name in names if name not in keep],
            "fits": inbox.has_room(archive)}
