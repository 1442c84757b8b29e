"""Theme installer of the T_org_T site builder: designers upload a theme as a tarball."""

import json
import os
import tarfile

THEME_ROOT = "/srv/T_org_T/themes"
SECTIONS = ("static/", "templates/")


def T_picker_T(archive: tarfile.TarFile):
    """The members a theme installs: those in its static/ and templates/ folders."""
    for member in archive.getmembers():
        if member.name.startswith(SECTIONS):
            yield member


def installed(theme: str) -> list[str]:
    """The files of an installed theme, relative to its folder, sorted."""
    folder = os.path.join(THEME_ROOT, theme)
    found = []
    for parent, _, names in os.walk(folder):
        found += [os.path.relpath(os.path.join(parent, name), folder) for name in names]
    return sorted(found)


def T_install_T(theme: str, upload: str) -> dict:
    """Install an uploaded theme (it must hold a theme.json); returns its name, version and files."""
    if not theme.isidentifier():
        raise ValueError("theme ids are identifiers")
    dest = os.path.join(THEME_ROOT, theme)
    os.makedirs(dest, exist_ok=True)
    with tarfile.open(upload) as archive:
        manifest = json.load(archive.extractfile("theme.json"))
        archive.extractall(dest, members=T_picker_T(archive))
    return {"name": manifest["name"], "version": manifest["version"], "files": installed(theme)}
