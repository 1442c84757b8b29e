"""Album import of the T_org_T photo service: members upload a .zip of pictures, kept with its sub-folders."""

import hashlib
import json
import os
import shutil
import zipfile
from pathlib import Path

ALBUM_ROOT = "/srv/T_org_T/albums"


def album_folder(owner: str, album: str) -> str:
    if not (owner.isalnum() and album.isalnum()):
        raise ValueError("owner and album ids are letters and digits")
    return os.path.join(ALBUM_ROOT, owner, album)


def _skipped(name: str) -> bool:
    """Folders, and the clutter that macOS puts in zip files."""
    return name.endswith("/") or name.startswith("__MACOSX/") or os.path.basename(name).startswith(".")


def T_load_T(owner: str, album: str, upload: str) -> list[str]:
    """Copy the pictures of an uploaded zip into the album; returns their paths in the album, sorted."""
    dest = album_folder(owner, album)
    saved = []
    with zipfile.ZipFile(upload) as archive:
        for info in archive.infolist():
            if _skipped(info.filename):
                continue
            target = os.path.join(dest, info.filename)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with archive.open(info) as source, open(target, "wb") as out:
                shutil.copyfileobj(source, out)
            saved.append(info.filename)
    index = manifest(owner, album)
    for name in saved:
        index[name] = hashlib.sha256(Path(dest, name).read_bytes()).hexdigest()[:16]
    Path(dest, "manifest.json").write_text(json.dumps(index, sort_keys=True), encoding="utf-8")
    return sorted(saved)


def manifest(owner: str, album: str) -> dict[str, str]:
    """The album's pictures with a digest of each (for the sync clients)."""
    path = Path(album_folder(owner, album), "manifest.json")
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
