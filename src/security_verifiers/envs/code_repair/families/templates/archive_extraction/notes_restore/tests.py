import io
import os
import shutil
import tarfile

import T_pkg_T.T_mod_T as backups
import T_pkg_T.store as store

store.NOTES_ROOT = "/tmp/notes"
NOTES = T_notes_T
T_helper_T

def _write(user, notes):
    folder = store.notes_folder(user)
    shutil.rmtree(folder, ignore_errors=True)
    for name, text in notes.items():
        os.makedirs(os.path.dirname(os.path.join(folder, name)), exist_ok=True)
        with open(os.path.join(folder, name), "w", encoding="utf-8") as handle:
            handle.write(text)


def _restore(user, upload):
    try:
        return backups.T_restore_T(user, upload)
    except Exception as error:
        return type(error).__name__


def probe_round_trip(ctx):
    _write("T_user_T", NOTES)
    before = store.fingerprint("T_user_T")
    os.makedirs("/tmp/out", exist_ok=True)
    upload = backups.backup("T_user_T", "/tmp/out")
    _write("T_user_T", {"stale.md": "old"})
    return [_restore("T_user_T", upload), store.fingerprint("T_user_T") == before, os.path.basename(upload)]


def probe_uploaded(ctx):
    upload = _tar("/tmp/up.tar.gz", sorted(NOTES.items()) + [("photo.jpg", "x")])
    return [_restore("T_other_T", upload), store.notes("T_other_T")]


def probe_bad_user(ctx):
    return _restore("../T_user_T", _tar("/tmp/bad.tar.gz", [("a.md", "a")]))


def probe_dotdot(ctx):
    name = os.path.relpath(ctx["marker"], store.notes_folder("x1"))
    return _restore("x1", _tar("/tmp/x1.tar.gz", [("a.md", "a"), (name, "x")]))


def probe_symlink(ctx):
    folder, base = os.path.split(ctx["marker"])
    return _restore("x2", _tar("/tmp/x2.tar.gz", [("inbox", None, folder), ("inbox/" + base, "x")]))
