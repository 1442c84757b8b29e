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

from security_verifiers.envs.code_repair.families import Variants
from security_verifiers.envs.code_repair.families.kit import NOUNS, ORGS, PEOPLE, WORDS, Templates, location, pick, swap
from security_verifiers.envs.code_repair.program import Detect, Probe, Program

TEMPLATES = Templates(__name__)
VARIANTS = Variants()

MARKER = Detect(kind="marker")

#: What the tar-building test modules share: ``_tar(path, members)`` writes a (gzipped) tarball of
#: ``(name, text)`` files and ``(name, None, link)`` symlinks.
_TAR_HELPER = TEMPLATES.render("shared/tar_helper.py")


def _csv(rng: random.Random, rows: int) -> str:
    return "id,name,amount\n" + "".join(f"{k},{rng.choice(PEOPLE)},{rng.randint(1, 500)}\n" for k in range(rows))


@VARIANTS.add()
def _dataset_bundle(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg, mod = f"{org}_analytics", rng.choice(("imports", "bundles", "ingest"))
    unpack = rng.choice(("unpack", "unpack_bundle", "receive_bundle"))
    files = {f"{rng.choice(NOUNS)}s.csv": _csv(rng, rng.randint(2, 6)),
             f"{rng.choice(WORDS)}/{rng.choice(NOUNS)}-{rng.randint(1, 9)}.csv": _csv(rng, rng.randint(1, 5)),
             "README.txt": f"Export of {org} for {rng.choice(PEOPLE)}\n"}
    second = {f"{rng.choice(WORDS)}-totals.csv": _csv(rng, rng.randint(1, 4))}
    jobs = TEMPLATES.render("dataset_bundle/jobs.py", org=org)
    source = TEMPLATES.render("dataset_bundle/source.py", org=org, pkg=pkg, unpack=unpack)
    fixed = swap(source, "archive.extractall(target)", 'archive.extractall(target, filter="data")')
    path, jobs_path = f"{pkg}/{mod}.py", f"{pkg}/jobs.py"
    tests = TEMPLATES.render("dataset_bundle/tests.py", pkg=pkg, mod=mod, unpack=unpack, files=repr(files),
                             second=repr(second), helper=_TAR_HELPER)

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


@VARIANTS.add()
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
    source = TEMPLATES.render("photo_album/source.py", org=org, load=load)
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
    tests = TEMPLATES.render("photo_album/tests.py", pkg=pkg, mod=mod, load=load, owner=owner, pictures=repr(pictures),
                             junk=repr(junk), trip=trip)
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


@VARIANTS.add()
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
    source = TEMPLATES.render("theme_install/source.py", org=org, install=install, picker=picker)
    fixed = swap(source, f"archive.extractall(dest, members={picker}(archive))",
                 f'archive.extractall(dest, members={picker}(archive), filter="data")')
    path = f"{pkg}/{mod}.py"
    manifest = {"name": theme.title(), "version": version}
    tests = TEMPLATES.render("theme_install/tests.py", pkg=pkg, mod=mod, install=install, theme=theme,
                             files=repr(files), manifest=repr(manifest), helper=_TAR_HELPER)
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


@VARIANTS.add(ood=True)
def _notes_restore(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg, mod = f"{org}_notes", rng.choice(("backup", "restore", "archive"))
    restore = rng.choice(("restore", "restore_backup", "load_backup"))
    user, other = pick(rng, PEOPLE, 2)
    notes = {f"{rng.choice(NOUNS)}s.md": f"# {rng.choice(WORDS)}\n", f"{rng.choice(WORDS)}/todo.txt": "- call\n",
             f"{rng.choice(WORDS)}/{rng.choice(NOUNS)}.md": f"{rng.choice(PEOPLE)} {rng.randint(1, 99)}\n"}
    store = TEMPLATES.render("notes_restore/store.py", org=org)
    source = TEMPLATES.render("notes_restore/source.py", org=org, pkg=pkg, restore=restore)
    fixed = swap(source, 'shutil.unpack_archive(upload, folder, format="gztar")',
                 'shutil.unpack_archive(upload, folder, format="gztar", filter="data")')
    path, store_path = f"{pkg}/{mod}.py", f"{pkg}/store.py"
    tests = TEMPLATES.render("notes_restore/tests.py", pkg=pkg, mod=mod, restore=restore, user=user, other=other,
                             notes=repr(notes), helper=_TAR_HELPER)
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


FAMILY = VARIANTS.family(name="archive_extraction", cwe="CWE-22",
                         title="Archive extraction outside the target (zip slip)")
