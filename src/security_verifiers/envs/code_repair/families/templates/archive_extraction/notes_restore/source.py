"""Backups of the T_org_T notes app: users download their notes folder as a .tar.gz and restore it later."""

import os
import shutil

from T_pkg_T.store import notes, notes_folder


def backup(user: str, out_dir: str) -> str:
    """Write the user's notes as a .tar.gz in ``out_dir``; returns its path."""
    return shutil.make_archive(os.path.join(out_dir, f"{user}-notes"), "gztar", root_dir=notes_folder(user))


def T_restore_T(user: str, upload: str) -> list[str]:
    """Replace the user's notes with those of an uploaded backup; returns the restored notes."""
    folder = notes_folder(user)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    shutil.unpack_archive(upload, folder, format="gztar")
    return notes(user)
