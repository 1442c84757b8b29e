"""CWE-916 (and CWE-327/328), passwords stored with a fast hash: md5, sha1 or sha256, unsalted or with a salt
that is the same for every user or is the user's name.

Variants (each a user store that keeps what a leak of its storage would hand an offline cracker):

- ``forum_accounts``: forum members in sqlite, ``md5(password)`` in hex, unsalted;
- ``admin_console``: console operators in a JSON file, ``sha1(STATIC_SALT + password)`` in hex;
- ``service_accounts``: metrics push-gateway accounts (HTTP basic auth) in sqlite, ``sha256(name:secret)``;
- ``wiki_users`` (OOD): a wiki's passwd-style text file of ``name:{SHA}base64(sha1(password))`` lines.

The exploit probes point the store at a fresh directory of the project (``ROOT/store-<probe>``), store a user whose
password is the run's canary, and judge what was stored from outside, never through the program's API: the test
reads the store's files itself from ``WORK`` (the sqlite database, the JSON document, the passwd text; regular files
only, no links) and the program's source from the same directory. A probe says True when

- storing the password cost the program less than ``CPU_FLOOR`` (8 ms) of CPU, read with ``program_cpu()`` before and
  after the one call: a fast hash (with the store's write) costs well under 1 ms, PBKDF2 at
  100,000 rounds about 19 ms and scrypt at n=2**14 about 26 ms (calibrated in the judged sandbox);
- the store has no record of the user, or the password itself or a fast digest of it is in it (md5, the SHA-1/2/3
  family or BLAKE2, raw, hex or base64, whole or truncated, plain, salted on either side with any string of the
  record, of the store or of the source, or keyed as an HMAC);
- the record is a weak key derivation the source names, recomputed with the parameters found in the source's calls
  or in the record: PBKDF2 under 100,000 rounds, scrypt under n=2**14, a fast hash iterated fewer than 100,000
  times (the recomputation has a budget; a record it cannot clear within it counts as weak).

Each check covers what the other cannot see: a fast hash under a salt or key the test cannot find is too cheap, and
a weak derivation made slow enough is recomputed. What neither sees is a fast hash keyed with a secret the program
keeps only in memory, made slow by wasted CPU.

Where no per-user salt is used, a second probe stores two users with the same password and says True when their
records share a digest; elsewhere the second probe sets the password through another entry point (a reset or a
rotation). The reference fix stores ``hashlib.scrypt`` (n=2**14, r=8, p=1) or ``pbkdf2_hmac('sha256', ...,
200_000)`` with a random 16-byte salt per user, compared with ``hmac.compare_digest``. Bandit's B324 flags md5 and
sha1 (not sha256).
"""

from __future__ import annotations

import base64
import random

from security_verifiers.envs.code_repair.families import Variants
from security_verifiers.envs.code_repair.families.kit import ORGS, PEOPLE, WORDS, Templates, location, pick, swap
from security_verifiers.envs.code_repair.program import Detect, Probe, Program

TEMPLATES = Templates(__name__)
VARIANTS = Variants()

SPOTTED = Detect(kind="equals", value=True)
#: Key derivation is slow on purpose: a run of the reference fix makes about 15 calls of 50-80 ms (1-2.5 s on a
#: loaded machine); a patch with stronger parameters (PBKDF2 at 600,000 iterations) may take several times that.
TIMEOUT_S = 20.0

#: Test-module prelude: how the judge reads a store the program wrote (from WORK, never through the program) and
#: decides whether a password is kept weakly there: ``_cpu_of(call)``, ``_store(name)``, ``_weak(password, user,
#: work, spent)`` and ``_shared_digest(work, user_a, user_b)``.
_RECORD_CHECK = TEMPLATES.render("shared/record_check.py")

_SCRYPT_HEX = '''
    def _hash_password(password: str) -> str:
        salt = os.urandom(16)
        digest = hashlib.scrypt(password.encode("utf-8"), salt=salt, n=2**14, r=8, p=1)
        return salt.hex() + "$" + digest.hex()


    def _password_matches(password: str, stored: str) -> bool:
        salt, _, digest = stored.partition("$")
        computed = hashlib.scrypt(password.encode("utf-8"), salt=bytes.fromhex(salt), n=2**14, r=8, p=1)
        return hmac.compare_digest(computed.hex(), digest)
'''


