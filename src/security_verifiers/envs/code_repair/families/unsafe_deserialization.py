"""CWE-502, deserialization of untrusted data: a program unpickles what a client sent.

Variants:

- ``session_cookie``: a web shop keeps its sessions in a base64 pickle cookie;
- ``job_queue``: a notification worker unpickles the messages the public API queues;
- ``prefs_sync``: a settings-sync server unpickles the zlib-compressed preferences a device uploads (and keeps
  them in sqlite);
- ``workspace_snapshot`` (OOD): a notebook service restores uploaded snapshots with an ``Unpickler`` whose
  ``find_class`` allows every name of ``builtins`` (``open``, ``exec``, ``getattr``, ``__import__``).

The exploit probes send pickles whose ``__reduce__`` creates the run's marker file (``builtins.open``,
``os.system("touch ...")``, ``exec``, a ``getattr(__import__("os"), "system")`` chain); the test module pickles
them in the judge and sends the program bytes, and the judge sees the marker's creation. The snapshot variant's
functional probes build the variables in the program (its dates, decimals, Counter), since only data crosses by
value. The reference fix serialises with json, or (OOD) allows only the builtins classes snapshots need.
"""

from __future__ import annotations

import hashlib
import html
import json
import random

from security_verifiers.envs.code_repair.families import Family
from security_verifiers.envs.code_repair.families.kit import ORGS, PEOPLE, WORDS, fill, location, pick, swap
from security_verifiers.envs.code_repair.program import Detect, Probe, Program

MARKER = Detect(kind="marker")

#: Pickles that create ``path`` when they are loaded, for the test modules (``_open`` (io.open), ``_system``
#: (posix.system), ``_exec``, ``_eval`` and ``_chain``: builtins.getattr on builtins.__import__("os"), then called).
#: They are pickled by the test module, in the judge, and sent to the program as bytes. ``builtins.__import__`` is
#: named whole: the test module's own ``__import__`` is the judge's, which imports the program's modules as proxies.
_PAYLOADS = r'''
import builtins


class _Reduce:
    def __init__(self, function, *args):
        self.function, self.args = function, args

    def __reduce__(self):
        return self.function, self.args

    def __call__(self, *args):
        return None


def _open(path):
    return pickle.dumps(_Reduce(open, path, "w"))


def _system(path):
    return pickle.dumps(_Reduce(os.system, "touch " + path))


def _exec(path):
    return pickle.dumps(_Reduce(exec, "open(%r, 'w').close()" % path))


def _eval(path):
    return pickle.dumps(_Reduce(eval, "open(%r, 'w').close()" % path))


def _chain(path):
    system = _Reduce(getattr, _Reduce(builtins.__import__, "os"), "system")
    return pickle.dumps(_Reduce(system, "touch " + path))
'''


