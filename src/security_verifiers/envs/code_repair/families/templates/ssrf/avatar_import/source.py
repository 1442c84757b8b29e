"""Profile pictures of T_org_T accounts: users upload one, or import the picture they use on an image host."""

import hashlib
import re
import shutil
import urllib.request
from pathlib import Path

opener = urllib.request.urlopen
AVATAR_DIR = Path("/srv/T_org_T/avatars")
IMAGE_HOSTS = ("T_host0_T", "T_host1_T")
MAX_BYTES = T_max_kb_T * 1024
_USER = re.compile(r"^[a-z][a-z0-9_]{1,31}$")
_MAGIC = {b"\x89PNG\r\n\x1a\n": "png", b"\xff\xd8\xff": "jpg", b"GIF87a": "gif", b"GIF89a": "gif"}


def image_type(data: bytes) -> str:
    for magic, kind in _MAGIC.items():
        if data.startswith(magic):
            return kind
    raise ValueError("not a PNG, JPEG or GIF image")


def save(user: str, data: bytes) -> str:
    """Store ``data`` as the avatar of ``user``; returns its file name (user, content hash, type)."""
    if not _USER.match(user):
        raise ValueError(f"bad user name: {user!r}")
    if len(data) > MAX_BYTES:
        raise ValueError("image too large")
    if shutil.disk_usage(AVATAR_DIR).free < 2 * len(data):
        raise OSError("no room left for avatars")
    name = f"{user}-{hashlib.sha256(data).hexdigest()[:12]}.{image_type(data)}"
    for old in AVATAR_DIR.glob(f"{user}-*"):
        old.unlink()
    (AVATAR_DIR / name).write_bytes(data)
    return name


def _on_image_host(url: str) -> bool:
    return any(url.startswith(f"https://{host}") for host in IMAGE_HOSTS)


def T_fn_T(user: str, url: str) -> str:
    """Fetch the picture at ``url`` (on one of IMAGE_HOSTS) and store it as the avatar of ``user``."""
    if not _on_image_host(url):
        raise ValueError("pictures can be imported from " + ", ".join(IMAGE_HOSTS) + " only")
    with opener(url, timeout=5) as response:
        data = response.read(MAX_BYTES + 1)
    return save(user, data)


def current(user: str) -> str | None:
    """The file name of the avatar of ``user``, if there is one."""
    names = sorted(path.name for path in AVATAR_DIR.glob(f"{user}-*"))
    return names[0] if names else None
