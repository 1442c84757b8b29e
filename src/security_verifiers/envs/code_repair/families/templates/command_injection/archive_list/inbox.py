"""The upload inbox: where uploaded tarballs wait for the import job."""

import os
import shutil

INBOX = "/srv/inbox"
#: Unpacking needs room for this many times an archive's size.
HEADROOM = 4


def path_of(archive: str) -> str:
    return os.path.join(INBOX, archive)


def names() -> list[str]:
    return sorted(os.listdir(INBOX))


def has_room(archive: str) -> bool:
    """Whether the inbox's disk can hold the archive unpacked."""
    return shutil.disk_usage(INBOX).free > HEADROOM * os.stat(path_of(archive)).st_size
