import io
import json
import os
import tarfile

import lantern.plugins as plugins

plugins.PLUGIN_ROOT = "/tmp/lantern-plugins"

GALLERY = [
    ("plugin.json", json.dumps({"name": "Gallery", "version": "1.4.0"})),
    ("templates/gallery.html", "<div class=gallery>{{ images }}</div>\n"),
    ("templates/base.html", None, "gallery.html"),
    ("assets/gallery.css", ".gallery { display: grid; }\n"),
    ("assets/icons/next.svg", "<svg/>\n"),
]
GALLERY_2 = [
    ("plugin.json", json.dumps({"name": "Gallery", "version": "2.0.0"})),
    ("templates/gallery.html", "<section>{{ images }}</section>\n"),
]


def _tar(path, members):
    with tarfile.open(path, "w:gz" if path.endswith(".gz") else "w") as archive:
        for name, text, *link in members:
            info = tarfile.TarInfo(name)
            if link:
                info.type, info.linkname = tarfile.SYMTYPE, link[0]
                archive.addfile(info)
            else:
                data = text.encode()
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
    return path


def _install(name, members, suffix=".tar.gz"):
    upload = _tar(f"/tmp/upload-{name}{suffix}", members)
    try:
        return plugins.install(name, upload)
    except Exception as error:
        return type(error).__name__


def probe_install(ctx):
    return _install("gallery", GALLERY)


def probe_upgrade(ctx):
    _install("gallery-b", GALLERY, ".tar")
    return [_install("gallery-b", GALLERY_2, ".tar"), plugins.installed_files("gallery-b")]


def probe_dotdot(ctx):
    return [_install("evil-a", GALLERY + [("../escaped.txt", "x")]), os.path.exists("/tmp/lantern-plugins/escaped.txt")]


def probe_no_manifest(ctx):
    return [_install("bare", GALLERY[1:]), plugins.uninstall("bare"), plugins.uninstall("gallery-c")]


def probe_bad_name(ctx):
    try:
        plugins.plugin_dir("../gallery")
    except Exception as error:
        return type(error).__name__
    return "accepted"


def probe_link_dir(ctx):
    folder, base = os.path.split(ctx["marker"])
    return _install("evil-b", [("plugin.json", "{}"), ("assets", None, folder), ("assets/" + base, "x\n")])


def probe_link_relative(ctx):
    folder, base = os.path.split(ctx["marker"])
    up = os.path.relpath(folder, plugins.plugin_dir("evil-c"))
    return _install("evil-c", [("plugin.json", "{}"), ("static", None, up), ("static/" + base, "x\n")])


def probe_link_file(ctx):
    return _install("evil-d", [("plugin.json", "{}"), ("notes.txt", None, ctx["marker"]), ("notes.txt", "x\n")])
