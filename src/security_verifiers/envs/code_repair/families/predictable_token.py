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

from security_verifiers.envs.code_repair.families import Variants
from security_verifiers.envs.code_repair.families.kit import NOUNS, ORGS, PEOPLE, WORDS, Templates, location, pick, swap
from security_verifiers.envs.code_repair.program import Detect, Probe, Program

TEMPLATES = Templates(__name__)
VARIANTS = Variants()

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
_PRELUDE = TEMPLATES.render("shared/prelude.py")


@VARIANTS.add()
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
    source = TEMPLATES.render("reset_tokens/source.py", org=org, pkg=pkg, upper=org.upper(), ttl=ttl, request=request,
                              redeem=redeem, purge=purge)
    tokens_src = TEMPLATES.render("reset_tokens/tokens_src.py", org=org, length=length)
    fixed = swap(_secrets_for_random(tokens_src),
                 "random.choice(ALPHABET)", "secrets.choice(ALPHABET)")
    path, reset_path = f"{pkg}/tokens.py", f"{pkg}/password_reset.py"
    email = f"{user.capitalize()}@{domain}"
    tests = TEMPLATES.render("reset_tokens/tests.py", prelude=_PRELUDE, pkg=pkg, request=request, redeem=redeem,
                             purge=purge, email=email, other=other, domain=domain, inside=f"{1000 + ttl - 1}.0",
                             after=f"{1000 + ttl + 1}.0", purge_at=f"{2000 + ttl}.0", guess="A" * length)
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


@VARIANTS.add()
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
    source = TEMPLATES.render("session_ids/source.py", org=org, pkg=pkg, ttl=ttl, cookie=cookie, store=store,
                              open_fn=open_fn, get_fn=get_fn, close_fn=close_fn, arg=arg)
    ids_src = TEMPLATES.render("session_ids/ids_src.py", org=org, form=form, param="user: str" if arg else "")
    fixed = swap(_secrets_for_random(ids_src), form, "return secrets.token_hex(16)")
    path, sessions_path = f"{pkg}/ids.py", f"{pkg}/sessions.py"
    tests = TEMPLATES.render("session_ids/tests.py", prelude=_PRELUDE, pkg=pkg, store=store, open_fn=open_fn,
                             get_fn=get_fn, close_fn=close_fn, user=user, other=other, third=third, roles=repr(roles),
                             roles_rev=repr(roles[::-1]), inside=f"{1000 + ttl - 1}.0", ttl=ttl, cookie=cookie,
                             known=known)
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


@VARIANTS.add()
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
    source = TEMPLATES.render("otp_codes/source.py", org=org, digits=digits, ttl=ttl, attempts=attempts, form=form,
                              send=send, check=check)
    fixed = swap(_secrets_for_random(source), form, new)
    path = f"{pkg}/codes.py"
    tests = TEMPLATES.render("otp_codes/tests.py", prelude=_PRELUDE, pkg=pkg, send=send, check=check, typed=typed,
                             typed2=typed2, phone=phone, phone2=phone2, attempts=attempts, after=f"{1000 + ttl}.0",
                             msg_tail=f" is your {org} sign-in code. It expires in {ttl // 60} minutes.")
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


@VARIANTS.add(ood=True)
def _partner_api_keys(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg = f"{org}_partners"
    prefix = rng.choice((f"{org[:2]}_live_", f"{org[:3]}k_", "pk_", "key_"))
    body = rng.choice((24, 32, 40))
    seed_form = rng.choice(_SEED_FORMS)
    issue, auth, revoke = rng.choice((("issue_key", "client_for", "revoke"), ("create_key", "authenticate",
                                      "revoke_key"), ("new_api_key", "resolve_key", "disable_client")))
    client, other = (f"{w}-{rng.choice(NOUNS)}" for w in pick(rng, WORDS, 2))
    source = TEMPLATES.render("partner_api_keys/source.py", org=org, prefix=prefix, body=body, seed_form=seed_form,
                              issue=issue, auth=auth, revoke=revoke)
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
    tests = TEMPLATES.render("partner_api_keys/tests.py", prelude=_PRELUDE, pkg=pkg, issue=issue, auth=auth,
                             revoke=revoke, client=client, other=other, prefix=prefix, sample=sample)
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


FAMILY = VARIANTS.family(name="predictable_token", cwe="CWE-330", title="Predictable security tokens")
