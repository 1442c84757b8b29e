import os
import shutil
import zipfile

import T_pkg_T.T_mod_T as albums

albums.ALBUM_ROOT = "/tmp/albums"
PICTURES = T_pictures_T
JUNK = T_junk_T


def _load(album, members):
    upload = "/tmp/%s.zip" % album
    with zipfile.ZipFile(upload, "w") as archive:
        for name, text in members:
            archive.writestr(name, text)
    try:
        return albums.T_load_T("T_owner_T", album, upload)
    except Exception as error:
        return type(error).__name__


def _fresh(album):
    shutil.rmtree(os.path.join(albums.ALBUM_ROOT, "T_owner_T", album), ignore_errors=True)


def probe_load(ctx):
    _fresh("trip")
    return [_load("trip", sorted({**PICTURES, **JUNK}.items())), albums.manifest("T_owner_T", "trip")]


def probe_twice(ctx):
    _fresh("more")
    first, second = sorted(PICTURES.items())[:1], sorted(PICTURES.items())[1:]
    return [_load("more", first), _load("more", second), sorted(albums.manifest("T_owner_T", "more"))]


def probe_bad_album(ctx):
    return [_load("a-b", sorted(PICTURES.items())), albums.manifest("T_owner_T", "empty")]


def _outside(ctx):
    # a picture in a folder named by the marker: the marker's own name may begin with a dot, which the
    # import skips as macOS clutter; the folder it makes for the picture is what the judge sees created
    return ctx["marker"] + "/b.jpg"


def probe_dotdot(ctx):
    _fresh("x1")
    name = os.path.relpath(_outside(ctx), albums.album_folder("T_owner_T", "x1"))
    return _load("x1", [("T_trip_T/a.jpg", "a"), (name, "b")])


def probe_absolute(ctx):
    _fresh("x2")
    return _load("x2", [("T_trip_T/a.jpg", "a"), (_outside(ctx), "b")])


def probe_inner_dotdot(ctx):
    _fresh("x3")
    name = "T_trip_T/" + os.path.relpath(_outside(ctx), albums.album_folder("T_owner_T", "x3") + "/T_trip_T")
    return _load("x3", [("T_trip_T/a.jpg", "a"), (name, "b")])
