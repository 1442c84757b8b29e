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

from security_verifiers.envs.code_repair.families import Variants
from security_verifiers.envs.code_repair.families.kit import ORGS, PEOPLE, WORDS, Templates, location, pick, swap
from security_verifiers.envs.code_repair.program import Detect, Probe, Program

TEMPLATES = Templates(__name__)
VARIANTS = Variants()

MARKER = Detect(kind="marker")

#: Pickles that create ``path`` when they are loaded, for the test modules (``_open`` (io.open), ``_system``
#: (posix.system), ``_exec``, ``_eval`` and ``_chain``: builtins.getattr on builtins.__import__("os"), then called).
#: They are pickled by the test module, in the judge, and sent to the program as bytes. ``builtins.__import__`` is
#: named whole: the test module's own ``__import__`` is the judge's, which imports the program's modules as proxies.
_PAYLOADS = TEMPLATES.render("shared/payloads.py")


@VARIANTS.add()
def _session_cookie(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg, mod = f"{org}_shop", rng.choice(("sessions", "session", "cookies"))
    add = rng.choice(("add_to_cart", "put_in_cart", "cart_add"))
    user = rng.choice(PEOPLE)
    skus = [f"{w[:3].upper()}-{rng.randint(100, 999)}" for w in pick(rng, WORDS, 3)]
    prices = {sku: rng.randint(100, 9000) for sku in skus}
    source = TEMPLATES.render("session_cookie/source.py", org=org)
    cart = TEMPLATES.render("session_cookie/cart.py", org=org, pkg=pkg, mod=mod, add=add)
    fixed = swap(source, "import pickle\n", "import json\n")
    fixed = swap(fixed, "base64.urlsafe_b64encode(pickle.dumps(session))",
                 "base64.urlsafe_b64encode(json.dumps(session).encode())")
    fixed = swap(fixed, "session = pickle.loads(base64.urlsafe_b64decode(cookie.encode(\"ascii\")))",
                 "session = json.loads(base64.urlsafe_b64decode(cookie.encode(\"ascii\")))")
    path, cart_path = f"{pkg}/{mod}.py", f"{pkg}/cart.py"
    tests = TEMPLATES.render("session_cookie/tests.py", pkg=pkg, mod=mod, org=org, add=add, user=user,
                             prices=repr(prices), sku0=skus[0], sku1=skus[1], sku2=skus[2], payloads=_PAYLOADS)
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


@VARIANTS.add()
def _job_queue(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg, mod = f"{org}_notify", rng.choice(("worker", "jobs", "queue_worker"))
    run = rng.choice(("run_job", "handle_message", "process"))
    person = rng.choice(PEOPLE)
    address = f"{person}@{org}.example"
    items = [f"{rng.choice(WORDS)} & {rng.choice(WORDS)}", f"<{rng.choice(WORDS)}>", rng.choice(WORDS)]
    handlers = TEMPLATES.render("job_queue/handlers.py", org=org)
    source = TEMPLATES.render("job_queue/source.py", org=org, pkg=pkg, run=run)
    fixed = swap(source, "import pickle\n", "import json\n")
    fixed = swap(fixed, 'pickle.dumps({"task": task, "args": args})',
                 'json.dumps({"task": task, "args": args}).encode()')
    fixed = swap(fixed, "job = pickle.loads(message)", "job = json.loads(message)")
    path, handlers_path = f"{pkg}/{mod}.py", f"{pkg}/handlers.py"
    tests = TEMPLATES.render("job_queue/tests.py", pkg=pkg, mod=mod, run=run, address=address, person=person,
                             items=repr(items), payloads=_PAYLOADS)
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


@VARIANTS.add()
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
    source = TEMPLATES.render("prefs_sync/source.py", org=org, defaults=repr(defaults), upload=upload, fetch=fetch)
    fixed = swap(source, "import pickle\n", "")
    fixed = swap(fixed, "zlib.compress(pickle.dumps(prefs))", "zlib.compress(json.dumps(prefs).encode())")
    fixed = swap(fixed, "prefs = pickle.loads(zlib.decompress(blob))", "prefs = json.loads(zlib.decompress(blob))")
    path = f"{pkg}/{mod}.py"
    tests = TEMPLATES.render("prefs_sync/tests.py", pkg=pkg, mod=mod, sent=repr(sent), upload=upload, fetch=fetch,
                             user=user, other=other, payloads=_PAYLOADS)
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


@VARIANTS.add(ood=True)
def _workspace_snapshot(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg, mod = f"{org}_notebooks", rng.choice(("snapshots", "workspace", "restore"))
    restore = rng.choice(("import_snapshot", "restore_snapshot", "load_snapshot"))
    unpickler = rng.choice(("SnapshotUnpickler", "WorkspaceUnpickler", "RestrictedUnpickler"))
    names = pick(rng, WORDS, 4)
    year, month, day = rng.randint(2020, 2026), rng.randint(1, 12), rng.randint(1, 28)
    cents = rng.randint(100, 99999)
    amount = f"{cents // 100}.{cents % 100:02d}"
    source = TEMPLATES.render("workspace_snapshot/source.py", org=org, restore=restore, unpickler=unpickler)
    fixed = swap(source, '"builtins": "*",', '"builtins": ("complex", "frozenset", "range", "set", "slice"),')
    path = f"{pkg}/{mod}.py"
    a, b, c, d = names
    tests = TEMPLATES.render("workspace_snapshot/tests.py", pkg=pkg, mod=mod, restore=restore, a=a, b=b, c=c, d=d,
                             year=year, month=month, day=day, amount=amount, payloads=_PAYLOADS)
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


FAMILY = VARIANTS.family(name="unsafe_deserialization", cwe="CWE-502", title="Deserialization of untrusted data")
