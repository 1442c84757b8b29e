"""CWE-22 through archives ("zip slip"): a program unpacks an uploaded archive and trusts its member names.

Variants:

- ``dataset_bundle``: a .tar.gz bundle of CSV files unpacked with ``TarFile.extractall`` and no filter;
- ``photo_album``: a .zip of pictures copied out member by member with ``open(os.path.join(dest, name))``;
- ``theme_install``: a theme tarball whose members are picked by a generator that only checks that their names
  start with ``static/`` or ``templates/`` (``extractall(members=...)``);
- ``notes_restore`` (OOD): a notes backup restored with ``shutil.unpack_archive``, which hides the tarfile.

Each exploit probe builds its archive in /tmp: a member named ``../``-wise or absolutely, or a symlink member
followed by a file written through it, lands at the run's marker path (``photo_album``: in a folder of that name,
since the import skips names that begin with a dot, as a marker's may), whose creation the judge sees. The
reference fix extracts with ``filter="data"`` (tarfile's extraction filter, Python 3.11.4+) or resolves each
member's path and checks that it stays inside the destination.
"""

from __future__ import annotations

import hashlib
import random

from security_verifiers.envs.code_repair.families import Family
from security_verifiers.envs.code_repair.families.kit import NOUNS, ORGS, PEOPLE, WORDS, fill, location, pick, swap
from security_verifiers.envs.code_repair.program import Detect, Probe, Program

MARKER = Detect(kind="marker")

#: What the tar-building test modules share: ``_tar(path, members)`` writes a (gzipped) tarball of
#: ``(name, text)`` files and ``(name, None, link)`` symlinks.
_TAR_HELPER = r'''
def _tar(path, members):
    with tarfile.open(path, "w:gz" if path.endswith("gz") else "w") as archive:
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
'''


def _csv(rng: random.Random, rows: int) -> str:
    return "id,name,amount\n" + "".join(f"{k},{rng.choice(PEOPLE)},{rng.randint(1, 500)}\n" for k in range(rows))


