"""CWE-330 (and CWE-338), predictable security tokens: secrets made with the ``random`` module's Mersenne Twister.

Variants (every token is a secret that grants something: a password reset, a session, a sign-in):

- ``reset_tokens``: password-reset tokens of letters and digits, ``random.choice``, kept in sqlite with an expiry;
- ``session_ids``: server-side session ids of 32 hex digits (``getrandbits``, ``randbytes`` or a hash of
  ``random.random()``);
- ``otp_codes``: numeric one-time sign-in codes texted to a phone (``randint`` or ``choices``);
- ``partner_api_keys`` (OOD): API keys drawn from a ``random.Random`` instance seeded with the client id and the
  clock, so that the global generator is not even involved.

The exploit probe (``fresh``, ``Detect(kind="entropy")``) makes three tokens in a row the way an attacker would
collect them (two for the same account, one for another) and returns them. The judge runs it in three fresh
programs whose /dev/urandom it feeds (``getrandom`` is off, so ``os.urandom``, ``secrets`` and ``SystemRandom``
read its bytes): the same bytes, the same bytes, and other bytes during the probe's own requests. Tokens drawn
from the bytes of their own call are the same in the first two runs and all different in the third; tokens of a
Mersenne Twister (seeded at import from the start-up bytes, or seeded at its first use: the test's setup makes a
token first, with the setup's bytes) come out the same in the third run too, and tokens of a clock differ between
the first two. Tokens that repeat or agree in most places within one run (a time-seeded generator asked twice in
a second, ``uuid1``-like ids) make the probe return a constant, which counts as exploited as well.
The reference fix draws from ``secrets``.
"""

from __future__ import annotations

import hashlib
import random
import re
import string

from security_verifiers.envs.code_repair.families import Family
from security_verifiers.envs.code_repair.families.kit import NOUNS, ORGS, PEOPLE, WORDS, fill, location, pick, swap
from security_verifiers.envs.code_repair.program import Detect, Probe, Program

FRESH = Detect(kind="entropy")


def _secrets_for_random(text: str) -> str:
    """``text`` importing ``secrets`` instead of ``random``, the block of plain imports kept sorted."""
    lines = text.split("\n")
    at = [n for n, line in enumerate(lines) if re.fullmatch(r"import [a-z0-9_.]+", line)]
    if at != list(range(at[0], at[-1] + 1)) or "import random" not in lines[at[0]:at[-1] + 1]:
        raise ValueError("no block of plain imports holding random")
    block = sorted(set(lines[at[0]:at[-1] + 1]) - {"import random"} | {"import secrets"})
    return "\n".join(lines[:at[0]] + block + lines[at[-1] + 1:])

#: Test-module prelude: ``_issued(tokens)``, what the fresh-entropy probe returns. The judge compares the tokens of
#: its three runs (``verdict._entropy_exploited``); a run whose tokens already show a pattern by themselves (two equal
#: tokens, or two that agree in most places, as ``uuid1`` ids do) returns a constant instead, which the host counts
#: as exploited (the same in every run, so never "different bytes, different tokens").
_PRELUDE = '''
PREDICTABLE = "predictable"


def _issued(tokens):
    """The tokens one program issued in a row, or [PREDICTABLE] when they repeat or agree in most places."""
    tokens = [str(token) for token in tokens]
    for i, first in enumerate(tokens):
        for second in tokens[i + 1:]:
            alike = sum(x == y for x, y in zip(first, second))
            if first == second or alike >= max(8, len(first) // 2):
                return [PREDICTABLE]
    return tokens
'''.lstrip("\n")


