"""Profile pictures of the T_org_T community site: members upload images, which are kept in their folder."""

import hashlib
import os
import shutil
from pathlib import Path
from urllib.parse import quote

from T_pkg_T import images

AVATAR_DIR = "/srv/T_org_T/avatars"


def T_save_T(member: str, filename: str, data: bytes) -> str:
    """Keep an uploaded picture under the client's file name in the member's folder; returns its URL."""
    if not member.isalnum():
        raise ValueError("bad member id")
    images.check(data)
    folder = os.path.join(AVATAR_DIR, member)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, filename), "wb") as handle:
        handle.write(data)
    return f"/avatars/{member}/{quote(filename)}"


def pictures(member: str) -> list[dict]:
    """The member's pictures, by name, with their size and a digest for cache busting."""
    folder = Path(AVATAR_DIR, member)
    if not member.isalnum() or not folder.is_dir():
        return []
    return [{"name": path.name, "bytes": path.stat().st_size,
             "etag": hashlib.sha256(path.read_bytes()).hexdigest()[:16]}
            for path in sorted(folder.iterdir()) if path.is_file()]


def remove_all(member: str) -> int:
    """Delete the member's pictures (when the account is closed); how many there were."""
    folder = Path(AVATAR_DIR, member)
    if not member.isalnum() or not folder.is_dir():
        return 0
    count = sum(1 for path in folder.iterdir() if path.is_file())
    shutil.rmtree(folder)
    return count
