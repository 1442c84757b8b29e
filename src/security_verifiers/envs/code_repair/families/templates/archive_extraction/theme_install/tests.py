import io
import json
import os
import shutil
import tarfile

import T_pkg_T.T_mod_T as themes

themes.THEME_ROOT = "/tmp/themes"
FILES = T_files_T
MANIFEST = json.dumps(T_manifest_T)
T_helper_T

def _install(theme, members, manifest=True):
    shutil.rmtree(os.path.join(themes.THEME_ROOT, theme), ignore_errors=True)
    upload = _tar("/tmp/%s.tgz" % theme, ([("theme.json", MANIFEST)] if manifest else []) + members)
    try:
        return themes.T_install_T(theme, upload)
    except Exception as error:
        return type(error).__name__


def probe_install(ctx):
    return _install("T_theme_T", sorted(FILES.items()))


def probe_installed(ctx):
    _install("T_theme_T", sorted(FILES.items()))
    return [themes.installed("T_theme_T"), themes.installed("nothing")]


def probe_refused(ctx):
    return [_install("bad-name", sorted(FILES.items())), _install("plain", sorted(FILES.items()), False)]


def probe_dotdot(ctx):
    inner = os.path.relpath(ctx["marker"], os.path.join(themes.THEME_ROOT, "t1", "static"))
    return _install("t1", [("static/site.css", "a {}"), ("static/" + inner, "x")])


def probe_symlink(ctx):
    folder, base = os.path.split(ctx["marker"])
    return _install("t2", [("static/fonts", None, folder), ("static/fonts/" + base, "x")])


def probe_relative_link(ctx):
    folder, base = os.path.split(ctx["marker"])
    up = os.path.relpath(folder, os.path.join(themes.THEME_ROOT, "t3", "templates"))
    return _install("t3", [("templates/parts", None, up), ("templates/parts/" + base, "x")])
