"""CWE-22, path traversal: a program joins a caller's path to the folder it serves and opens what comes out.

Variants:

- ``downloads``: a customer portal's download area reads ``os.path.join(root, name)``;
- ``attachments``: a helpdesk serves ``/files/<ticket>/<name>`` and URL-decodes the name after splitting the path;
- ``mail_templates``: an e-mail template loader checks ``normpath(...).startswith(TEMPLATE_DIR)``, which a
  sibling folder whose name begins with the template folder's passes;
- ``avatar_upload`` (OOD): the path is written, not read: an uploaded picture is saved under the file name the
  client sent.

The reading variants' exploits disclose a fixture outside the served folder that holds the run's canary
(``../``, absolute paths under the program's project directory ``ROOT``, ``..%2f``, the sibling folder): the canary
shows in what the program returned; the writing one creates the run's marker file, whose creation the judge sees. The
reference fix resolves the path and checks ``is_relative_to`` the served folder.
"""

from __future__ import annotations

import hashlib
import html
import random
from urllib.parse import quote

from security_verifiers.envs.code_repair.families import Family
from security_verifiers.envs.code_repair.families.kit import NOUNS, ORGS, PEOPLE, WORDS, fill, location, pick, swap
from security_verifiers.envs.code_repair.program import Detect, Probe, Program

LEAK = Detect(kind="contains", text="{canary}")
MARKER = Detect(kind="marker")
_SECRETS = ("db_password.txt", "signing.key", "credentials.ini", "id_ed25519", "settings.env")


def _text(rng: random.Random, lines: int) -> str:
    return "".join(f"{rng.choice(WORDS).title()} {rng.choice(NOUNS)} {rng.randint(1, 999)}\n" for _ in range(lines))