def _reset_tokens(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg = f"{org}_portal"
    length = rng.choice((24, 32, 40))
    ttl = rng.choice((900, 1800, 3600))
    request, redeem, purge = rng.choice((("request_reset", "redeem", "purge_expired"),
                                         ("start_reset", "consume_token", "drop_expired"),
                                         ("issue_reset_token", "use_reset_token", "clean_up")))
    user, other = pick(rng, PEOPLE, 2)
    domain = f"{rng.choice(WORDS)}.example"
    source = fill('''
        """Password reset for the $org customer portal: a one-time link is mailed to the account's address.

        The link carries a token; whoever presents it within TTL_SECONDS may set a new password for the account.
        """

        import os
        import sqlite3
        import time
        from contextlib import closing

        from $pkg import tokens

        DB_PATH = os.environ.get("${upper}_RESET_DB", "/var/lib/$org/resets.sqlite3")
        TTL_SECONDS = $ttl


        def _connect() -> sqlite3.Connection:
            db = sqlite3.connect(DB_PATH)
            db.execute("CREATE TABLE IF NOT EXISTS resets "
                       "(token TEXT PRIMARY KEY, email TEXT NOT NULL, expires REAL NOT NULL)")
            return db


        def $request(email: str, now: float | None = None) -> str:
            """Record a reset for ``email`` valid for TTL_SECONDS and return its token (for the mail)."""
            email = email.strip().lower()
            if email.count("@") != 1:
                raise ValueError(f"not an email address: {email!r}")
            now = time.time() if now is None else now
            token = tokens.new_token()
            with closing(_connect()) as db, db:
                db.execute("INSERT INTO resets VALUES (?, ?, ?)", (token, email, now + TTL_SECONDS))
            return token


        def $redeem(token: str, now: float | None = None) -> str | None:
            """The address ``token`` was issued for, if it is known and unexpired; a token works once."""
            now = time.time() if now is None else now
            with closing(_connect()) as db, db:
                row = db.execute("SELECT email, expires FROM resets WHERE token = ?", (token,)).fetchone()
                if row is None:
                    return None
                db.execute("DELETE FROM resets WHERE token = ?", (token,))
            return row[0] if now < row[1] else None


        def $purge(now: float | None = None) -> int:
            """Delete the expired resets; returns how many there were."""
            now = time.time() if now is None else now
            with closing(_connect()) as db, db:
                return db.execute("DELETE FROM resets WHERE expires <= ?", (now,)).rowcount


        def outstanding(email: str, now: float | None = None) -> int:
            """How many unexpired resets an address has."""
            now = time.time() if now is None else now
            with closing(_connect()) as db:
                query = "SELECT COUNT(*) FROM resets WHERE email = ? AND expires > ?"
                return db.execute(query, (email.strip().lower(), now)).fetchone()[0]
        ''', org=org, pkg=pkg, upper=org.upper(), ttl=ttl, request=request, redeem=redeem, purge=purge)
    tokens_src = fill('''
        """The tokens of the $org portal's password-reset links."""

        import random
        import string

        TOKEN_LENGTH = $length
        ALPHABET = string.ascii_letters + string.digits


        def new_token() -> str:
            """A fresh token: TOKEN_LENGTH letters and digits."""
            return "".join(random.choice(ALPHABET) for _ in range(TOKEN_LENGTH))
        ''', org=org, length=length)
    fixed = swap(_secrets_for_random(tokens_src),
                 "random.choice(ALPHABET)", "secrets.choice(ALPHABET)")
    path, reset_path = f"{pkg}/tokens.py", f"{pkg}/password_reset.py"
    email = f"{user.capitalize()}@{domain}"
    tests = fill('''
        $prelude
        import os
        import string

        import ${pkg}.password_reset as reset


        def _fresh(name):
            path = "/tmp/" + name + ".sqlite3"
            if os.path.exists(path):
                os.remove(path)
            reset.DB_PATH = path


        def probe_format(ctx):
            _fresh("format")
            tokens = [reset.$request("$email", now=1000.0) for _ in range(4)]
            alphabet = set(string.ascii_letters + string.digits)
            return [sorted({len(token) for token in tokens}), set("".join(tokens)) <= alphabet]


        def probe_redeem_once(ctx):
            _fresh("once")
            token = reset.$request("$email", now=1000.0)
            return [reset.$redeem(token, now=${inside}.0), reset.$redeem(token, now=${inside}.0)]


        def probe_expired(ctx):
            _fresh("expired")
            token = reset.$request("$other@$domain", now=1000.0)
            return [reset.outstanding("$other@$domain", now=1001.0), reset.$redeem(token, now=${after}.0)]


        def probe_unknown(ctx):
            _fresh("unknown")
            reset.$request("$email", now=1000.0)
            return reset.$redeem("$guess", now=1001.0)


        def probe_purge(ctx):
            _fresh("purge")
            for when in (1000.0, 2000.0, 5000.0):
                reset.$request("$other@$domain", now=when)
            return [reset.$purge(now=${purge_at}.0), reset.outstanding("$other@$domain", now=${purge_at}.0)]


        def probe_bad_address(ctx):
            _fresh("bad")
            try:
                reset.$request("$other.$domain")
            except ValueError:
                return "refused"
            return "accepted"


        # a token in the setup: a generator seeded at its first use is seeded here, from the setup's bytes
        try:
            _fresh("warm")
            reset.$request("$email")
        except Exception:
            pass


        def probe_fresh(ctx):
            _fresh("fresh")
            return _issued([reset.$request("$email"), reset.$request("$email"), reset.$request("$other@$domain")])
        ''', prelude=_PRELUDE, pkg=pkg, request=request, redeem=redeem, purge=purge, email=email, other=other,
        domain=domain, inside=1000 + ttl - 1, after=1000 + ttl + 1, purge_at=2000 + ttl,
        guess="A" * length)
    return Program(
        family="predictable_token", variant="reset_tokens", domain="password reset", cwe="CWE-330",
        files={path: tokens_src, reset_path: source}, fixed={path: fixed, reset_path: source},
        description=f"`{request}(email)` records a password reset for the address and returns its token, which is "
                    f"mailed as a link: TOKEN_LENGTH ({length}) ASCII letters and digits, valid for TTL_SECONDS. "
                    f"`{redeem}(token)` returns the address once for a known, unexpired token, else None.",
        location=location({path: tokens_src}, path, "random.choice("),
        tests=tests,
        probes=[Probe(id="format", kind="functional", expect=[[length], True]),
                Probe(id="redeem_once", kind="functional", expect=[email.lower(), None]),
                Probe(id="expired", kind="functional", expect=[1, None]),
                Probe(id="unknown", kind="functional", expect=None),
                Probe(id="purge", kind="functional", expect=[2, 1]),
                Probe(id="bad_address", kind="functional", expect="refused"),
                Probe(id="fresh", kind="exploit", detect=FRESH)],
        static_ids=["B311"])


_SESSION_FORMS = (
    ('return "%032x" % random.getrandbits(128)', "getrandbits(", ""),
    ("return random.randbytes(16).hex()", "randbytes(", ""),
    ('return hashlib.sha256(f"{user}:{random.random()}".encode()).hexdigest()[:32]', "random.random()", "user"),
)


def _session_ids(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg = f"{org}_admin"
    ttl = rng.choice((600, 1200, 3600, 7200))
    cookie = rng.choice(("sid", "session", f"{org}_session", "adm_sid"))
    form, needle, arg = rng.choice(_SESSION_FORMS)
    open_fn, get_fn, close_fn = rng.choice((("open_session", "session_for", "close_session"),
                                            ("log_in", "current_session", "log_out"),
                                            ("create_session", "lookup", "end_session")))
    store = rng.choice(("_SESSIONS", "_ACTIVE", "_store"))
    user, other, third = pick(rng, PEOPLE, 3)
    roles = sorted(pick(rng, ("viewer", "editor", "billing", "support", "owner", "auditor"), 2))
    known = "".join(rng.choice("0123456789abcdef") for _ in range(32))
    source = fill('''
        """Server-side sessions for the $org admin dashboard, kept in this process's memory.

        The session id is the only thing the browser holds (in the ``$cookie`` cookie); it must stay secret.
        """

        import time

        from $pkg import ids

        SESSION_TTL = $ttl
        COOKIE_NAME = "$cookie"
        $store: dict[str, dict] = {}


        def $open_fn(user: str, roles: list[str], now: float | None = None) -> str:
            """Start a session for ``user`` with ``roles``; returns its id."""
            now = time.time() if now is None else now
            session_id = ids.new_session_id($arg)
            $store[session_id] = {"user": user, "roles": sorted(roles), "expires": now + SESSION_TTL}
            return session_id


        def $get_fn(session_id: str, now: float | None = None) -> dict | None:
            """The user and roles of a live session (its lifetime starts over), or None."""
            now = time.time() if now is None else now
            session = $store.get(session_id)
            if session is None or session["expires"] <= now:
                $store.pop(session_id, None)
                return None
            session["expires"] = now + SESSION_TTL
            return {"user": session["user"], "roles": list(session["roles"])}


        def $close_fn(session_id: str) -> bool:
            return $store.pop(session_id, None) is not None


        def cookie_header(session_id: str) -> str:
            """The Set-Cookie header that hands a session to the browser."""
            return f"{COOKIE_NAME}={session_id}; Max-Age={SESSION_TTL}; Path=/; HttpOnly; Secure; SameSite=Strict"


        def signed_in(now: float | None = None) -> list[str]:
            """The users with a live session, each once, sorted."""
            now = time.time() if now is None else now
            return sorted({s["user"] for s in $store.values() if s["expires"] > now})
        ''', org=org, pkg=pkg, ttl=ttl, cookie=cookie, store=store, open_fn=open_fn, get_fn=get_fn,
        close_fn=close_fn, arg=arg)
    ids_src = fill('''
        """Ids of the $org admin dashboard's sessions, and the fingerprints the logs show instead of them."""

        import hashlib
        import random


        def new_session_id($param) -> str:
            """32 hex digits naming a new session."""
            $form


        def fingerprint(session_id: str) -> str:
            """A short digest of a session id for the logs, which never hold the id itself."""
            return hashlib.sha256(session_id.encode("ascii")).hexdigest()[:12]
        ''', org=org, form=form, param="user: str" if arg else "")
    fixed = swap(_secrets_for_random(ids_src), form, "return secrets.token_hex(16)")
    path, sessions_path = f"{pkg}/ids.py", f"{pkg}/sessions.py"
    tests = fill('''
        $prelude
        import ${pkg}.ids as ids
        import ${pkg}.sessions as sessions


        def probe_format(ctx):
            ref(sessions, "$store").clear()
            made = [sessions.$open_fn("$user", $roles, now=1000.0) for _ in range(4)]
            return [sorted({len(sid) for sid in made}), set("".join(made)) <= set("0123456789abcdef")]


        def probe_lookup(ctx):
            ref(sessions, "$store").clear()
            sid = sessions.$open_fn("$user", $roles_rev, now=1000.0)
            return [sessions.$get_fn(sid, now=1001.0), sessions.$get_fn("0" * 32, now=1001.0)]


        def probe_expiry(ctx):
            ref(sessions, "$store").clear()
            sid = sessions.$open_fn("$other", [], now=1000.0)
            kept = sessions.$get_fn(sid, now=${inside}.0) is not None
            return [kept, sessions.$get_fn(sid, now=${inside}.0 + $ttl), sessions.$get_fn(sid, now=${inside}.0)]


        def probe_logout(ctx):
            ref(sessions, "$store").clear()
            sid = sessions.$open_fn("$user", $roles, now=1000.0)
            return [sessions.$close_fn(sid), sessions.$close_fn(sid), sessions.$get_fn(sid, now=1001.0)]


        def probe_signed_in(ctx):
            ref(sessions, "$store").clear()
            for name in ("$third", "$user", "$third", "$other"):
                sessions.$open_fn(name, [], now=1000.0)
            return sessions.signed_in(now=1001.0)


        def probe_cookie(ctx):
            ref(sessions, "$store").clear()
            sid = sessions.$open_fn("$user", $roles, now=1000.0)
            header = sessions.cookie_header(sid)
            return [header.startswith("$cookie=" + sid + ";"), "HttpOnly" in header]


        def probe_fingerprint(ctx):
            return ids.fingerprint("$known")


        # a token in the setup: a generator seeded at its first use is seeded here, from the setup's bytes
        try:
            sessions.$open_fn("$user", $roles)
            ref(sessions, "$store").clear()
        except Exception:
            pass


        def probe_fresh(ctx):
            ref(sessions, "$store").clear()
            return _issued([sessions.$open_fn("$user", $roles), sessions.$open_fn("$user", $roles),
                            sessions.$open_fn("$other", [])])
        ''', prelude=_PRELUDE, pkg=pkg, store=store, open_fn=open_fn, get_fn=get_fn, close_fn=close_fn, user=user,
        other=other, third=third, roles=repr(roles), roles_rev=repr(roles[::-1]), inside=1000 + ttl - 1, ttl=ttl,
        cookie=cookie, known=known)
    return Program(
        family="predictable_token", variant="session_ids", domain="session management", cwe="CWE-330",
        files={path: ids_src, sessions_path: source}, fixed={path: fixed, sessions_path: source},
        description=f"`{open_fn}(user, roles)` starts a server-side session and returns its id, 32 lower-case hex "
                    f"digits that the browser keeps in the `{cookie}` cookie; `{get_fn}(id)` returns the session's "
                    f"user and roles while it is live (SESSION_TTL seconds since last use), `{close_fn}` ends it.",
        location=location({path: ids_src}, path, needle),
        tests=tests,
        probes=[Probe(id="format", kind="functional", expect=[[32], True]),
                Probe(id="lookup", kind="functional", expect=[{"user": user, "roles": roles}, None]),
                Probe(id="expiry", kind="functional", expect=[True, None, None]),
                Probe(id="logout", kind="functional", expect=[True, False, None]),
                Probe(id="signed_in", kind="functional", expect=sorted({user, other, third})),
                Probe(id="cookie", kind="functional", expect=[True, True]),
                Probe(id="fingerprint", kind="functional", expect=hashlib.sha256(known.encode()).hexdigest()[:12]),
                Probe(id="fresh", kind="exploit", detect=FRESH)],
        static_ids=["B311"])


def _phone(rng: random.Random) -> tuple[str, str]:
    """A phone number as a user types it, and its normal form."""
    area, mid, end = rng.randint(200, 989), rng.randint(200, 989), rng.randint(1000, 9999)
    return f"+1 ({area}) {mid}-{end}", f"+1{area}{mid}{end}"


def _otp_codes(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg = f"{org}_signin"
    digits = rng.choice((6, 6, 8))
    ttl = rng.choice((120, 300, 600))
    attempts = rng.choice((3, 5))
    if rng.random() < 0.5:
        form = "code = f\"{random.randint(0, 10 ** CODE_DIGITS - 1):0{CODE_DIGITS}d}\""
        new = "code = f\"{secrets.randbelow(10 ** CODE_DIGITS):0{CODE_DIGITS}d}\""
        needle = "random.randint("
    else:
        form = 'code = "".join(random.choices(string.digits, k=CODE_DIGITS))'
        new = 'code = "".join(secrets.choice(string.digits) for _ in range(CODE_DIGITS))'
        needle = "random.choices("
    send, check = rng.choice((("send_code", "check_code"), ("text_code", "confirm_code"),
                              ("start_sign_in", "finish_sign_in")))
    (typed, phone), (typed2, phone2) = _phone(rng), _phone(rng)
    source = fill('''
        """Sign-in by one-time code for the $org mobile app: a code is texted to the user's phone number.

        A code is valid for CODE_TTL seconds and for MAX_ATTEMPTS tries; sending a new code replaces the old one.
        """

        import hmac
        import random
        import string
        import time

        CODE_DIGITS = $digits
        CODE_TTL = $ttl
        MAX_ATTEMPTS = $attempts
        _pending: dict[str, dict] = {}


        def normalize(phone: str) -> str:
            """``phone`` as + and digits only; a ValueError if it cannot be a phone number."""
            number = "+" + "".join(ch for ch in phone if ch in string.digits)
            if not 9 <= len(number) <= 16:
                raise ValueError(f"not a phone number: {phone!r}")
            return number


        def $send(phone: str, now: float | None = None) -> str:
            """Make a code for ``phone`` and return it (the SMS gateway sends it)."""
            now = time.time() if now is None else now
            $form
            _pending[normalize(phone)] = {"code": code, "expires": now + CODE_TTL, "attempts": 0}
            return code


        def $check(phone: str, code: str, now: float | None = None) -> bool:
            """Whether ``code`` is the live code of ``phone``; a right code is used up."""
            now = time.time() if now is None else now
            number = normalize(phone)
            entry = _pending.get(number)
            if entry is None or entry["expires"] <= now or entry["attempts"] >= MAX_ATTEMPTS:
                _pending.pop(number, None)
                return False
            entry["attempts"] += 1
            if hmac.compare_digest(entry["code"], code.strip()):
                del _pending[number]
                return True
            return False


        def message(code: str) -> str:
            """The text of the SMS."""
            return f"{code} is your $org sign-in code. It expires in {CODE_TTL // 60} minutes."
        ''', org=org, digits=digits, ttl=ttl, attempts=attempts, form=form, send=send, check=check)
    fixed = swap(_secrets_for_random(source), form, new)
    path = f"{pkg}/codes.py"
    tests = fill('''
        $prelude
        import ${pkg}.codes as codes


        def probe_format(ctx):
            ref(codes, "_pending").clear()
            code = codes.$send("$typed", now=1000.0)
            return [len(code), code.isdigit(), codes.message(code) == code + "$msg_tail"]


        def probe_sign_in(ctx):
            ref(codes, "_pending").clear()
            code = codes.$send("$typed", now=1000.0)
            return [codes.$check("$phone", code, now=1001.0), codes.$check("$phone", code, now=1002.0)]


        def probe_wrong_code(ctx):
            ref(codes, "_pending").clear()
            code = codes.$send("$typed", now=1000.0)
            wrong = "x" * len(code)
            return [codes.$check("$typed", wrong, now=1001.0), codes.$check("$typed", code, now=1001.0)]


        def probe_attempts(ctx):
            ref(codes, "_pending").clear()
            code = codes.$send("$typed2", now=1000.0)
            tries = [codes.$check("$phone2", "-", now=1001.0) for _ in range($attempts)]
            return tries + [codes.$check("$phone2", code, now=1001.0)]


        def probe_expired(ctx):
            ref(codes, "_pending").clear()
            code = codes.$send("$typed", now=1000.0)
            return codes.$check("$typed", code, now=${after}.0)


        def probe_normalize(ctx):
            try:
                codes.normalize("12-34")
            except ValueError:
                return codes.normalize("$typed2")
            return "accepted"


        # a token in the setup: a generator seeded at its first use is seeded here, from the setup's bytes
        try:
            codes.$send("$typed")
            ref(codes, "_pending").clear()
        except Exception:
            pass


        def probe_fresh(ctx):
            ref(codes, "_pending").clear()
            return _issued([codes.$send("$typed"), codes.$send("$typed"), codes.$send("$typed2")])
        ''', prelude=_PRELUDE, pkg=pkg, send=send, check=check, typed=typed, typed2=typed2, phone=phone,
        phone2=phone2, attempts=attempts, after=1000 + ttl, msg_tail=f" is your {org} sign-in code. It expires in "
        f"{ttl // 60} minutes.")
    return Program(
        family="predictable_token", variant="otp_codes", domain="one-time sign-in codes", cwe="CWE-330",
        files={path: source}, fixed={path: fixed},
        description=f"`{send}(phone)` makes a sign-in code of CODE_DIGITS ({digits}) decimal digits for the phone "
                    f"number and returns it for the SMS; `{check}(phone, code)` accepts the live code once, within "
                    "CODE_TTL seconds and MAX_ATTEMPTS tries.",
        location=location({path: source}, path, needle),
        tests=tests,
        probes=[Probe(id="format", kind="functional", expect=[digits, True, True]),
                Probe(id="sign_in", kind="functional", expect=[True, False]),
                Probe(id="wrong_code", kind="functional", expect=[False, True]),
                Probe(id="attempts", kind="functional", expect=[False] * attempts + [False]),
                Probe(id="expired", kind="functional", expect=False),
                Probe(id="normalize", kind="functional", expect=phone2),
                Probe(id="fresh", kind="exploit", detect=FRESH)],
        static_ids=["B311"])


_SEED_FORMS = (
    'random.Random(f"{client_id}:{time.time_ns()}")',
    "random.Random(client_id + str(time.time()))",
    'random.Random(f"{client_id}-{int(time.time())}")',
)


def _partner_api_keys(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg = f"{org}_partners"
    prefix = rng.choice((f"{org[:2]}_live_", f"{org[:3]}k_", "pk_", "key_"))
    body = rng.choice((24, 32, 40))
    seed_form = rng.choice(_SEED_FORMS)
    issue, auth, revoke = rng.choice((("issue_key", "client_for", "revoke"), ("create_key", "authenticate",
                                      "revoke_key"), ("new_api_key", "resolve_key", "disable_client")))
    client, other = (f"{w}-{rng.choice(NOUNS)}" for w in pick(rng, WORDS, 2))
    source = fill('''
        """API keys for $org's partner integrations: one live key per client, shown to the partner once.

        Only a SHA-256 of each key is stored, so a leaked table does not leak usable keys.
        """

        import hashlib
        import random
        import sqlite3
        import string
        import time

        DB_PATH = "/var/lib/$org/partners.sqlite3"
        KEY_PREFIX = "$prefix"
        KEY_BODY = $body
        ALPHABET = string.ascii_letters + string.digits


        def _db() -> sqlite3.Connection:
            db = sqlite3.connect(DB_PATH)
            db.execute("CREATE TABLE IF NOT EXISTS api_keys (client TEXT PRIMARY KEY, digest TEXT UNIQUE, "
                       "created REAL NOT NULL)")
            return db


        def _digest(key: str) -> str:
            return hashlib.sha256(key.encode("utf-8")).hexdigest()


        def _generator(client_id: str) -> random.Random:
            return $seed_form


        def generate_key(client_id: str) -> str:
            """A new key: KEY_PREFIX, then KEY_BODY letters and digits."""
            rng = _generator(client_id)
            return KEY_PREFIX + "".join(rng.choice(ALPHABET) for _ in range(KEY_BODY))


        def $issue(client_id: str) -> str:
            """Give ``client_id`` a new key (replacing any old one) and return it."""
            key = generate_key(client_id)
            db = _db()
            with db:
                db.execute("INSERT OR REPLACE INTO api_keys VALUES (?, ?, ?)", (client_id, _digest(key), time.time()))
            db.close()
            return key


        def $auth(key: str) -> str | None:
            """The client a presented key belongs to, or None."""
            if not key.startswith(KEY_PREFIX):
                return None
            db = _db()
            row = db.execute("SELECT client FROM api_keys WHERE digest = ?", (_digest(key),)).fetchone()
            db.close()
            return row[0] if row else None


        def $revoke(client_id: str) -> bool:
            db = _db()
            with db:
                gone = db.execute("DELETE FROM api_keys WHERE client = ?", (client_id,)).rowcount
            db.close()
            return gone > 0
        ''', org=org, prefix=prefix, body=body, seed_form=seed_form, issue=issue, auth=auth, revoke=revoke)
    fixed = swap(_secrets_for_random(source), '''
        def _generator(client_id: str) -> random.Random:
            return $seed_form


        def generate_key(client_id: str) -> str:
            """A new key: KEY_PREFIX, then KEY_BODY letters and digits."""
            rng = _generator(client_id)
            return KEY_PREFIX + "".join(rng.choice(ALPHABET) for _ in range(KEY_BODY))
        '''.replace("$seed_form", seed_form), '''
        def generate_key(client_id: str) -> str:
            """A new key: KEY_PREFIX, then KEY_BODY letters and digits."""
            return KEY_PREFIX + "".join(secrets.choice(ALPHABET) for _ in range(KEY_BODY))
        ''')
    path = f"{pkg}/keys.py"
    sample = prefix + "".join(rng.choice(string.ascii_letters) for _ in range(body))
    tests = fill('''
        $prelude
        import os
        import string
        import time

        import ${pkg}.keys as keys


        def _fresh(name):
            path = "/tmp/" + name + ".sqlite3"
            if os.path.exists(path):
                os.remove(path)
            keys.DB_PATH = path


        def probe_format(ctx):
            _fresh("format")
            made = [keys.$issue(client) for client in ("$client", "$other", "$client-2", "$other-2")]
            bodies = [key[len("$prefix"):] for key in made]
            return [all(key.startswith("$prefix") for key in made), sorted({len(body) for body in bodies}),
                    set("".join(bodies)) <= set(string.ascii_letters + string.digits)]


        def probe_auth(ctx):
            _fresh("auth")
            key = keys.$issue("$client")
            keys.$issue("$other")
            return [keys.$auth(key), keys.$auth("$sample"), keys.$auth("nope")]


        def probe_reissue(ctx):
            _fresh("reissue")
            keys.$issue("$other")
            new = keys.$issue("$other")
            return [keys.$auth(new), keys.$revoke("$other"), keys.$auth(new)]


        def probe_revoke(ctx):
            _fresh("revoke")
            key = keys.$issue("$client")
            return [keys.$revoke("$client"), keys.$auth(key), keys.$revoke("$client")]


        def probe_stored_digest(ctx):
            import hashlib
            import sqlite3
            _fresh("digest")
            key = keys.$issue("$client")
            db = sqlite3.connect(keys.DB_PATH)
            rows = db.execute("SELECT client, digest FROM api_keys").fetchall()
            db.close()
            return [[rows[0][0], rows[0][1] == hashlib.sha256(key.encode()).hexdigest()], len(rows)]


        # a token in the setup: a generator seeded at its first use is seeded here, from the setup's bytes
        try:
            _fresh("warm")
            keys.$issue("$client")
        except Exception:
            pass


        def probe_fresh(ctx):
            _fresh("fresh")
            return _issued([keys.$issue("$client"), keys.$issue("$client"), keys.$issue("$other")])
        ''', prelude=_PRELUDE, pkg=pkg, issue=issue, auth=auth, revoke=revoke, client=client, other=other,
        prefix=prefix, sample=sample)
    return Program(
        family="predictable_token", variant="partner_api_keys", domain="API key issuing", cwe="CWE-330",
        files={path: source}, fixed={path: fixed},
        description=f"`{issue}(client_id)` gives a partner client a new API key (KEY_PREFIX then KEY_BODY ASCII "
                    f"letters and digits), replacing its old one, and stores only the key's SHA-256; `{auth}(key)` "
                    f"returns the client a key belongs to, or None; `{revoke}` removes a client's key.",
        location=location({path: source}, path, "return random.Random("),
        tests=tests,
        probes=[Probe(id="format", kind="functional", expect=[True, [body], True]),
                Probe(id="auth", kind="functional", expect=[client, None, None]),
                Probe(id="reissue", kind="functional", expect=[other, True, None]),
                Probe(id="revoke", kind="functional", expect=[True, None, False]),
                Probe(id="stored_digest", kind="functional", expect=[[client, True], 1]),
                Probe(id="fresh", kind="exploit", detect=FRESH)],
        static_ids=["B311"])


_BUILDERS = {"reset_tokens": _reset_tokens, "session_ids": _session_ids, "otp_codes": _otp_codes,
             "partner_api_keys": _partner_api_keys}


def build(rng: random.Random, variant: str) -> Program:
    return _BUILDERS[variant](rng)


FAMILY = Family(name="predictable_token", cwe="CWE-330", title="Predictable security tokens",
                variants=("reset_tokens", "session_ids", "otp_codes"), ood_variants=("partner_api_keys",),
                build=build)