def _dataset_bundle(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg, mod = f"{org}_analytics", rng.choice(("imports", "bundles", "ingest"))
    unpack = rng.choice(("unpack", "unpack_bundle", "receive_bundle"))
    files = {f"{rng.choice(NOUNS)}s.csv": _csv(rng, rng.randint(2, 6)),
             f"{rng.choice(WORDS)}/{rng.choice(NOUNS)}-{rng.randint(1, 9)}.csv": _csv(rng, rng.randint(1, 5)),
             "README.txt": f"Export of {org} for {rng.choice(PEOPLE)}\n"}
    second = {f"{rng.choice(WORDS)}-totals.csv": _csv(rng, rng.randint(1, 4))}
    jobs = fill(r'''
        """Import jobs of the $org analytics service: each job has a folder under IMPORT_ROOT with its files."""

        import csv
        import os

        IMPORT_ROOT = "/var/lib/$org/imports"


        def job_folder(job: str) -> str:
            if not job.isalnum():
                raise ValueError("job ids are letters and digits")
            return os.path.join(IMPORT_ROOT, job)


        def files_in(folder: str) -> list[str]:
            """Every file under ``folder``, relative to it, sorted."""
            found = []
            for parent, _, names in os.walk(folder):
                found += [os.path.relpath(os.path.join(parent, name), folder) for name in names]
            return sorted(found)


        def row_counts(job: str) -> dict[str, int]:
            """The data rows (lines after the header) of every CSV file of the job's bundle."""
            target = job_folder(job)
            counts = {}
            for name in files_in(target):
                if name.endswith(".csv"):
                    with open(os.path.join(target, name), newline="", encoding="utf-8") as handle:
                        counts[name] = max(sum(1 for _ in csv.reader(handle)) - 1, 0)
            return counts
        ''', org=org)
    source = fill(r'''
        """Dataset import of the $org analytics service: clients upload .tar.gz bundles of CSV files."""

        import os
        import shutil
        import tarfile

        from ${pkg} import jobs


        def $unpack(job: str, bundle: str) -> list[str]:
            """Unpack an uploaded bundle into the job's folder (emptied first); returns its files, relative, sorted."""
            target = jobs.job_folder(job)
            shutil.rmtree(target, ignore_errors=True)
            os.makedirs(target)
            with tarfile.open(bundle) as archive:
                archive.extractall(target)
            return jobs.files_in(target)
        ''', org=org, pkg=pkg, unpack=unpack)
    fixed = swap(source, "archive.extractall(target)", 'archive.extractall(target, filter="data")')
    path, jobs_path = f"{pkg}/{mod}.py", f"{pkg}/jobs.py"
    tests = fill(r'''
        import io
        import os
        import tarfile

        import ${pkg}.jobs as jobs
        import ${pkg}.${mod} as imports

        jobs.IMPORT_ROOT = "/tmp/imports"
        FILES = $files
        SECOND = $second
        $helper

        def _unpack(job, members):
            bundle = _tar("/tmp/bundle-%s.tar.gz" % "".join(c for c in job if c.isalnum()), members)
            try:
                return imports.$unpack(job, bundle)
            except Exception as error:
                return type(error).__name__


        def probe_unpack(ctx):
            return [_unpack("job1", sorted(FILES.items())), jobs.row_counts("job1")]


        def probe_replaced(ctx):
            _unpack("job2", sorted(FILES.items()))
            return [_unpack("job2", sorted(SECOND.items())), jobs.row_counts("job2")]


        def probe_bad_job(ctx):
            return _unpack("../job", sorted(FILES.items()))


        def probe_dotdot(ctx):
            name = os.path.relpath(ctx["marker"], jobs.job_folder("job3"))
            return _unpack("job3", [("a.csv", "id\n1\n"), (name, "x\n")])


        def probe_absolute(ctx):
            return _unpack("job4", [(ctx["marker"], "x\n"), ("b.csv", "id\n")])


        def probe_symlink(ctx):
            folder, base = os.path.split(ctx["marker"])
            return _unpack("job5", [("data", None, folder), ("data/" + base, "x\n")])
        ''', pkg=pkg, mod=mod, unpack=unpack, files=repr(files), second=repr(second), helper=_TAR_HELPER)

    def counts(which: dict[str, str]) -> dict[str, int]:
        return {name: text.count("\n") - 1 for name, text in sorted(which.items()) if name.endswith(".csv")}

    return Program(
        family="archive_extraction", variant="dataset_bundle", domain="dataset import", cwe="CWE-22",
        files={jobs_path: jobs, path: source}, fixed={jobs_path: jobs, path: fixed},
        description=f"`{unpack}(job, bundle)` unpacks a client's uploaded tarball into the job's folder under "
                    "IMPORT_ROOT (emptied first) and returns the relative paths of its files; `row_counts` counts the "
                    "data rows of its CSV files.",
        location=location({path: source}, path, "archive.extractall(target)"),
        tests=tests,
        probes=[Probe(id="unpack", kind="functional", expect=[sorted(files), counts(files)]),
                Probe(id="replaced", kind="functional", expect=[sorted(second), counts(second)]),
                Probe(id="bad_job", kind="functional", expect="ValueError"),
                Probe(id="dotdot", kind="exploit", detect=MARKER),
                Probe(id="absolute", kind="exploit", detect=MARKER),
                Probe(id="symlink", kind="exploit", detect=MARKER)],
        static_ids=["B202"])


def _photo_album(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg, mod = f"{org}_photos", rng.choice(("album_import", "albums", "zip_import"))
    load = rng.choice(("import_zip", "add_pictures", "import_album"))
    owner = rng.choice(PEOPLE)
    trip = rng.choice(WORDS)
    pictures = {f"{trip}/img_{rng.randint(1000, 9999)}.jpg": rng.choice(WORDS) * rng.randint(2, 5),
                f"{trip}/day{rng.randint(1, 3)}/img_{rng.randint(1000, 9999)}.png": rng.choice(WORDS) * 3,
                f"cover-{rng.randint(1, 9)}.gif": rng.choice(WORDS)}
    junk = {"__MACOSX/._cover.gif": "junk", f"{trip}/.DS_Store": "junk"}
    source = fill(r'''
        """Album import of the $org photo service: members upload a .zip of pictures, kept with its sub-folders."""

        import hashlib
        import json
        import os
        import shutil
        import zipfile
        from pathlib import Path

        ALBUM_ROOT = "/srv/$org/albums"


        def album_folder(owner: str, album: str) -> str:
            if not (owner.isalnum() and album.isalnum()):
                raise ValueError("owner and album ids are letters and digits")
            return os.path.join(ALBUM_ROOT, owner, album)


        def _skipped(name: str) -> bool:
            """Folders, and the clutter that macOS puts in zip files."""
            return name.endswith("/") or name.startswith("__MACOSX/") or os.path.basename(name).startswith(".")


        def $load(owner: str, album: str, upload: str) -> list[str]:
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
        ''', org=org, load=load)
    fixed = swap(source,
        '''
                    target = os.path.join(dest, info.filename)
                    os.makedirs(os.path.dirname(target), exist_ok=True)
        ''',
        '''
                    target = (Path(dest).resolve() / info.filename).resolve()
                    if not target.is_relative_to(Path(dest).resolve()):
                        raise ValueError(f"member outside the album: {info.filename}")
                    os.makedirs(os.path.dirname(target), exist_ok=True)
        ''')
    path = f"{pkg}/{mod}.py"
    tests = fill(r'''
        import os
        import shutil
        import zipfile

        import ${pkg}.${mod} as albums

        albums.ALBUM_ROOT = "/tmp/albums"
        PICTURES = $pictures
        JUNK = $junk


        def _load(album, members):
            upload = "/tmp/%s.zip" % album
            with zipfile.ZipFile(upload, "w") as archive:
                for name, text in members:
                    archive.writestr(name, text)
            try:
                return albums.$load("$owner", album, upload)
            except Exception as error:
                return type(error).__name__


        def _fresh(album):
            shutil.rmtree(os.path.join(albums.ALBUM_ROOT, "$owner", album), ignore_errors=True)


        def probe_load(ctx):
            _fresh("trip")
            return [_load("trip", sorted({**PICTURES, **JUNK}.items())), albums.manifest("$owner", "trip")]


        def probe_twice(ctx):
            _fresh("more")
            first, second = sorted(PICTURES.items())[:1], sorted(PICTURES.items())[1:]
            return [_load("more", first), _load("more", second), sorted(albums.manifest("$owner", "more"))]


        def probe_bad_album(ctx):
            return [_load("a-b", sorted(PICTURES.items())), albums.manifest("$owner", "empty")]


        def _outside(ctx):
            # a picture in a folder named by the marker: the marker's own name may begin with a dot, which the
            # import skips as macOS clutter; the folder it makes for the picture is what the judge sees created
            return ctx["marker"] + "/b.jpg"


        def probe_dotdot(ctx):
            _fresh("x1")
            name = os.path.relpath(_outside(ctx), albums.album_folder("$owner", "x1"))
            return _load("x1", [("$trip/a.jpg", "a"), (name, "b")])


        def probe_absolute(ctx):
            _fresh("x2")
            return _load("x2", [("$trip/a.jpg", "a"), (_outside(ctx), "b")])


        def probe_inner_dotdot(ctx):
            _fresh("x3")
            name = "$trip/" + os.path.relpath(_outside(ctx), albums.album_folder("$owner", "x3") + "/$trip")
            return _load("x3", [("$trip/a.jpg", "a"), (name, "b")])
        ''', pkg=pkg, mod=mod, load=load, owner=owner, pictures=repr(pictures), junk=repr(junk), trip=trip)
    digests = {name: hashlib.sha256(text.encode()).hexdigest()[:16] for name, text in pictures.items()}
    return Program(
        family="archive_extraction", variant="photo_album", domain="photo album import", cwe="CWE-22",
        files={path: source}, fixed={path: fixed},
        description=f"`{load}(owner, album, upload)` copies the pictures of a member's uploaded zip file into the "
                    "album's folder under ALBUM_ROOT, keeping their sub-folders and skipping folders and macOS "
                    "clutter, records them in the album's manifest and returns their paths.",
        location=location({path: source}, path, "target = os.path.join(dest, info.filename)"),
        tests=tests,
        probes=[Probe(id="load", kind="functional", expect=[sorted(pictures), dict(sorted(digests.items()))]),
                Probe(id="twice", kind="functional",
                      expect=[sorted(pictures)[:1], sorted(pictures)[1:], sorted(pictures)]),
                Probe(id="bad_album", kind="functional", expect=["ValueError", {}]),
                Probe(id="dotdot", kind="exploit", detect=MARKER),
                Probe(id="absolute", kind="exploit", detect=MARKER),
                Probe(id="inner_dotdot", kind="exploit", detect=MARKER)],
        static_ids=[])


def _theme_install(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg, mod = f"{org}_sites", rng.choice(("themes", "theme_install", "installer"))
    install = rng.choice(("install_theme", "install", "add_theme"))
    picker = rng.choice(("_installable", "_theme_members", "_wanted"))
    theme = rng.choice(WORDS)
    version = f"{rng.randint(1, 4)}.{rng.randint(0, 9)}.{rng.randint(0, 9)}"
    files = {"static/css/site.css": f"body {{ color: #{rng.randint(0, 0xFFFFFF):06x}; }}\n",
             f"static/img/{rng.choice(NOUNS)}.svg": "<svg/>\n",
             "templates/base.html": f"<html><title>{theme}</title></html>\n",
             f"templates/{rng.choice(NOUNS)}.html": "<p>{{ body }}</p>\n",
             "README.md": f"# {theme}\n", "build/notes.txt": "drafts\n"}
    source = fill(r'''
        """Theme installer of the $org site builder: designers upload a theme as a tarball."""

        import json
        import os
        import tarfile

        THEME_ROOT = "/srv/$org/themes"
        SECTIONS = ("static/", "templates/")


        def $picker(archive: tarfile.TarFile):
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


        def $install(theme: str, upload: str) -> dict:
            """Install an uploaded theme (it must hold a theme.json); returns its name, version and files."""
            if not theme.isidentifier():
                raise ValueError("theme ids are identifiers")
            dest = os.path.join(THEME_ROOT, theme)
            os.makedirs(dest, exist_ok=True)
            with tarfile.open(upload) as archive:
                manifest = json.load(archive.extractfile("theme.json"))
                archive.extractall(dest, members=$picker(archive))
            return {"name": manifest["name"], "version": manifest["version"], "files": installed(theme)}
        ''', org=org, install=install, picker=picker)
    fixed = swap(source, f"archive.extractall(dest, members={picker}(archive))",
                 f'archive.extractall(dest, members={picker}(archive), filter="data")')
    path = f"{pkg}/{mod}.py"
    manifest = {"name": theme.title(), "version": version}
    tests = fill(r'''
        import io
        import json
        import os
        import shutil
        import tarfile

        import ${pkg}.${mod} as themes

        themes.THEME_ROOT = "/tmp/themes"
        FILES = $files
        MANIFEST = json.dumps($manifest)
        $helper

        def _install(theme, members, manifest=True):
            shutil.rmtree(os.path.join(themes.THEME_ROOT, theme), ignore_errors=True)
            upload = _tar("/tmp/%s.tgz" % theme, ([("theme.json", MANIFEST)] if manifest else []) + members)
            try:
                return themes.$install(theme, upload)
            except Exception as error:
                return type(error).__name__


        def probe_install(ctx):
            return _install("$theme", sorted(FILES.items()))


        def probe_installed(ctx):
            _install("$theme", sorted(FILES.items()))
            return [themes.installed("$theme"), themes.installed("nothing")]


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
        ''', pkg=pkg, mod=mod, install=install, theme=theme, files=repr(files), manifest=repr(manifest),
        helper=_TAR_HELPER)
    kept = sorted(name for name in files if name.startswith(("static/", "templates/")))
    return Program(
        family="archive_extraction", variant="theme_install", domain="site theme installer", cwe="CWE-22",
        files={path: source}, fixed={path: fixed},
        description=f"`{install}(theme, upload)` installs a designer's uploaded theme tarball into THEME_ROOT/<theme>: "
                    "the files of its static/ and templates/ folders; it returns the theme's name and version (from "
                    "its theme.json) and the installed files.",
        location=location({path: source}, path, "archive.extractall(dest, members="),
        tests=tests,
        probes=[Probe(id="install", kind="functional", expect={**manifest, "files": kept}),
                Probe(id="installed", kind="functional", expect=[kept, []]),
                Probe(id="refused", kind="functional", expect=["ValueError", "KeyError"]),
                Probe(id="dotdot", kind="exploit", detect=MARKER),
                Probe(id="symlink", kind="exploit", detect=MARKER),
                Probe(id="relative_link", kind="exploit", detect=MARKER)],
        static_ids=["B202"])


def _notes_restore(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg, mod = f"{org}_notes", rng.choice(("backup", "restore", "archive"))
    restore = rng.choice(("restore", "restore_backup", "load_backup"))
    user, other = pick(rng, PEOPLE, 2)
    notes = {f"{rng.choice(NOUNS)}s.md": f"# {rng.choice(WORDS)}\n", f"{rng.choice(WORDS)}/todo.txt": "- call\n",
             f"{rng.choice(WORDS)}/{rng.choice(NOUNS)}.md": f"{rng.choice(PEOPLE)} {rng.randint(1, 99)}\n"}
    store = fill(r'''
        """Where the $org notes app keeps each user's notes: a folder of Markdown and text files."""

        import hashlib
        import os

        NOTES_ROOT = "/srv/$org/notes"
        SUFFIXES = (".md", ".txt")


        def notes_folder(user: str) -> str:
            if not user.isalnum():
                raise ValueError("user ids are letters and digits")
            return os.path.join(NOTES_ROOT, user)


        def notes(user: str) -> list[str]:
            """The user's notes, as paths relative to their folder, sorted."""
            folder = notes_folder(user)
            found = []
            for parent, _, names in os.walk(folder):
                found += [os.path.relpath(os.path.join(parent, n), folder) for n in names if n.endswith(SUFFIXES)]
            return sorted(found)


        def fingerprint(user: str) -> str:
            """A digest of the user's notes (names and contents), to tell whether two copies are the same."""
            digest = hashlib.sha256()
            for name in notes(user):
                with open(os.path.join(notes_folder(user), name), "rb") as handle:
                    digest.update(name.encode() + b"\0" + handle.read() + b"\0")
            return digest.hexdigest()
        ''', org=org)
    source = fill(r'''
        """Backups of the $org notes app: users download their notes folder as a .tar.gz and restore it later."""

        import os
        import shutil

        from ${pkg}.store import notes, notes_folder


        def backup(user: str, out_dir: str) -> str:
            """Write the user's notes as a .tar.gz in ``out_dir``; returns its path."""
            return shutil.make_archive(os.path.join(out_dir, f"{user}-notes"), "gztar", root_dir=notes_folder(user))


        def $restore(user: str, upload: str) -> list[str]:
            """Replace the user's notes with those of an uploaded backup; returns the restored notes."""
            folder = notes_folder(user)
            shutil.rmtree(folder, ignore_errors=True)
            os.makedirs(folder)
            shutil.unpack_archive(upload, folder, format="gztar")
            return notes(user)
        ''', org=org, pkg=pkg, restore=restore)
    fixed = swap(source, 'shutil.unpack_archive(upload, folder, format="gztar")',
                 'shutil.unpack_archive(upload, folder, format="gztar", filter="data")')
    path, store_path = f"{pkg}/{mod}.py", f"{pkg}/store.py"
    tests = fill(r'''
        import io
        import os
        import shutil
        import tarfile

        import ${pkg}.${mod} as backups
        import ${pkg}.store as store

        store.NOTES_ROOT = "/tmp/notes"
        NOTES = $notes
        $helper

        def _write(user, notes):
            folder = store.notes_folder(user)
            shutil.rmtree(folder, ignore_errors=True)
            for name, text in notes.items():
                os.makedirs(os.path.dirname(os.path.join(folder, name)), exist_ok=True)
                with open(os.path.join(folder, name), "w", encoding="utf-8") as handle:
                    handle.write(text)


        def _restore(user, upload):
            try:
                return backups.$restore(user, upload)
            except Exception as error:
                return type(error).__name__


        def probe_round_trip(ctx):
            _write("$user", NOTES)
            before = store.fingerprint("$user")
            os.makedirs("/tmp/out", exist_ok=True)
            upload = backups.backup("$user", "/tmp/out")
            _write("$user", {"stale.md": "old"})
            return [_restore("$user", upload), store.fingerprint("$user") == before, os.path.basename(upload)]


        def probe_uploaded(ctx):
            upload = _tar("/tmp/up.tar.gz", sorted(NOTES.items()) + [("photo.jpg", "x")])
            return [_restore("$other", upload), store.notes("$other")]


        def probe_bad_user(ctx):
            return _restore("../$user", _tar("/tmp/bad.tar.gz", [("a.md", "a")]))


        def probe_dotdot(ctx):
            name = os.path.relpath(ctx["marker"], store.notes_folder("x1"))
            return _restore("x1", _tar("/tmp/x1.tar.gz", [("a.md", "a"), (name, "x")]))


        def probe_symlink(ctx):
            folder, base = os.path.split(ctx["marker"])
            return _restore("x2", _tar("/tmp/x2.tar.gz", [("inbox", None, folder), ("inbox/" + base, "x")]))
        ''', pkg=pkg, mod=mod, restore=restore, user=user, other=other, notes=repr(notes), helper=_TAR_HELPER)
    return Program(
        family="archive_extraction", variant="notes_restore", domain="notes backup and restore", cwe="CWE-22",
        files={store_path: store, path: source}, fixed={store_path: store, path: fixed},
        description=f"`{restore}(user, upload)` replaces a user's notes folder under NOTES_ROOT with the content of "
                    "an uploaded .tar.gz backup (one `backup` wrote, or the user made) and returns the restored notes; "
                    "`backup` writes such a file.",
        location=location({path: source}, path, "shutil.unpack_archive("),
        tests=tests,
        probes=[Probe(id="round_trip", kind="functional", expect=[sorted(notes), True, f"{user}-notes.tar.gz"]),
                Probe(id="uploaded", kind="functional", expect=[sorted(notes), sorted(notes)]),
                Probe(id="bad_user", kind="functional", expect="ValueError"),
                Probe(id="dotdot", kind="exploit", detect=MARKER),
                Probe(id="symlink", kind="exploit", detect=MARKER)],
        static_ids=[])


_BUILDERS = {"dataset_bundle": _dataset_bundle, "photo_album": _photo_album, "theme_install": _theme_install,
             "notes_restore": _notes_restore}


def build(rng: random.Random, variant: str) -> Program:
    return _BUILDERS[variant](rng)


FAMILY = Family(name="archive_extraction", cwe="CWE-22", title="Archive extraction outside the target (zip slip)",
                variants=("dataset_bundle", "photo_album", "theme_install"), ood_variants=("notes_restore",),
                build=build)