def _downloads(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg, mod = f"{org}_portal", rng.choice(("downloads", "files", "delivery"))
    read = rng.choice(("read_download", "download", "fetch_file"))
    secret = rng.choice(_SECRETS)
    version = f"{rng.randint(1, 9)}.{rng.randint(0, 20)}"
    files = {f"release-notes-{version}.txt": _text(rng, rng.randint(3, 6)),
             f"manuals/{rng.choice(WORDS)}-setup.txt": _text(rng, rng.randint(2, 5)),
             f"manuals/{rng.choice(NOUNS)}-guide.md": _text(rng, rng.randint(2, 5)),
             f"{rng.choice(NOUNS)}s.csv": "id,name\n" + "".join(f"{k},{p}\n"
                                                                 for k, p in enumerate(pick(rng, PEOPLE, 3)))}
    names = sorted(files)
    first, nested = f"release-notes-{version}.txt", next(n for n in names if n.startswith("manuals/"))
    config = fill(r'''
        """Settings of the $org portal's download area."""

        import os

        DOWNLOAD_ROOT = os.environ.get("${upper}_DOWNLOADS", "/srv/$org/downloads")
        CONTENT_TYPES = {".txt": "text/plain", ".md": "text/markdown", ".csv": "text/csv", ".pdf": "application/pdf"}
        #: How many downloads the portal's landing page features.
        FEATURED = 2


        def content_type(name: str) -> str:
            return CONTENT_TYPES.get(os.path.splitext(name)[1].lower(), "application/octet-stream")
        ''', org=org, upper=org.upper())
    source = fill(r'''
        """The download area of the $org customer portal: release notes, manuals and data files under DOWNLOAD_ROOT."""

        import hashlib
        import os
        import random
        from pathlib import Path

        from ${pkg} import config


        def $read(name: str) -> bytes:
            """The content of the download ``name``, a path relative to DOWNLOAD_ROOT as in the download links."""
            path = os.path.join(config.DOWNLOAD_ROOT, name)
            with open(path, "rb") as handle:
                return handle.read()


        def checksum(name: str) -> str:
            """The SHA-256 shown next to each download link."""
            return hashlib.sha256($read(name)).hexdigest()


        def headers(name: str) -> dict[str, str]:
            """The response headers of a download."""
            size = len($read(name))
            kind = config.content_type(name)
            filename = os.path.basename(name)
            return {"Content-Type": kind, "Content-Length": str(size),
                    "Content-Disposition": f'attachment; filename="{filename}"'}


        def catalogue() -> list[str]:
            """Every download, as a path relative to DOWNLOAD_ROOT, sorted."""
            root = Path(config.DOWNLOAD_ROOT)
            return sorted(path.relative_to(root).as_posix() for path in root.rglob("*") if path.is_file())


        def featured() -> list[str]:
            """A few downloads for the landing page, a different pick on every visit."""
            names = catalogue()
            return random.sample(names, min(config.FEATURED, len(names)))
        ''', org=org, pkg=pkg, read=read)
    fixed = swap(source,
        '''
            path = os.path.join(config.DOWNLOAD_ROOT, name)
            with open(path, "rb") as handle:
        ''',
        '''
            root = Path(config.DOWNLOAD_ROOT).resolve()
            path = (root / name).resolve()
            if not path.is_relative_to(root):
                raise PermissionError(f"not a download: {name}")
            with open(path, "rb") as handle:
        ''')
    path, config_path = f"{pkg}/{mod}.py", f"{pkg}/config.py"
    tests = fill(r'''
        import ${pkg}.config as config
        import ${pkg}.${mod} as downloads

        config.DOWNLOAD_ROOT = ROOT + "/data/downloads"


        def _read(name):
            try:
                return downloads.$read(name).decode()
            except Exception as error:
                return type(error).__name__


        def probe_read(ctx):
            return _read("$first")


        def probe_nested(ctx):
            return _read("$nested")


        def probe_missing(ctx):
            return _read("no-such-file.txt")


        def probe_checksum(ctx):
            return downloads.checksum("$nested")


        def probe_headers(ctx):
            return downloads.headers("$nested")


        def probe_catalogue(ctx):
            return downloads.catalogue()


        def probe_featured(ctx):
            picks = downloads.featured()
            return [len(picks), len(set(picks)), sorted(set(picks) - set(downloads.catalogue()))]


        def probe_dotdot(ctx):
            return _read("../../secret/$secret")


        def probe_absolute(ctx):
            return _read(ROOT + "/secret/$secret")


        def probe_inner_dotdot(ctx):
            return _read("manuals/../../../secret/$secret")
        ''', pkg=pkg, mod=mod, read=read, first=first, nested=nested, secret=secret)
    kinds = {".txt": "text/plain", ".md": "text/markdown", ".csv": "text/csv"}
    ext = nested[nested.rindex("."):]
    return Program(
        family="path_traversal", variant="downloads", domain="customer portal downloads", cwe="CWE-22",
        files={config_path: config, path: source}, fixed={config_path: config, path: fixed},
        description=f"`{read}(name)` returns the bytes of a download, `name` being its path relative to "
                    "DOWNLOAD_ROOT (sub-folders included) as it appears in the portal's download links; `checksum`, "
                    "`headers` and `catalogue` describe the downloads.",
        location=location({path: source}, path, "path = os.path.join(config.DOWNLOAD_ROOT, name)"),
        tests=tests,
        probes=[Probe(id="read", kind="functional", expect=files[first]),
                Probe(id="nested", kind="functional", expect=files[nested]),
                Probe(id="missing", kind="functional", expect="FileNotFoundError"),
                Probe(id="checksum", kind="functional", expect=hashlib.sha256(files[nested].encode()).hexdigest()),
                Probe(id="headers", kind="functional",
                      expect={"Content-Type": kinds[ext], "Content-Length": str(len(files[nested].encode())),
                              "Content-Disposition": f'attachment; filename="{nested.split("/")[-1]}"'}),
                Probe(id="catalogue", kind="functional", expect=names),
                Probe(id="featured", kind="functional", expect=[2, 2, []]),
                Probe(id="dotdot", kind="exploit", detect=LEAK),
                Probe(id="absolute", kind="exploit", detect=LEAK),
                Probe(id="inner_dotdot", kind="exploit", detect=LEAK)],
        fixtures={**{f"data/downloads/{name}": text for name, text in files.items()},
                  f"secret/{secret}": "{canary}\n"},
        static_ids=[])


def _attachments(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg, mod = f"{org}_helpdesk", rng.choice(("attachments", "files", "serving"))
    serve = rng.choice(("serve", "handle_get", "respond"))
    secret = rng.choice(_SECRETS)
    ticket = str(rng.randint(1000, 9999))
    other_ticket = str(int(ticket) + rng.randint(1, 50))
    spaced = f"{rng.choice(NOUNS)} {rng.choice(WORDS)}.txt"
    files = {f"{ticket}/{rng.choice(NOUNS)}.log": _text(rng, 3), f"{ticket}/{spaced}": _text(rng, 2),
             f"{ticket}/scans/page-{rng.randint(1, 9)}.txt": _text(rng, 2),
             f"{other_ticket}/{rng.choice(NOUNS)}.txt": _text(rng, 2)}
    plain = next(n for n in files if n.endswith(".log"))
    scan = next(n for n in files if "/scans/" in n)
    source = fill(r'''
        """Attachments of the $org helpdesk, which the support site serves at /files/<ticket>/<name>."""

        import html
        import os
        from pathlib import Path
        from urllib.parse import quote, unquote, urlsplit

        ATTACHMENT_ROOT = "/srv/helpdesk/attachments"
        NOT_FOUND = (404, "not found")


        def parse(url: str) -> tuple[str, str]:
            """The ticket number and the attachment's name (it may hold sub-folders) of an attachment URL."""
            parts = urlsplit(url).path.split("/", 3)
            if len(parts) != 4 or parts[1] != "files" or not parts[2].isdigit() or not parts[3]:
                raise LookupError(url)
            return parts[2], unquote(parts[3])


        def $serve(url: str) -> tuple[int, str]:
            """The status and the body of the response to a GET of ``url``."""
            try:
                ticket, name = parse(url)
            except LookupError:
                return NOT_FOUND
            path = os.path.join(ATTACHMENT_ROOT, ticket, name)
            if not os.path.isfile(path):
                return NOT_FOUND
            with open(path, encoding="utf-8", errors="replace") as handle:
                return 200, handle.read()


        def index_page(ticket: str) -> str:
            """The HTML list of a ticket's attachments (those directly in its folder), linked."""
            if not ticket.isdigit():
                raise ValueError("ticket numbers are digits")
            folder = Path(ATTACHMENT_ROOT, ticket)
            names = sorted(entry.name for entry in folder.iterdir() if entry.is_file()) if folder.is_dir() else []
            items = "".join(f'<li><a href="/files/{ticket}/{quote(name)}">{html.escape(name)}</a></li>'
                            for name in names)
            return f"<ul>{items}</ul>"
        ''', org=org, serve=serve)
    fixed = swap(source,
        '''
            path = os.path.join(ATTACHMENT_ROOT, ticket, name)
            if not os.path.isfile(path):
        ''',
        '''
            folder = Path(ATTACHMENT_ROOT, ticket).resolve()
            path = (folder / name).resolve()
            if not path.is_relative_to(folder) or not os.path.isfile(path):
        ''')
    path = f"{pkg}/{mod}.py"
    tests = fill(r'''
        from pathlib import Path
        from urllib.parse import quote

        import ${pkg}.${mod} as attachments

        attachments.ATTACHMENT_ROOT = ROOT + "/data/attachments"
        Path(WORK, "data/attachments", "$ticket", "$spaced").write_text($spaced_text, encoding="utf-8")


        def _get(url):
            try:
                return list(attachments.$serve(url))
            except Exception as error:
                return type(error).__name__


        def probe_plain(ctx):
            return _get("/files/$plain")


        def probe_encoded_name(ctx):
            return _get("/files/$spaced_url")


        def probe_sub_folder(ctx):
            return _get("/files/$scan?download=1")


        def probe_missing(ctx):
            return [_get("/files/$ticket/nothing.txt"), _get("/files/$ticket/"), _get("/downloads/$plain")]


        def probe_index(ctx):
            return attachments.index_page("$ticket")


        def probe_encoded_dotdot(ctx):
            return _get("/files/$ticket/..%2f..%2f..%2fsecret%2f$secret")


        def probe_encoded_dots(ctx):
            return _get("/files/$ticket/%2e%2e/%2e%2e/%2E%2E/secret/$secret")


        def probe_encoded_absolute(ctx):
            return _get("/files/$ticket/" + quote(ROOT + "/secret/$secret", safe=""))
        ''', pkg=pkg, mod=mod, serve=serve, plain=plain, spaced_url=quote(f"{ticket}/{spaced}"), scan=scan,
        ticket=ticket, secret=secret, spaced=spaced, spaced_text=repr(files[f"{ticket}/{spaced}"]))
    direct = sorted(n.split("/", 1)[1] for n in files if n.startswith(ticket + "/") and n.count("/") == 1)
    index = "<ul>" + "".join(f'<li><a href="/files/{ticket}/{quote(n)}">{html.escape(n)}</a></li>'
                             for n in direct) + "</ul>"
    return Program(
        family="path_traversal", variant="attachments", domain="helpdesk attachment server", cwe="CWE-22",
        files={path: source}, fixed={path: fixed},
        description=f"`{serve}(url)` answers a GET of `/files/<ticket>/<name>` with (200, the attachment's text) "
                    "for an attachment stored under ATTACHMENT_ROOT/<ticket>/ (the name is URL-encoded and may hold "
                    "sub-folders) and (404, 'not found') otherwise; `index_page` lists a ticket's attachments.",
        location=location({path: source}, path, "path = os.path.join(ATTACHMENT_ROOT, ticket, name)"),
        tests=tests,
        probes=[Probe(id="plain", kind="functional", expect=[200, files[plain]]),
                Probe(id="encoded_name", kind="functional", expect=[200, files[f"{ticket}/{spaced}"]]),
                Probe(id="sub_folder", kind="functional", expect=[200, files[scan]]),
                Probe(id="missing", kind="functional", expect=[[404, "not found"]] * 3),
                Probe(id="index", kind="functional", expect=index),
                Probe(id="encoded_dotdot", kind="exploit", detect=LEAK),
                Probe(id="encoded_dots", kind="exploit", detect=LEAK),
                Probe(id="encoded_absolute", kind="exploit", detect=LEAK)],
        fixtures={**{f"data/attachments/{name}": text for name, text in files.items() if name != f"{ticket}/{spaced}"},
                  f"secret/{secret}": "{canary}\n"},
        static_ids=[])


def _mail_templates(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg, mod = f"{org}_notify", rng.choice(("templates", "mail_templates", "render"))
    render = rng.choice(("render", "render_template", "compose"))
    sibling = "templates" + rng.choice(("_private", ".bak", "-drafts", "_old"))
    secret = rng.choice(_SECRETS)
    noun = rng.choice(NOUNS)
    templates = {"welcome.txt": "Hello $name,\nwelcome to " + org.title() + ".\n",
                 f"{noun}/reminder.txt": f"Dear $name, your {noun} $number is due on $date.\n",
                 f"{noun}/receipt.txt": f"Thank you $name: {noun} $number is paid.\n"}
    source = fill(r'''
        """E-mail templates of the $org notifier: every kind of message has a template file under TEMPLATE_DIR."""

        import html
        import os
        from pathlib import Path
        from string import Template

        TEMPLATE_DIR = "/srv/$org/templates"


        def template_path(name: str) -> str:
            """The file of the template ``name``, a path relative to TEMPLATE_DIR (templates sit in sub-folders)."""
            path = os.path.normpath(os.path.join(TEMPLATE_DIR, name))
            if not path.startswith(TEMPLATE_DIR):
                raise PermissionError(f"not a template: {name}")
            return path


        def load(name: str) -> str:
            with open(template_path(name), encoding="utf-8") as handle:
                return handle.read()


        def $render(template: str, **values: object) -> str:
            """The template filled with ``values``, HTML-escaped; placeholders without a value stay as they are."""
            escaped = {key: html.escape(str(value)) for key, value in values.items()}
            return Template(load(template)).safe_substitute(escaped)


        def available() -> list[str]:
            """The templates, as names relative to TEMPLATE_DIR, sorted."""
            root = Path(TEMPLATE_DIR)
            return sorted(path.relative_to(root).as_posix() for path in root.rglob("*.txt"))
        ''', org=org, render=render)
    fixed = swap(source,
        '''
            path = os.path.normpath(os.path.join(TEMPLATE_DIR, name))
            if not path.startswith(TEMPLATE_DIR):
                raise PermissionError(f"not a template: {name}")
            return path
        ''',
        '''
            root = Path(TEMPLATE_DIR).resolve()
            path = (root / name).resolve()
            if not path.is_relative_to(root):
                raise PermissionError(f"not a template: {name}")
            return str(path)
        ''')
    path = f"{pkg}/{mod}.py"
    person = rng.choice(PEOPLE).title()
    number = f"{noun[:3].upper()}-{rng.randint(100, 999)}"
    tests = fill(r'''
        import ${pkg}.${mod} as mail

        mail.TEMPLATE_DIR = ROOT + "/data/templates"


        def _load(name):
            try:
                return mail.load(name)
            except Exception as error:
                return type(error).__name__


        def probe_welcome(ctx):
            return mail.$render("welcome.txt", name="$person")


        def probe_escaped(ctx):
            return mail.$render("$noun/reminder.txt", name="<b>$person</b>", number="$number")


        def probe_available(ctx):
            return mail.available()


        def probe_outside(ctx):
            return [_load("../../secret/$secret"), _load("$noun/../welcome.txt")]


        def probe_missing(ctx):
            return _load("$noun/nothing.txt")


        def probe_sibling(ctx):
            return _load("../$sibling/$secret")


        def probe_absolute(ctx):
            return _load(ROOT + "/data/$sibling/$secret")


        def probe_render_sibling(ctx):
            try:
                return mail.$render("$noun/../../$sibling/./$secret", name="x")
            except Exception as error:
                return type(error).__name__
        ''', pkg=pkg, mod=mod, render=render, person=person, noun=noun, number=number, secret=secret,
        sibling=sibling)
    reminder = templates[f"{noun}/reminder.txt"].replace("$name", html.escape(f"<b>{person}</b>")) \
        .replace("$number", number)
    return Program(
        family="path_traversal", variant="mail_templates", domain="e-mail template rendering", cwe="CWE-22",
        files={path: source}, fixed={path: fixed},
        description=f"`{render}(template, **values)` fills the template (a path relative to TEMPLATE_DIR) with "
                    "HTML-escaped values; `load` reads a template and refuses, with PermissionError, a name that "
                    "is not a template in TEMPLATE_DIR. Template names come from the notification's settings form.",
        location=location({path: source}, path, "path = os.path.normpath(", extra_lines=1),
        tests=tests,
        probes=[Probe(id="welcome", kind="functional", expect=templates["welcome.txt"].replace("$name", person)),
                Probe(id="escaped", kind="functional", expect=reminder),
                Probe(id="available", kind="functional", expect=sorted(templates)),
                Probe(id="outside", kind="functional", expect=["PermissionError", templates["welcome.txt"]]),
                Probe(id="missing", kind="functional", expect="FileNotFoundError"),
                Probe(id="sibling", kind="exploit", detect=LEAK),
                Probe(id="absolute", kind="exploit", detect=LEAK),
                Probe(id="render_sibling", kind="exploit", detect=LEAK)],
        fixtures={**{f"data/templates/{name}": text for name, text in templates.items()},
                  f"data/{sibling}/{secret}": "{canary}\n"},
        static_ids=[])


_PNG = b"\x89PNG\r\n\x1a\n"


def _avatar_upload(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg, mod = f"{org}_community", rng.choice(("avatars", "profile_pictures", "uploads"))
    save = rng.choice(("save_avatar", "store_picture", "upload_avatar"))
    member, other = pick(rng, PEOPLE, 2)
    member += str(rng.randint(1, 99))
    picture = f"{rng.choice(WORDS)} {rng.randint(1, 9)}.png"
    body = rng.choice(WORDS).encode() * rng.randint(2, 6)
    images = fill(r'''
        """What the $org community site accepts as a picture."""

        MAX_BYTES = 512 * 1024
        SIGNATURES = {b"\x89PNG\r\n\x1a\n": "png", b"\xff\xd8\xff": "jpeg", b"GIF87a": "gif", b"GIF89a": "gif"}


        def image_kind(data: bytes) -> str:
            """The format of an image, from its first bytes."""
            for magic, kind in SIGNATURES.items():
                if data.startswith(magic):
                    return kind
            raise ValueError("not a PNG, JPEG or GIF image")


        def check(data: bytes) -> str:
            """The format of an acceptable picture; ValueError for anything else."""
            if len(data) > MAX_BYTES:
                raise ValueError("the picture is too large")
            return image_kind(data)
        ''', org=org)
    source = fill(r'''
        """Profile pictures of the $org community site: members upload images, which are kept in their folder."""

        import hashlib
        import os
        import shutil
        from pathlib import Path
        from urllib.parse import quote

        from ${pkg} import images

        AVATAR_DIR = "/srv/$org/avatars"


        def $save(member: str, filename: str, data: bytes) -> str:
            """Keep an uploaded picture under the client's file name in the member's folder; returns its URL."""
            if not member.isalnum():
                raise ValueError("bad member id")
            images.check(data)
            folder = os.path.join(AVATAR_DIR, member)
            os.makedirs(folder, exist_ok=True)
            with open(os.path.join(folder, filename), "wb") as handle:
                handle.write(data)
            return f"/avatars/{member}/{quote(filename)}"


        def pictures(member: str) -> list[dict]:
            """The member's pictures, by name, with their size and a digest for cache busting."""
            folder = Path(AVATAR_DIR, member)
            if not member.isalnum() or not folder.is_dir():
                return []
            return [{"name": path.name, "bytes": path.stat().st_size,
                     "etag": hashlib.sha256(path.read_bytes()).hexdigest()[:16]}
                    for path in sorted(folder.iterdir()) if path.is_file()]


        def remove_all(member: str) -> int:
            """Delete the member's pictures (when the account is closed); how many there were."""
            folder = Path(AVATAR_DIR, member)
            if not member.isalnum() or not folder.is_dir():
                return 0
            count = sum(1 for path in folder.iterdir() if path.is_file())
            shutil.rmtree(folder)
            return count
        ''', org=org, pkg=pkg, save=save)
    fixed = swap(source,
        '''
            with open(os.path.join(folder, filename), "wb") as handle:
        ''',
        '''
            target = (Path(folder).resolve() / filename).resolve()
            if not target.is_relative_to(Path(folder).resolve()):
                raise ValueError("bad file name")
            with open(target, "wb") as handle:
        ''')
    path, images_path = f"{pkg}/{mod}.py", f"{pkg}/images.py"
    tests = fill(r'''
        import os
        import shutil

        import ${pkg}.${mod} as avatars

        PNG = b"\x89PNG\r\n\x1a\n"


        def _fresh():
            avatars.AVATAR_DIR = "/tmp/avatars"
            shutil.rmtree(avatars.AVATAR_DIR, ignore_errors=True)
            os.makedirs(avatars.AVATAR_DIR)


        def _save(member, filename, data):
            try:
                return avatars.$save(member, filename, data)
            except Exception as error:
                return type(error).__name__


        def probe_save(ctx):
            _fresh()
            url = _save("$member", "$picture", PNG + $body)
            return [url, avatars.pictures("$member"), avatars.pictures("$other")]


        def probe_replace(ctx):
            _fresh()
            _save("$member", "me.gif", b"GIF89a" + $body)
            _save("$member", "me.gif", PNG + $body)
            return [entry["bytes"] for entry in avatars.pictures("$member")]


        def probe_remove(ctx):
            _fresh()
            _save("$member", "a.png", PNG + $body)
            _save("$member", "b.gif", b"GIF87a" + $body)
            _save("$other", "c.png", PNG)
            return [avatars.remove_all("$member"), avatars.pictures("$member"), avatars.remove_all("$member"),
                    len(avatars.pictures("$other"))]


        def probe_refused(ctx):
            _fresh()
            return [_save("$member", "notes.txt", b"plain text"), _save("$member", "big.png", PNG * 70000),
                    _save("../$member", "me.png", PNG), avatars.pictures("$member")]


        def probe_relative(ctx):
            _fresh()
            folder = os.path.join(avatars.AVATAR_DIR, "$member")
            return _save("$member", os.path.relpath(ctx["marker"], folder), PNG + b"x")


        def probe_absolute(ctx):
            _fresh()
            return _save("$member", ctx["marker"], b"\xff\xd8\xff" + b"x")
        ''', pkg=pkg, mod=mod, save=save, member=member, other=other, picture=picture, body=repr(body))
    data = _PNG + body
    return Program(
        family="path_traversal", variant="avatar_upload", domain="profile picture upload", cwe="CWE-22",
        files={images_path: images, path: source}, fixed={images_path: images, path: fixed},
        description=f"`{save}(member, filename, data)` keeps a member's uploaded PNG, JPEG or GIF picture (at most "
                    "MAX_BYTES) in the member's folder under AVATAR_DIR, named as the upload form sent it, and "
                    "returns its URL; `pictures(member)` lists the member's pictures.",
        location=location({path: source}, path, 'with open(os.path.join(folder, filename), "wb")'),
        tests=tests,
        probes=[Probe(id="save", kind="functional",
                      expect=[f"/avatars/{member}/{quote(picture)}",
                              [{"name": picture, "bytes": len(data), "etag": hashlib.sha256(data).hexdigest()[:16]}],
                              []]),
                Probe(id="replace", kind="functional", expect=[len(data)]),
                Probe(id="remove", kind="functional", expect=[2, [], 0, 1]),
                Probe(id="refused", kind="functional", expect=["ValueError", "ValueError", "ValueError", []]),
                Probe(id="relative", kind="exploit", detect=MARKER),
                Probe(id="absolute", kind="exploit", detect=MARKER)],
        static_ids=[])


_BUILDERS = {"downloads": _downloads, "attachments": _attachments, "mail_templates": _mail_templates,
             "avatar_upload": _avatar_upload}


def build(rng: random.Random, variant: str) -> Program:
    return _BUILDERS[variant](rng)


FAMILY = Family(name="path_traversal", cwe="CWE-22", title="Path traversal",
                variants=("downloads", "attachments", "mail_templates"), ood_variants=("avatar_upload",), build=build)