@VARIANTS.add()
def _forum_accounts(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg = f"{org}_forum"
    register, login, change = rng.choice((("register", "login", "change_password"),
                                           ("sign_up", "check_login", "update_password"),
                                           ("create_member", "authenticate", "set_new_password")))
    table = rng.choice(("members", "users", "accounts"))
    minimum = rng.choice((8, 10))
    a, b, c, attacker, twin = (f"{n}_{rng.randint(1, 99)}" for n in pick(rng, PEOPLE, 5))
    domain = f"{rng.choice(WORDS)}.example"
    pw = {name: f"{rng.choice(WORDS)}-{rng.choice(WORDS)}-{rng.randint(100, 999)}" for name in (a, b, c)}
    source = TEMPLATES.render("forum_accounts/source.py", org=org, pkg=pkg, upper=org.upper(), table=table,
                              minimum=minimum, register=register, login=login, change=change)
    passwords_src = TEMPLATES.render("forum_accounts/passwords_src.py", org=org)
    fixed = swap(passwords_src, '''
        def hash_password(password: str) -> str:
            return hashlib.md5(password.encode("utf-8")).hexdigest()


        def password_matches(password: str, stored: str) -> bool:
            return hmac.compare_digest(hash_password(password), stored)
        ''', _SCRYPT_HEX.replace("_hash_password", "hash_password").replace("_password_matches", "password_matches"))
    fixed = swap(fixed, "import hmac\n", "import hmac\nimport os\n")
    path, accounts_path = f"{pkg}/passwords.py", f"{pkg}/accounts.py"
    tests = TEMPLATES.render("forum_accounts/tests.py", prelude=_RECORD_CHECK, pkg=pkg, register=register, login=login,
                             change=change, a=a, b=b, c=c, attacker=attacker, twin=twin, domain=domain, pw_a=pw[a],
                             pw_b=pw[b], pw_c=pw[c])
    return Program(
        family="weak_password_hash", variant="forum_accounts", domain="forum accounts", cwe="CWE-916",
        files={path: passwords_src, accounts_path: source}, fixed={path: fixed, accounts_path: source},
        description=f"`{register}(name, email, password)` creates a forum member (ValueError for a bad or taken name "
                    f"or a password under MIN_PASSWORD characters); `{login}(name, password)` says whether the "
                    f"password is the member's; `{change}(name, old, new)` replaces it when `old` is right.",
        location=location({path: passwords_src}, path, "hashlib.md5(", extra_lines=4),
        tests=tests,
        probes=[Probe(id="login", kind="functional", expect=[True, False, False]),
                Probe(id="members", kind="functional",
                      expect=[True, True, [{"name": n, "posts": 0} for n in sorted((b, c))]]),
                Probe(id="change", kind="functional", expect=[False, True, True]),
                Probe(id="backup", kind="functional", expect=[True, [{"name": b, "posts": 0}]]),
                Probe(id="refusals", kind="functional", expect=["refused", "refused", "refused"]),
                Probe(id="stored_fast", kind="exploit", detect=SPOTTED),
                Probe(id="same_password", kind="exploit", detect=SPOTTED)],
        static_ids=["B324"], timeout_s=TIMEOUT_S)


@VARIANTS.add()
def _admin_console(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg = f"{org}_console"
    salt = f"{org}-console-{rng.randint(2015, 2023)}"
    add, auth, reset = rng.choice((("add_operator", "authenticate", "reset_password"),
                                   ("create_user", "sign_in", "set_password"),
                                   ("add_account", "verify_login", "force_password")))
    a, b, attacker, twin = pick(rng, PEOPLE, 4)
    pw = {name: f"{rng.choice(WORDS).capitalize()}{rng.randint(1000, 9999)}{rng.choice('!?#%')}" for name in (a, b)}
    extra = f"{rng.choice(WORDS)}{rng.randint(10, 99)}{rng.choice(WORDS)}"
    source = TEMPLATES.render("admin_console/source.py", org=org, pkg=pkg, upper=org.upper(), add=add, auth=auth,
                              reset=reset)
    credentials_src = TEMPLATES.render("admin_console/credentials_src.py", org=org, salt=salt)
    fixed = swap(credentials_src, f'\nPASSWORD_SALT = "{salt}"\n', "")
    fixed = swap(fixed, '''
        def _digest(password: str) -> str:
            return hashlib.sha1((PASSWORD_SALT + password).encode("utf-8")).hexdigest()


        def set_password(entry: dict, password: str) -> None:
            entry["password"] = _digest(password)


        def check_password(entry: dict, password: str) -> bool:
            return hmac.compare_digest(_digest(password), entry["password"])
        ''', '''
        def set_password(entry: dict, password: str) -> None:
            salt = os.urandom(16)
            entry["salt"] = salt.hex()
            entry["password"] = hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), salt, 200_000).hex()


        def check_password(entry: dict, password: str) -> bool:
            digest = hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), bytes.fromhex(entry["salt"]), 200_000)
            return hmac.compare_digest(digest.hex(), entry["password"])
        ''')
    fixed = swap(fixed, "import hmac\n", "import hmac\nimport os\n")
    path, operators_path = f"{pkg}/credentials.py", f"{pkg}/operators.py"
    tests = TEMPLATES.render("admin_console/tests.py", prelude=_RECORD_CHECK, pkg=pkg, add=add, auth=auth, reset=reset,
                             a=a, b=b, attacker=attacker, twin=twin, pw_a=pw[a], pw_b=pw[b], extra=extra)
    return Program(
        family="weak_password_hash", variant="admin_console", domain="admin console", cwe="CWE-916",
        files={path: credentials_src, operators_path: source}, fixed={path: fixed, operators_path: source},
        description=f"Operators of the admin console live in USERS_FILE. `{add}(name, password, role)` creates one "
                    f"(ValueError for an unknown role or existing name); `{auth}(name, password)` returns the role "
                    f"of an enabled operator whose password is right, else None; `{reset}` sets a new password.",
        location=location({path: credentials_src}, path, "hashlib.sha1(", extra_lines=8),
        tests=tests,
        probes=[Probe(id="sign_in", kind="functional", expect=["operator", None, None]),
                Probe(id="two_operators", kind="functional",
                      expect=["admin", "viewer", sorted([[b, "admin", True], [a, "viewer", True]])]),
                Probe(id="reset", kind="functional", expect=[True, False, None, "admin"]),
                Probe(id="disable", kind="functional", expect=[True, None, [[a, "operator", False]]]),
                Probe(id="refusals", kind="functional", expect=["refused", "refused", [[a, "viewer", True]]]),
                Probe(id="stored_fast", kind="exploit", detect=SPOTTED),
                Probe(id="reset_fast", kind="exploit", detect=SPOTTED),
                Probe(id="same_password", kind="exploit", detect=SPOTTED)],
        static_ids=["B324"], timeout_s=TIMEOUT_S)


@VARIANTS.add()
def _service_accounts(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg = f"{org}_pushgateway"
    create, check, rotate = rng.choice((("create_account", "account_for", "rotate_secret"),
                                        ("add_service_account", "authenticate", "change_secret"),
                                        ("register_pusher", "basic_auth_user", "replace_secret")))
    teams = pick(rng, ("payments", "search", "platform", "growth", "identity", "storage"), 2)
    a, b, c, attacker = (f"{w}-{suffix}" for w, suffix in zip(pick(rng, WORDS, 4), ("exporter", "batch", "cron",
                                                                                     "agent"), strict=True))
    passphrases = {name: f"{rng.choice(WORDS)}.{rng.choice(WORDS)}.{rng.randint(1000, 9999)}" for name in (a, b, c)}
    source = TEMPLATES.render("service_accounts/source.py", org=org, create=create, check=check, rotate=rotate)
    fixed = swap(source, '''
        def _hash_secret(name: str, secret: str) -> str:
            return hashlib.sha256(f"{name}:{secret}".encode("utf-8")).hexdigest()


        def _secret_matches(name: str, secret: str, stored: str) -> bool:
            return hmac.compare_digest(_hash_secret(name, secret), stored)
        ''', '''
        def _hash_secret(name: str, secret: str) -> str:
            salt = os.urandom(16)
            digest = hashlib.scrypt(secret.encode("utf-8"), salt=salt, n=2**14, r=8, p=1)
            return salt.hex() + "$" + digest.hex()


        def _secret_matches(name: str, secret: str, stored: str) -> bool:
            salt, _, digest = stored.partition("$")
            computed = hashlib.scrypt(secret.encode("utf-8"), salt=bytes.fromhex(salt), n=2**14, r=8, p=1)
            return hmac.compare_digest(computed.hex(), digest)
        ''')
    path = f"{pkg}/accounts.py"

    def basic(name: str, secret: str) -> str:
        return "Basic " + base64.b64encode(f"{name}:{secret}".encode()).decode()

    tests = TEMPLATES.render("service_accounts/tests.py", prelude=_RECORD_CHECK, pkg=pkg, create=create, check=check,
                             rotate=rotate, a=a, b=b, c=c, attacker=attacker, team1=teams[0], team2=teams[1],
                             sec_a=passphrases[a], sec_b=passphrases[b], sec_c=passphrases[c],
                             basic_a=basic(a, passphrases[a]), basic_b=basic(b, passphrases[b]),
                             basic_c=basic(c, passphrases[c]), basic_wrong=basic(a, passphrases[b]))
    return Program(
        family="weak_password_hash", variant="service_accounts", domain="API credentials store", cwe="CWE-916",
        files={path: source}, fixed={path: fixed},
        description=f"`{create}(name, team, secret)` creates a push-gateway account with a secret its team chose "
                    f"(ValueError for a taken name or a secret under 12 characters); `{check}(header)` returns the "
                    f"account an `Authorization: Basic` header authenticates, or None; `{rotate}` sets a new secret.",
        location=location({path: source}, path, "hashlib.sha256(", extra_lines=4),
        tests=tests,
        probes=[Probe(id="basic_auth", kind="functional", expect=[a, None, None, None, None]),
                Probe(id="teams", kind="functional", expect=[b, c, [b], [c]]),
                Probe(id="rotate", kind="functional", expect=[True, False, None, b]),
                Probe(id="refusals", kind="functional", expect=["refused", "refused"]),
                Probe(id="stored_fast", kind="exploit", detect=SPOTTED),
                Probe(id="rotated_fast", kind="exploit", detect=SPOTTED)],
        timeout_s=TIMEOUT_S)


@VARIANTS.add(ood=True)
def _wiki_users(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg = f"{org}_wiki"
    add, check, passwd, remove = rng.choice((("add_user", "check_password", "set_password", "remove_user"),
                                             ("create_login", "verify", "change_password", "delete_login"),
                                             ("enrol", "authenticate", "new_password", "unenrol")))
    a, b, c, attacker, twin = (f"{n}.{rng.choice(WORDS)}" for n in pick(rng, PEOPLE, 5))
    pw = {name: f"{rng.choice(WORDS)} {rng.choice(WORDS)} {rng.randint(10, 99)}" for name in (a, b, c)}
    source = TEMPLATES.render("wiki_users/source.py", org=org, add=add, check=check, passwd=passwd, remove=remove)
    fixed = swap(source, '''
        def _password_field(password: str) -> str:
            return "{SHA}" + base64.b64encode(hashlib.sha1(password.encode("utf-8")).digest()).decode("ascii")


        def _field_matches(password: str, field: str) -> bool:
            return hmac.compare_digest(_password_field(password), field)
        ''', '''
        def _password_field(password: str) -> str:
            salt = os.urandom(16)
            digest = hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), salt, 200_000)
            return "{PBKDF2-SHA256}" + base64.b64encode(salt).decode("ascii") + "$" + base64.b64encode(digest).decode()


        def _field_matches(password: str, field: str) -> bool:
            scheme, _, rest = field.partition("}")
            salt, _, digest = rest.partition("$")
            if scheme != "{PBKDF2-SHA256" or not salt:
                return False
            computed = hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), base64.b64decode(salt), 200_000)
            return hmac.compare_digest(base64.b64encode(computed).decode("ascii"), digest)
        ''')
    path = f"{pkg}/logins.py"
    tests = TEMPLATES.render("wiki_users/tests.py", prelude=_RECORD_CHECK, pkg=pkg, add=add, check=check, passwd=passwd,
                             remove=remove, a=a, b=b, c=c, attacker=attacker, twin=twin, pw_a=pw[a], pw_b=pw[b],
                             pw_c=pw[c])
    return Program(
        family="weak_password_hash", variant="wiki_users", domain="wiki logins", cwe="CWE-916",
        files={path: source}, fixed={path: fixed},
        description=f"The wiki's logins are `name:field` lines of PASSWD_FILE. `{add}(name, password)` adds one "
                    f"(ValueError for a malformed or existing name), `{check}(name, password)` says whether the "
                    f"password is right, `{passwd}` sets a new one and `{remove}` deletes a login.",
        location=location({path: source}, path, "hashlib.sha1(", extra_lines=4),
        tests=tests,
        probes=[Probe(id="check", kind="functional", expect=[True, False, False]),
                Probe(id="file", kind="functional", expect=[[c, b], sorted([b, c]), True, True]),
                Probe(id="passwd", kind="functional", expect=[True, False, True]),
                Probe(id="remove", kind="functional", expect=[True, False, [], False]),
                Probe(id="refusals", kind="functional", expect=["refused", "refused", "refused"]),
                Probe(id="stored_fast", kind="exploit", detect=SPOTTED),
                Probe(id="same_password", kind="exploit", detect=SPOTTED)],
        static_ids=["B324"], timeout_s=TIMEOUT_S)


FAMILY = VARIANTS.family(name="weak_password_hash", cwe="CWE-916", title="Passwords stored with a fast hash")
