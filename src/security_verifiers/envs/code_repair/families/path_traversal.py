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

from security_verifiers.envs.code_repair.families import Variants
from security_verifiers.envs.code_repair.families.kit import NOUNS, ORGS, PEOPLE, WORDS, Templates, location, pick, swap
from security_verifiers.envs.code_repair.program import Detect, Probe, Program

TEMPLATES = Templates(__name__)
VARIANTS = Variants()

LEAK = Detect(kind="contains", text="{canary}")
MARKER = Detect(kind="marker")
_SECRETS = ("db_password.txt", "signing.key", "credentials.ini", "id_ed25519", "settings.env")


def _text(rng: random.Random, lines: int) -> str:
    return "".join(f"{rng.choice(WORDS).title()} {rng.choice(NOUNS)} {rng.randint(1, 999)}\n" for _ in range(lines))


@VARIANTS.add()
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
    config = TEMPLATES.render("downloads/config.py", org=org, upper=org.upper())
    source = TEMPLATES.render("downloads/source.py", org=org, pkg=pkg, read=read)
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
    tests = TEMPLATES.render("downloads/tests.py", pkg=pkg, mod=mod, read=read, first=first, nested=nested,
                             secret=secret)
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


@VARIANTS.add()
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
    source = TEMPLATES.render("attachments/source.py", org=org, serve=serve)
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
    tests = TEMPLATES.render("attachments/tests.py", pkg=pkg, mod=mod, serve=serve, plain=plain,
                             spaced_url=quote(f"{ticket}/{spaced}"), scan=scan, ticket=ticket, secret=secret,
                             spaced=spaced, spaced_text=repr(files[f"{ticket}/{spaced}"]))
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


@VARIANTS.add()
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
    source = TEMPLATES.render("mail_templates/source.py", org=org, render=render)
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
    tests = TEMPLATES.render("mail_templates/tests.py", pkg=pkg, mod=mod, render=render, person=person, noun=noun,
                             number=number, secret=secret, sibling=sibling)
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


@VARIANTS.add(ood=True)
def _avatar_upload(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg, mod = f"{org}_community", rng.choice(("avatars", "profile_pictures", "uploads"))
    save = rng.choice(("save_avatar", "store_picture", "upload_avatar"))
    member, other = pick(rng, PEOPLE, 2)
    member += str(rng.randint(1, 99))
    picture = f"{rng.choice(WORDS)} {rng.randint(1, 9)}.png"
    body = rng.choice(WORDS).encode() * rng.randint(2, 6)
    images = TEMPLATES.render("avatar_upload/images.py", org=org)
    source = TEMPLATES.render("avatar_upload/source.py", org=org, pkg=pkg, save=save)
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
    tests = TEMPLATES.render("avatar_upload/tests.py", pkg=pkg, mod=mod, save=save, member=member, other=other,
                             picture=picture, body=repr(body))
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


FAMILY = VARIANTS.family(name="path_traversal", cwe="CWE-22", title="Path traversal")
