import os
import shutil

import T_pkg_T.T_mod_T as avatars

PNG = b"\x89PNG\r\n\x1a\n"


def _fresh():
    avatars.AVATAR_DIR = "/tmp/avatars"
    shutil.rmtree(avatars.AVATAR_DIR, ignore_errors=True)
    os.makedirs(avatars.AVATAR_DIR)


def _save(member, filename, data):
    try:
        return avatars.T_save_T(member, filename, data)
    except Exception as error:
        return type(error).__name__


def probe_save(ctx):
    _fresh()
    url = _save("T_member_T", "T_picture_T", PNG + T_body_T)
    return [url, avatars.pictures("T_member_T"), avatars.pictures("T_other_T")]


def probe_replace(ctx):
    _fresh()
    _save("T_member_T", "me.gif", b"GIF89a" + T_body_T)
    _save("T_member_T", "me.gif", PNG + T_body_T)
    return [entry["bytes"] for entry in avatars.pictures("T_member_T")]


def probe_remove(ctx):
    _fresh()
    _save("T_member_T", "a.png", PNG + T_body_T)
    _save("T_member_T", "b.gif", b"GIF87a" + T_body_T)
    _save("T_other_T", "c.png", PNG)
    return [avatars.remove_all("T_member_T"), avatars.pictures("T_member_T"), avatars.remove_all("T_member_T"),
            len(avatars.pictures("T_other_T"))]


def probe_refused(ctx):
    _fresh()
    return [_save("T_member_T", "notes.txt", b"plain text"), _save("T_member_T", "big.png", PNG * 70000),
            _save("../T_member_T", "me.png", PNG), avatars.pictures("T_member_T")]


def probe_relative(ctx):
    _fresh()
    folder = os.path.join(avatars.AVATAR_DIR, "T_member_T")
    return _save("T_member_T", os.path.relpath(ctx["marker"], folder), PNG + b"x")


def probe_absolute(ctx):
    _fresh()
    return _save("T_member_T", ctx["marker"], b"\xff\xd8\xff" + b"x")
