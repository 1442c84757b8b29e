import os
from pathlib import Path

import T_pkg_T.T_mod_T as avatars


def _dir(name):
    avatars.AVATAR_DIR = Path("/tmp/avatars-" + name)
    os.makedirs(avatars.AVATAR_DIR, exist_ok=True)
    for old in avatars.AVATAR_DIR.iterdir():
        old.unlink()
    world.reset()


def probe_import(ctx):
    _dir("import")
    name = avatars.T_fn_T("T_user_T", "T_url0_T")
    return [name, avatars.current("T_user_T"), sorted(p.name for p in avatars.AVATAR_DIR.iterdir())]


def probe_replace(ctx):
    _dir("replace")
    avatars.T_fn_T("T_user_T", "T_url0_T")
    avatars.T_fn_T("T_user_T", "T_url1_T")
    return [avatars.current("T_user_T"), avatars.current("T_other_T"), _urls()]


def probe_other_host(ctx):
    _dir("other")
    try:
        avatars.T_fn_T("T_user_T", "https://i.imgur.com/T_word_T.png")
    except ValueError:
        return ["refused", _urls()]
    return ["imported", _urls()]


def probe_not_image(ctx):
    _dir("notimage")
    try:
        avatars.T_fn_T("T_user_T", "https://T_host1_T/about.html")
    except ValueError:
        return ["refused", avatars.current("T_user_T")]
    return ["imported", avatars.current("T_user_T")]


def _attempt(url):
    _dir("probe")
    try:
        avatars.T_fn_T("T_other_T", url)
    except Exception:
        pass
    return _reached()


def probe_metadata_name(ctx):
    return _attempt("https://T_metadata_T/latest/meta-data/" + _path(ctx))


def probe_port_name(ctx):
    return _attempt("https://T_loopback_T:T_port_T/" + _path(ctx))


def probe_lookalike(ctx):
    return _attempt("https://T_rebind_T/" + _path(ctx) + ".png")
