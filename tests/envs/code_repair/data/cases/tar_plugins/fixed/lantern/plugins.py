"""Plugins of the Lantern static-site generator.

A plugin is a tarball (optionally gzipped) of templates, assets and a `plugin.json` manifest, uploaded by a site's
designer. Installing one unpacks it into PLUGIN_ROOT/<name>, replacing any earlier version of the same name.
"""

import json
import os
import re
import shutil
import tarfile

PLUGIN_ROOT = "/var/lib/lantern/plugins"
_NAME = re.compile(r"^[a-z][a-z0-9-]{0,39}$")


class PluginError(ValueError):
    """An upload that is not an installable plugin, with the reason."""


def plugin_dir(name: str) -> str:
    """The folder of the installed plugin ``name``."""
    if not _NAME.match(name):
        raise PluginError(f"bad plugin name {name!r}")
    return os.path.join(PLUGIN_ROOT, name)


def installed_files(name: str) -> list:
    """The files of an installed plugin, relative to its folder, sorted (links to files included)."""
    folder = plugin_dir(name)
    found = []
    for parent, _, names in os.walk(folder):
        found += [os.path.relpath(os.path.join(parent, entry), folder) for entry in names]
    return sorted(found)


def _manifest(folder: str) -> dict:
    try:
        with open(os.path.join(folder, "plugin.json"), encoding="utf-8") as handle:
            manifest = json.load(handle)
    except (OSError, ValueError):
        raise PluginError("the archive has no valid plugin.json") from None
    if not isinstance(manifest, dict):
        raise PluginError("plugin.json must hold an object")
    return manifest


def install(name: str, upload: str) -> dict:
    """Install the plugin tarball at ``upload`` as ``name``; returns its manifest's name and version, and its files."""
    target = plugin_dir(name)
    try:
        archive = tarfile.open(upload)
    except (OSError, tarfile.TarError):
        raise PluginError("not a tar archive") from None
    with archive:
        for member in archive.getmembers():
            if member.name.startswith("/") or ".." in member.name.split("/"):
                raise PluginError(f"unsafe path in the archive: {member.name}")
        shutil.rmtree(target, ignore_errors=True)
        os.makedirs(target)
        archive.extractall(target, filter="data")
    try:
        manifest = _manifest(target)
    except PluginError:
        shutil.rmtree(target, ignore_errors=True)
        raise
    return {"name": str(manifest.get("name", name)), "version": str(manifest.get("version", "0")),
            "files": installed_files(name)}


def uninstall(name: str) -> bool:
    """Remove an installed plugin; whether there was one."""
    folder = plugin_dir(name)
    if not os.path.isdir(folder):
        return False
    shutil.rmtree(folder)
    return True