def _session_cookie(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg, mod = f"{org}_shop", rng.choice(("sessions", "session", "cookies"))
    add = rng.choice(("add_to_cart", "put_in_cart", "cart_add"))
    user = rng.choice(PEOPLE)
    skus = [f"{w[:3].upper()}-{rng.randint(100, 999)}" for w in pick(rng, WORDS, 3)]
    prices = {sku: rng.randint(100, 9000) for sku in skus}
    source = fill(r'''
        """Sessions of the $org web shop, kept in a cookie so that any web node can serve any request."""

        import base64
        import pickle
        import secrets

        COOKIE_NAME = "${org}_session"


        def new_session(user: str) -> dict:
            """The session of a user who has just signed in."""
            return {"user": user, "csrf": secrets.token_urlsafe(16), "cart": {}}


        def dump_session(session: dict) -> str:
            """The cookie value that carries ``session``."""
            return base64.urlsafe_b64encode(pickle.dumps(session)).decode("ascii")


        def load_session(cookie: str | None) -> dict:
            """The session a cookie carries; an empty one for a missing or damaged cookie."""
            if not cookie:
                return {}
            try:
                session = pickle.loads(base64.urlsafe_b64decode(cookie.encode("ascii")))
            except Exception:
                return {}
            return session if isinstance(session, dict) else {}


        def set_cookie(session: dict) -> str:
            """The Set-Cookie header for a response."""
            return f"{COOKIE_NAME}={dump_session(session)}; Path=/; HttpOnly; Secure; SameSite=Lax"
        ''', org=org)
    cart = fill(r'''
        """The shopping cart of the $org web shop, which lives in the session cookie."""

        from ${pkg}.${mod} import dump_session, load_session


        def $add(cookie: str | None, sku: str, quantity: int = 1) -> str:
            """Put ``quantity`` of ``sku`` in the cart of the signed-in session; returns the new cookie value."""
            if quantity < 1:
                raise ValueError("quantity must be positive")
            session = load_session(cookie)
            if "user" not in session:
                raise PermissionError("sign in first")
            cart = session.setdefault("cart", {})
            cart[sku] = cart.get(sku, 0) + quantity
            return dump_session(session)


        def cart_lines(cookie: str | None, prices: dict[str, int]) -> list[list]:
            """The cart of a session: SKU, quantity and line total (in cents), by SKU."""
            cart = load_session(cookie).get("cart", {})
            return [[sku, quantity, quantity * prices[sku]] for sku, quantity in sorted(cart.items())]
        ''', org=org, pkg=pkg, mod=mod, add=add)
    fixed = swap(source, "import pickle\n", "import json\n")
    fixed = swap(fixed, "base64.urlsafe_b64encode(pickle.dumps(session))",
                 "base64.urlsafe_b64encode(json.dumps(session).encode())")
    fixed = swap(fixed, "session = pickle.loads(base64.urlsafe_b64decode(cookie.encode(\"ascii\")))",
                 "session = json.loads(base64.urlsafe_b64decode(cookie.encode(\"ascii\")))")
    path, cart_path = f"{pkg}/{mod}.py", f"{pkg}/cart.py"
    tests = fill(r'''
        import base64
        import os
        import pickle

        import ${pkg}.cart as cart
        import ${pkg}.${mod} as sessions

        PRICES = $prices
        $payloads

        def _load(data):
            try:
                return sessions.load_session(base64.urlsafe_b64encode(data).decode())
            except Exception as error:
                return type(error).__name__


        def probe_round_trip(ctx):
            session = {"user": "$user", "cart": {"$sku0": 2}, "theme": "dark", "seen": ["$sku1", "$sku2"]}
            return sessions.load_session(sessions.dump_session(session))


        def probe_new(ctx):
            session = sessions.load_session(sessions.dump_session(sessions.new_session("$user")))
            return [sorted(session), session["user"], len(session["csrf"]), session["cart"]]


        def probe_cart(ctx):
            cookie = sessions.dump_session(sessions.new_session("$user"))
            cookie = cart.$add(cookie, "$sku1")
            cookie = cart.$add(cookie, "$sku0", 3)
            cookie = cart.$add(cookie, "$sku1", 2)
            return cart.cart_lines(cookie, PRICES)


        def probe_signed_out(ctx):
            try:
                cart.$add(None, "$sku0")
            except PermissionError:
                return "refused"
            return "added"


        def probe_damaged(ctx):
            return [sessions.load_session(None), sessions.load_session(""), sessions.load_session("%%%"),
                    sessions.load_session("bm90IGEgc2Vzc2lvbg=="), cart.cart_lines("%%%", PRICES)]


        def probe_header(ctx):
            header = sessions.set_cookie(sessions.new_session("$user"))
            return [header.startswith("${org}_session="), header.endswith("; Path=/; HttpOnly; Secure; SameSite=Lax")]


        def probe_open(ctx):
            return _load(_open(ctx["marker"]))


        def probe_system(ctx):
            return _load(_system(ctx["marker"]))


        def probe_exec_cart(ctx):
            cookie = base64.urlsafe_b64encode(_exec(ctx["marker"])).decode()
            try:
                return cart.cart_lines(cookie, PRICES)
            except Exception as error:
                return type(error).__name__
        ''', pkg=pkg, mod=mod, org=org, add=add, user=user, prices=repr(prices), sku0=skus[0], sku1=skus[1],
        sku2=skus[2], payloads=_PAYLOADS)
    lines = sorted([[skus[0], 3, 3 * prices[skus[0]]], [skus[1], 3, 3 * prices[skus[1]]]])
    return Program(
        family="unsafe_deserialization", variant="session_cookie", domain="web session cookies", cwe="CWE-502",
        files={path: source, cart_path: cart}, fixed={path: fixed, cart_path: cart},
        description="The shop keeps each session (a dict of JSON-like values) in the browser's cookie: "
                    f"`dump_session` writes the cookie value, `load_session` reads it back (an empty session for a "
                    f"missing or damaged cookie), and `{add}` and `cart_lines` work on the cart through it.",
        location=location({path: source}, path, "session = pickle.loads("),
        tests=tests,
        probes=[Probe(id="round_trip", kind="functional",
                      expect={"user": user, "cart": {skus[0]: 2}, "theme": "dark", "seen": [skus[1], skus[2]]}),
                Probe(id="new", kind="functional", expect=[["cart", "csrf", "user"], user, 22, {}]),
                Probe(id="cart", kind="functional", expect=lines),
                Probe(id="signed_out", kind="functional", expect="refused"),
                Probe(id="damaged", kind="functional", expect=[{}, {}, {}, {}, []]),
                Probe(id="header", kind="functional", expect=[True, True]),
                Probe(id="open", kind="exploit", detect=MARKER),
                Probe(id="system", kind="exploit", detect=MARKER),
                Probe(id="exec_cart", kind="exploit", detect=MARKER)],
        static_ids=["B301"])


def _job_queue(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg, mod = f"{org}_notify", rng.choice(("worker", "jobs", "queue_worker"))
    run = rng.choice(("run_job", "handle_message", "process"))
    person = rng.choice(PEOPLE)
    address = f"{person}@{org}.example"
    items = [f"{rng.choice(WORDS)} & {rng.choice(WORDS)}", f"<{rng.choice(WORDS)}>", rng.choice(WORDS)]
    handlers = fill(r'''
        """The tasks the $org notification worker knows: each renders one message."""

        import html
        import re
        import string

        HANDLERS = {}
        WELCOME = string.Template("To: $$to\n\n<p>Welcome, $$name!</p>")
        ADDRESS = re.compile(r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$$")


        def handler(name: str):
            """Register a function as the handler of the task ``name``."""
            def register(function):
                HANDLERS[name] = function
                return function
            return register


        @handler("welcome")
        def welcome(to: str, name: str) -> str:
            if not ADDRESS.match(to):
                raise ValueError(f"bad address: {to}")
            return WELCOME.substitute(to=to, name=html.escape(name))


        @handler("digest")
        def digest(to: str, items: list[str]) -> str:
            lines = "".join(f"<li>{html.escape(item)}</li>" for item in items)
            return f"To: {to}\n\n<ul>{lines}</ul>"
        ''', org=org)
    source = fill(r'''
        """Worker of the $org notification service: the public API queues jobs, this worker runs them."""

        import pickle

        from ${pkg}.handlers import HANDLERS


        def encode_job(task: str, **args) -> bytes:
            """The queue message of a job (the API enqueues these)."""
            return pickle.dumps({"task": task, "args": args})


        def decode_job(message: bytes) -> dict:
            try:
                job = pickle.loads(message)
            except Exception as error:
                raise ValueError("malformed job message") from error
            if not isinstance(job, dict) or not isinstance(job.get("task"), str) \
                    or not isinstance(job.get("args"), dict):
                raise ValueError("malformed job message")
            return job


        def $run(message: bytes) -> dict:
            """Run one queued job; returns its outcome for the job log."""
            try:
                job = decode_job(message)
            except ValueError as error:
                return {"ok": False, "error": str(error)}
            function = HANDLERS.get(job["task"])
            if function is None:
                return {"ok": False, "error": f"unknown task: {job['task']}"}
            try:
                return {"ok": True, "task": job["task"], "result": function(**job["args"])}
            except (TypeError, ValueError) as error:
                return {"ok": False, "task": job["task"], "error": str(error)}
        ''', org=org, pkg=pkg, run=run)
    fixed = swap(source, "import pickle\n", "import json\n")
    fixed = swap(fixed, 'pickle.dumps({"task": task, "args": args})',
                 'json.dumps({"task": task, "args": args}).encode()')
    fixed = swap(fixed, "job = pickle.loads(message)", "job = json.loads(message)")
    path, handlers_path = f"{pkg}/{mod}.py", f"{pkg}/handlers.py"
    tests = fill(r'''
        import os
        import pickle

        import ${pkg}.${mod} as worker

        ITEMS = $items
        $payloads

        def probe_welcome(ctx):
            return worker.$run(worker.encode_job("welcome", to="$address", name="<$person>"))


        def probe_digest(ctx):
            return worker.$run(worker.encode_job("digest", to="$address", items=ITEMS))


        def probe_bad_address(ctx):
            return worker.$run(worker.encode_job("welcome", to="nobody", name="x"))


        def probe_unknown(ctx):
            return [worker.$run(worker.encode_job("resize", width=10)), worker.$run(b"\x00not a job"),
                    worker.$run(b"")]


        def probe_decode(ctx):
            return worker.decode_job(worker.encode_job("digest", to="$address", items=ITEMS))


        def _run(message):
            try:
                return worker.$run(message)
            except Exception as error:
                return type(error).__name__


        def probe_open(ctx):
            return _run(_open(ctx["marker"]))


        def probe_system(ctx):
            return _run(_system(ctx["marker"]))


        def probe_chain(ctx):
            return _run(_chain(ctx["marker"]))
        ''', pkg=pkg, mod=mod, run=run, address=address, person=person, items=repr(items), payloads=_PAYLOADS)
    body = "".join(f"<li>{html.escape(item)}</li>" for item in items)
    return Program(
        family="unsafe_deserialization", variant="job_queue", domain="notification job queue", cwe="CWE-502",
        files={handlers_path: handlers, path: source}, fixed={handlers_path: handlers, path: fixed},
        description=f"`{run}(message)` decodes one message from the job queue (the public API enqueues messages "
                    "that `encode_job` writes) and runs its task's handler with its arguments; it returns the outcome "
                    "for the job log, never raising for a malformed message or a failing job.",
        location=location({path: source}, path, "job = pickle.loads(message)"),
        tests=tests,
        probes=[Probe(id="welcome", kind="functional",
                      expect={"ok": True, "task": "welcome",
                              "result": f"To: {address}\n\n<p>Welcome, {html.escape('<' + person + '>')}!</p>"}),
                Probe(id="digest", kind="functional",
                      expect={"ok": True, "task": "digest", "result": f"To: {address}\n\n<ul>{body}</ul>"}),
                Probe(id="bad_address", kind="functional",
                      expect={"ok": False, "task": "welcome", "error": "bad address: nobody"}),
                Probe(id="unknown", kind="functional",
                      expect=[{"ok": False, "error": "unknown task: resize"},
                              {"ok": False, "error": "malformed job message"},
                              {"ok": False, "error": "malformed job message"}]),
                Probe(id="decode", kind="functional",
                      expect={"task": "digest", "args": {"to": address, "items": items}}),
                Probe(id="open", kind="exploit", detect=MARKER),
                Probe(id="system", kind="exploit", detect=MARKER),
                Probe(id="chain", kind="exploit", detect=MARKER)],
        static_ids=["B301"])


def _etag(prefs: dict) -> str:
    return hashlib.sha256(json.dumps(prefs, sort_keys=True).encode()).hexdigest()[:16]


def _prefs_sync(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg, mod = f"{org}_sync", rng.choice(("prefs", "settings_sync", "preferences"))
    upload = rng.choice(("upload", "push_prefs", "store_prefs"))
    fetch = rng.choice(("fetch", "pull_prefs", "load_prefs"))
    defaults = {"theme": rng.choice(("light", "system")), "font_size": rng.choice((11, 12, 13, 14)),
                "language": rng.choice(("en", "de", "fr")), "shortcuts": {}}
    user, other = pick(rng, PEOPLE, 2)
    sent = {"theme": "dark", "font_size": defaults["font_size"] + 2, "shortcuts": {"save": "ctrl+s"},
            "window": [rng.randint(600, 1200), rng.randint(400, 900)]}
    source = fill(r'''
        """Settings sync of the $org desktop app: a device uploads its preferences, the other devices fetch them."""

        import hashlib
        import json
        import pickle
        import sqlite3
        import zlib

        DB_PATH = "/var/lib/$org/sync.db"
        DEFAULTS = $defaults
        _conn = None


        def connect() -> sqlite3.Connection:
            global _conn
            if _conn is None:
                _conn = sqlite3.connect(DB_PATH)
                _conn.execute("CREATE TABLE IF NOT EXISTS prefs (user TEXT PRIMARY KEY, blob BLOB NOT NULL, "
                              "etag TEXT NOT NULL)")
            return _conn


        def pack(prefs: dict) -> bytes:
            """The compact form in which devices send and receive preferences."""
            return zlib.compress(pickle.dumps(prefs))


        def unpack(blob: bytes) -> dict:
            prefs = pickle.loads(zlib.decompress(blob))
            if not isinstance(prefs, dict):
                raise ValueError("preferences are a mapping")
            return prefs


        def etag(prefs: dict) -> str:
            """A tag of the preferences' content, with which devices tell whether theirs are current."""
            return hashlib.sha256(json.dumps(prefs, sort_keys=True).encode()).hexdigest()[:16]


        def $upload(user: str, blob: bytes) -> str:
            """Store the preferences a device sent (unknown keys dropped, missing ones defaulted); returns the etag."""
            sent = unpack(blob)
            merged = {key: sent.get(key, default) for key, default in DEFAULTS.items()}
            with connect() as db:
                db.execute("INSERT INTO prefs (user, blob, etag) VALUES (?, ?, ?) ON CONFLICT (user) DO UPDATE "
                           "SET blob = excluded.blob, etag = excluded.etag", (user, pack(merged), etag(merged)))
            return etag(merged)


        def $fetch(user: str) -> dict:
            """The user's stored preferences (the defaults if none were uploaded)."""
            row = connect().execute("SELECT blob FROM prefs WHERE user = ?", (user,)).fetchone()
            return unpack(row[0]) if row else dict(DEFAULTS)


        def current(user: str, tag: str) -> bool:
            row = connect().execute("SELECT etag FROM prefs WHERE user = ?", (user,)).fetchone()
            return row is not None and row[0] == tag
        ''', org=org, defaults=repr(defaults), upload=upload, fetch=fetch)
    fixed = swap(source, "import pickle\n", "")
    fixed = swap(fixed, "zlib.compress(pickle.dumps(prefs))", "zlib.compress(json.dumps(prefs).encode())")
    fixed = swap(fixed, "prefs = pickle.loads(zlib.decompress(blob))", "prefs = json.loads(zlib.decompress(blob))")
    path = f"{pkg}/{mod}.py"
    tests = fill(r'''
        import os
        import pickle
        import zlib

        import ${pkg}.${mod} as sync

        SENT = $sent
        $payloads

        def _fresh():
            sync.DB_PATH = ":memory:"
            sync._conn = None


        def _upload(user, blob):
            try:
                return sync.$upload(user, blob)
            except Exception as error:
                return type(error).__name__


        def probe_upload(ctx):
            _fresh()
            tag = _upload("$user", sync.pack(SENT))
            return [tag, sync.$fetch("$user"), sync.current("$user", tag)]


        def probe_defaults(ctx):
            _fresh()
            _upload("$user", sync.pack(SENT))
            return [sync.$fetch("$other"), sync.current("$other", "x")]


        def probe_replace(ctx):
            _fresh()
            first = _upload("$user", sync.pack(SENT))
            second = _upload("$user", sync.pack({"language": "nl"}))
            return [second, sync.current("$user", first), sync.$fetch("$user")]


        def probe_refused(ctx):
            _fresh()
            return [_upload("$user", sync.pack(["theme", "dark"])), _upload("$user", b"garbage"),
                    sync.$fetch("$user") == sync.DEFAULTS]


        def probe_open(ctx):
            _fresh()
            return _upload("$user", zlib.compress(_open(ctx["marker"])))


        def probe_system(ctx):
            _fresh()
            return _upload("$user", zlib.compress(_system(ctx["marker"])))


        def probe_chain(ctx):
            _fresh()
            return _upload("$user", zlib.compress(_chain(ctx["marker"])))
        ''', pkg=pkg, mod=mod, sent=repr(sent), upload=upload, fetch=fetch, user=user, other=other,
        payloads=_PAYLOADS)
    merged = {key: sent.get(key, default) for key, default in defaults.items()}
    replaced = {key: {"language": "nl"}.get(key, default) for key, default in defaults.items()}
    return Program(
        family="unsafe_deserialization", variant="prefs_sync", domain="settings sync", cwe="CWE-502",
        files={path: source}, fixed={path: fixed},
        description=f"Devices send their preferences (a dict of JSON-like values) in the form `pack` writes; "
                    f"`{upload}(user, blob)` stores them, merged with DEFAULTS, and returns their etag, and `{fetch}` "
                    "returns what a user stored (the defaults if nothing).",
        location=location({path: source}, path, "prefs = pickle.loads("),
        tests=tests,
        probes=[Probe(id="upload", kind="functional", expect=[_etag(merged), merged, True]),
                Probe(id="defaults", kind="functional", expect=[defaults, False]),
                Probe(id="replace", kind="functional", expect=[_etag(replaced), False, replaced]),
                Probe(id="refused", kind="functional", expect=["ValueError", "error", True]),
                Probe(id="open", kind="exploit", detect=MARKER),
                Probe(id="system", kind="exploit", detect=MARKER),
                Probe(id="chain", kind="exploit", detect=MARKER)],
        static_ids=["B301"])


def _workspace_snapshot(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg, mod = f"{org}_notebooks", rng.choice(("snapshots", "workspace", "restore"))
    restore = rng.choice(("import_snapshot", "restore_snapshot", "load_snapshot"))
    unpickler = rng.choice(("SnapshotUnpickler", "WorkspaceUnpickler", "RestrictedUnpickler"))
    names = pick(rng, WORDS, 4)
    year, month, day = rng.randint(2020, 2026), rng.randint(1, 12), rng.randint(1, 28)
    cents = rng.randint(100, 99999)
    amount = f"{cents // 100}.{cents % 100:02d}"
    source = fill(r'''
        """Workspace snapshots of the $org notebook service: users export a workspace's variables, import them later."""

        import base64
        import io
        import pickle

        MAGIC = b"WSNAP1"
        #: What a snapshot may hold besides plain data, by module: the names allowed, or "*" for all of them.
        ALLOWED = {
            "builtins": "*",
            "collections": "*",
            "datetime": "*",
            "decimal": ("Decimal",),
        }


        class $unpickler(pickle.Unpickler):
            """An unpickler that only builds objects of the classes in ALLOWED."""

            def find_class(self, module: str, name: str):
                allowed = ALLOWED.get(module, ())
                if allowed == "*" or name in allowed:
                    return super().find_class(module, name)
                raise pickle.UnpicklingError(f"{module}.{name} is not allowed in a snapshot")


        def export_snapshot(variables: dict) -> str:
            """A workspace's variables as the text users download."""
            return base64.b64encode(MAGIC + pickle.dumps(variables)).decode("ascii")


        def $restore(text: str) -> dict:
            """The variables of a snapshot that a user uploads."""
            raw = base64.b64decode(text.encode("ascii"), validate=True)
            if not raw.startswith(MAGIC):
                raise ValueError("not a workspace snapshot")
            variables = $unpickler(io.BytesIO(raw[len(MAGIC):])).load()
            if not isinstance(variables, dict):
                raise ValueError("a snapshot holds a mapping of variables")
            return variables


        def summary(variables: dict) -> list[list[str]]:
            """Name and type of each variable, for the import dialog."""
            return [[name, type(value).__name__] for name, value in sorted(variables.items())]
        ''', org=org, restore=restore, unpickler=unpickler)
    fixed = swap(source, '"builtins": "*",', '"builtins": ("complex", "frozenset", "range", "set", "slice"),')
    path = f"{pkg}/{mod}.py"
    a, b, c, d = names
    tests = fill(r'''
        import base64
        import datetime
        import os
        import pathlib
        import pickle

        import ${pkg}.${mod} as snapshots

        $payloads

        def _variables():
            """The workspace's variables, built in the program (a proxy of its dict): the date, the decimal, the
            complex number and the range are the program's objects, and so is the Counter, which zip and map put
            in the dict there (a Counter sent from here would arrive as a plain dict)."""
            builtins = program_module("builtins")
            variables = ref(program_module("types").SimpleNamespace(), "__dict__")
            variables.update(builtins.zip(["$c"], builtins.map(program_module("collections").Counter, ["$c$d"])))
            variables["$a"] = program_module("datetime").date($year, $month, $day)
            variables["$b"] = program_module("decimal").Decimal("$amount")
            variables["$d"] = [builtins.complex(1, -2), builtins.range(3), {"x", "y"}, 7, "text"]
            return variables


        def _restore(data):
            try:
                return snapshots.$restore(base64.b64encode(snapshots.MAGIC + data).decode())
            except Exception as error:
                return type(error).__name__


        def probe_round_trip(ctx):
            variables = _variables()
            back = snapshots.$restore(snapshots.export_snapshot(variables))
            values = back["$d"]
            return [program_module("operator").eq(back, variables), back["$a"].isoformat(), str(back["$b"]),
                    sorted(back["$c"].items()), [str(values[0]), list(values[1]), sorted(values[2])] + values[3:]]


        def probe_summary(ctx):
            # the restored variables go from $restore to summary inside the program, where the Counter is a Counter
            builtins = program_module("builtins")
            text = snapshots.export_snapshot(_variables())
            return builtins.list(builtins.map(snapshots.summary, builtins.map(snapshots.$restore, [text])))[0]


        def probe_refused(ctx):
            other = pickle.dumps({"path": pathlib.PurePosixPath("/etc")})
            when = _restore(pickle.dumps({"when": datetime.datetime(2024, 1, 2, 3, 4)}))
            return [_restore(other), _restore(pickle.dumps([1, 2])), str(when["when"])]


        def probe_not_snapshot(ctx):
            try:
                snapshots.$restore(base64.b64encode(b"PK\x03\x04").decode())
            except ValueError:
                return "refused"
            return "loaded"


        def probe_eval(ctx):
            return _restore(_eval(ctx["marker"]))


        def probe_exec(ctx):
            return _restore(_exec(ctx["marker"]))


        def probe_chain(ctx):
            return _restore(_chain(ctx["marker"]))
        ''', pkg=pkg, mod=mod, restore=restore, a=a, b=b, c=c, d=d, year=year, month=month, day=day,
        amount=amount, payloads=_PAYLOADS)
    counter: dict[str, int] = {}
    for letter in c + d:
        counter[letter] = counter.get(letter, 0) + 1
    return Program(
        family="unsafe_deserialization", variant="workspace_snapshot", domain="notebook workspace snapshots",
        cwe="CWE-502", files={path: source}, fixed={path: fixed},
        description=f"`export_snapshot(variables)` writes a notebook workspace's variables (plain data, complex "
                    "numbers, ranges, sets, dates and times, decimals, collections' containers) as text, and "
                    f"`{restore}(text)` reads one that a user uploads, refusing any other kind of object.",
        location=location({path: source}, path, '"builtins": "*",'),
        tests=tests,
        probes=[Probe(id="round_trip", kind="functional",
                      expect=[True, f"{year}-{month:02d}-{day:02d}", amount,
                              sorted([k, v] for k, v in counter.items()),
                              ["(1-2j)", [0, 1, 2], ["x", "y"], 7, "text"]]),
                Probe(id="summary", kind="functional",
                      expect=sorted([[a, "date"], [b, "Decimal"], [c, "Counter"], [d, "list"]])),
                Probe(id="refused", kind="functional", expect=["UnpicklingError", "ValueError", "2024-01-02 03:04:00"]),
                Probe(id="not_snapshot", kind="functional", expect="refused"),
                Probe(id="eval", kind="exploit", detect=MARKER),
                Probe(id="exec", kind="exploit", detect=MARKER),
                Probe(id="chain", kind="exploit", detect=MARKER)],
        static_ids=[])


_BUILDERS = {"session_cookie": _session_cookie, "job_queue": _job_queue, "prefs_sync": _prefs_sync,
             "workspace_snapshot": _workspace_snapshot}


def build(rng: random.Random, variant: str) -> Program:
    return _BUILDERS[variant](rng)


FAMILY = Family(name="unsafe_deserialization", cwe="CWE-502", title="Deserialization of untrusted data",
                variants=("session_cookie", "job_queue", "prefs_sync"), ood_variants=("workspace_snapshot",),
                build=build)
