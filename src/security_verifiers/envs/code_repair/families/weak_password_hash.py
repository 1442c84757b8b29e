"""CWE-916 (and CWE-327/328), passwords stored with a fast hash: md5, sha1 or sha256, unsalted or with a salt
that is the same for every user or is the user's name.

Variants (each a user store that keeps what a leak of its storage would hand an offline cracker):

- ``forum_accounts``: forum members in sqlite, ``md5(password)`` in hex, unsalted;
- ``admin_console``: console operators in a JSON file, ``sha1(STATIC_SALT + password)`` in hex;
- ``service_accounts``: metrics push-gateway accounts (HTTP basic auth) in sqlite, ``sha256(name:secret)``;
- ``wiki_users`` (OOD): a wiki's passwd-style text file of ``name:{SHA}base64(sha1(password))`` lines.

The exploit probes register a user whose password is the run's canary and look at what the store persisted (the
database row, the file entry): a probe says True when the password itself or a fast digest of it is there (md5,
the SHA-1/2/3 family or BLAKE2, hex or base64, plain, salted on either side with any string of the record or of
the module, or keyed as an HMAC), or when a hashing spy installed before the program was imported saw the
password (or a digest made of it) go into PBKDF2 under 100,000 iterations or scrypt under n=2**14, or into fast
hashes only, with no strong key derivation taking what they made (a pre-hash before scrypt is fine, iterated
SHA-256 is not). Where no per-user salt is used, a second probe registers two users with the same password and
says True when their records share a digest; elsewhere the second probe sets the password through another
entry point (a reset or a rotation). The reference fix stores ``hashlib.scrypt`` (n=2**14, r=8, p=1) or
``pbkdf2_hmac('sha256', ..., 200_000)`` with a random 16-byte salt per user, compared with
``hmac.compare_digest``. Bandit's B324 flags md5 and sha1 (not sha256).
"""

from __future__ import annotations

import base64
import random

from security_verifiers.envs.code_repair.families import Family
from security_verifiers.envs.code_repair.families.kit import ORGS, PEOPLE, WORDS, fill, location, pick, swap
from security_verifiers.envs.code_repair.program import Detect, Probe, Program

SPOTTED = Detect(kind="equals", value=True)
#: Key derivation is slow on purpose: a run of the reference fix makes about 15 calls of 50-80 ms (1-2.5 s on a
#: loaded machine); a patch with stronger parameters (PBKDF2 at 600,000 iterations) may take several times that.
TIMEOUT_S = 20.0

#: Test-module prelude, before the program is imported: a spy on hashlib's fast hashes and weak KDF settings,
#: and the detectors ``_weak(password, record, module)`` and ``_shared_digest(record_a, record_b)``.
_HASH_SPY = r'''
import base64
import binascii
import hashlib
import hmac
import re

_FAST = ("md5", "sha1", "sha224", "sha256", "sha384", "sha512", "sha3_224", "sha3_256", "sha3_384", "sha3_512",
         "blake2b", "blake2s")
_REAL = {name: getattr(hashlib, name) for name in _FAST + ("new", "pbkdf2_hmac", "scrypt")}
#: What the spy follows: the watched password and every digest a fast hash made from it (bytes, hex), and
#: whether such data went into a fast hash, a weak key derivation, or a strong one.
_TRACE = {"password": None, "roots": set(), "fast": False, "weak_kdf": False, "strong_kdf": False}


def _watch(password):
    secret = password.encode("utf-8")
    _TRACE.update(password=secret, roots={secret}, fast=False, weak_kdf=False, strong_kdf=False)


def _derived(data):
    """Whether ``data`` holds the watched password or a digest made from it."""
    if _TRACE["password"] is None:
        return False
    try:
        data = bytes(data)
    except TypeError:
        return False
    roots = _TRACE["roots"]
    return data in roots or _TRACE["password"] in data or any(root in data for root in list(roots)[:64])


class _Hash:
    """A hash object that notes whether it is fed the watched password (or a digest of it)."""

    def __init__(self, real, derived):
        self._real, self._derived = real, derived
        if derived:
            _TRACE["fast"] = True

    def update(self, data):
        if _derived(data):
            self._derived = _TRACE["fast"] = True
        self._real.update(data)

    def digest(self, *args):
        out = self._real.digest(*args)
        if self._derived:
            _TRACE["roots"].update({out, out.hex().encode()})
        return out

    def hexdigest(self, *args):
        out = self._real.hexdigest(*args)
        if self._derived:
            _TRACE["roots"].update({out.encode(), bytes.fromhex(out)})
        return out

    def copy(self):
        return _Hash(self._real.copy(), self._derived)

    def __getattr__(self, name):
        return getattr(self._real, name)


def _fed(args, kwargs):
    return any(_derived(data) for data in args[:1] + tuple(kwargs[k] for k in ("data", "string") if k in kwargs))


def _fast(name):
    real = _REAL[name]

    def make(*args, **kwargs):
        return _Hash(real(*args, **kwargs), _fed(args, kwargs))

    return make


def _new(name, *args, **kwargs):
    return _Hash(_REAL["new"](name, *args, **kwargs), _fed(args, kwargs))


def _kdf(password, strong):
    if _derived(password):
        _TRACE["strong_kdf" if strong else "weak_kdf"] = True


def _pbkdf2_hmac(hash_name, password, salt, iterations, dklen=None):
    _kdf(password, isinstance(iterations, int) and iterations >= 100_000)
    return _REAL["pbkdf2_hmac"](hash_name, password, salt, iterations, dklen)


def _scrypt(password, *, salt=None, n=None, r=None, p=None, maxmem=0, dklen=64):
    _kdf(password, isinstance(n, int) and n >= 2 ** 14)
    return _REAL["scrypt"](password, salt=salt, n=n, r=r, p=p, maxmem=maxmem, dklen=dklen)


for _name in _FAST:
    setattr(hashlib, _name, _fast(_name))
hashlib.new, hashlib.pbkdf2_hmac, hashlib.scrypt = _new, _pbkdf2_hmac, _scrypt


def _pieces(values):
    """Every str and bytes in ``values`` (nested in lists, tuples and dicts), the parts of the strings between
    separators, and what the parts decode to as hex or base64."""
    out, stack = set(), list(values)
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack += list(value.keys()) + list(value.values())
        elif isinstance(value, (list, tuple, set)):
            stack += list(value)
        elif isinstance(value, (bytes, bytearray, memoryview)):
            out.add(bytes(value))
            try:
                stack.append(bytes(value).decode("ascii"))
            except UnicodeDecodeError:
                pass
        elif isinstance(value, str):
            for part in {value, *re.split(r"[$:;,|{}()\s]+", value)}:
                if not part:
                    continue
                out.add(part.encode("utf-8"))
                try:
                    out.add(bytes.fromhex(part))
                except ValueError:
                    pass
                for decode in (base64.b64decode, base64.urlsafe_b64decode):
                    try:
                        out.add(decode(part + "=" * (-len(part) % 4)))
                    except (binascii.Error, ValueError):
                        pass
    return out


def _fast_digest_stored(password, record, module):
    secret = password.encode("utf-8")
    stored = _pieces([record])
    if any(secret in piece for piece in stored):
        return True
    names = [v for k, v in vars(module).items() if not k.startswith("__") and isinstance(v, (str, bytes))]
    salts = {b""} | {piece for piece in stored | _pieces(names) if len(piece) <= 64}
    for salt in salts:
        messages = {secret}
        if salt:
            for glue in (b"", b":", b"$"):
                messages |= {salt + glue + secret, secret + glue + salt}
        for name in _FAST:
            if any(_REAL[name](message).digest() in stored for message in messages):
                return True
        if salt and any(hmac.new(key, message, name).digest() in stored for key, message
                        in ((salt, secret), (secret, salt)) for name in ("md5", "sha1", "sha256", "sha512")):
            return True
    return False


def _weak(password, record, module):
    """Whether the watched ``password`` went through a weak key derivation, or through fast hashes only (no strong
    key derivation took what they made of it), or ``record`` (what the store keeps) holds it or a fast digest."""
    if _TRACE["weak_kdf"] or (_TRACE["fast"] and not _TRACE["strong_kdf"]):
        return True
    return _fast_digest_stored(password, record, module)


def _stored(read):
    """What ``read()`` finds of a user in the store, or nothing when the store cannot be read that way."""
    try:
        return read()
    except Exception:
        return []


def _sqlite_rows(path, name):
    """The rows of every table of the database at ``path`` that hold ``name``."""
    import sqlite3
    db = sqlite3.connect(path)
    try:
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return [list(row) for table in tables
                for row in db.execute('SELECT * FROM "%s"' % table.replace('"', '""')) if name in row]
    finally:
        db.close()


def _named(value, name):
    """What a JSON document keeps under the key ``name``, at any depth, or the object that holds ``name``."""
    if isinstance(value, dict):
        if name in value:
            return value[name]
        if name in value.values():
            return value
        value = list(value.values())
    if isinstance(value, list):
        for item in value:
            found = _named(item, name)
            if found is not None:
                return found
    return None


def _shared_digest(record_a, record_b):
    """Whether two users' records hold the same digest (16 bytes or more)."""
    def digests(record):
        return {piece for piece in _pieces([record]) if len(piece) >= 16}
    return bool(digests(record_a) & digests(record_b))
'''.lstrip("\n")

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
    source = fill('''
        """Member accounts of the $org community forum, kept in sqlite."""

        import os
        import re
        import shutil
        import sqlite3
        from contextlib import closing

        from $pkg import passwords

        DB_PATH = os.environ.get("${upper}_FORUM_DB", "/var/lib/$org/forum.sqlite3")
        NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{2,23}")
        MIN_PASSWORD = $minimum


        def _db() -> sqlite3.Connection:
            db = sqlite3.connect(DB_PATH)
            db.execute("CREATE TABLE IF NOT EXISTS $table (name TEXT PRIMARY KEY, email TEXT NOT NULL, "
                       "password TEXT NOT NULL, posts INTEGER NOT NULL DEFAULT 0)")
            return db


        def $register(name: str, email: str, password: str) -> None:
            """Create a member; ValueError for a malformed or taken name or a short password."""
            if not NAME.fullmatch(name):
                raise ValueError(f"bad member name: {name!r}")
            if len(password) < MIN_PASSWORD:
                raise ValueError(f"passwords have at least {MIN_PASSWORD} characters")
            with closing(_db()) as db, db:
                if db.execute("SELECT 1 FROM $table WHERE name = ?", (name,)).fetchone():
                    raise ValueError(f"name taken: {name}")
                db.execute("INSERT INTO $table (name, email, password) VALUES (?, ?, ?)",
                           (name, email.strip().lower(), passwords.hash_password(password)))


        def $login(name: str, password: str) -> bool:
            """Whether ``password`` is the member's password."""
            with closing(_db()) as db:
                row = db.execute("SELECT password FROM $table WHERE name = ?", (name,)).fetchone()
            return row is not None and passwords.password_matches(password, row[0])


        def $change(name: str, old: str, new: str) -> bool:
            """Replace the member's password when ``old`` is the current one."""
            if len(new) < MIN_PASSWORD:
                raise ValueError(f"passwords have at least {MIN_PASSWORD} characters")
            if not $login(name, old):
                return False
            with closing(_db()) as db, db:
                db.execute("UPDATE $table SET password = ? WHERE name = ?", (passwords.hash_password(new), name))
            return True


        def roster() -> list[dict]:
            """The members with their post counts, by name."""
            with closing(_db()) as db:
                rows = db.execute("SELECT name, posts FROM $table ORDER BY name").fetchall()
            return [{"name": name, "posts": posts} for name, posts in rows]


        def backup(destination: str) -> None:
            """Copy the member database to ``destination`` (the nightly job runs this while the forum is read-only)."""
            shutil.copyfile(DB_PATH, destination)
        ''', org=org, pkg=pkg, upper=org.upper(), table=table, minimum=minimum, register=register, login=login,
        change=change)
    passwords_src = fill('''
        """How the $org forum keeps its members' passwords."""

        import hashlib
        import hmac


        def hash_password(password: str) -> str:
            return hashlib.md5(password.encode("utf-8")).hexdigest()


        def password_matches(password: str, stored: str) -> bool:
            return hmac.compare_digest(hash_password(password), stored)
        ''', org=org)
    fixed = swap(passwords_src, '''
        def hash_password(password: str) -> str:
            return hashlib.md5(password.encode("utf-8")).hexdigest()


        def password_matches(password: str, stored: str) -> bool:
            return hmac.compare_digest(hash_password(password), stored)
        ''', _SCRYPT_HEX.replace("_hash_password", "hash_password").replace("_password_matches", "password_matches"))
    fixed = swap(fixed, "import hmac\n", "import hmac\nimport os\n")
    path, accounts_path = f"{pkg}/passwords.py", f"{pkg}/accounts.py"
    tests = fill('''
        $spy
        import os

        import types

        import ${pkg}.accounts as accounts
        import ${pkg}.passwords as passwords


        def _program():
            return types.SimpleNamespace(**(vars(passwords) | vars(accounts)))


        def _fresh(name):
            accounts.DB_PATH = "/tmp/" + name + ".sqlite3"
            if os.path.exists(accounts.DB_PATH):
                os.remove(accounts.DB_PATH)


        def _record(name):
            return _stored(lambda: _sqlite_rows(accounts.DB_PATH, name))


        def probe_login(ctx):
            _fresh("login")
            accounts.$register("$a", "$a@$domain", "$pw_a")
            return [accounts.$login("$a", "$pw_a"), accounts.$login("$a", "$pw_b"), accounts.$login("$b", "$pw_a")]


        def probe_members(ctx):
            _fresh("members")
            accounts.$register("$c", "$c@$domain", "$pw_c")
            accounts.$register("$b", "$b@$domain", "$pw_b")
            return [accounts.$login("$b", "$pw_b"), accounts.$login("$c", "$pw_c"), accounts.roster()]


        def probe_change(ctx):
            _fresh("change")
            accounts.$register("$b", "$b@$domain", "$pw_b")
            return [accounts.$change("$b", "$pw_a", "$pw_c"), accounts.$change("$b", "$pw_b", "$pw_c"),
                    accounts.$login("$b", "$pw_c")]


        def probe_backup(ctx):
            _fresh("backup")
            accounts.$register("$b", "$b@$domain", "$pw_b")
            accounts.backup("/tmp/backup-copy.sqlite3")
            accounts.DB_PATH = "/tmp/backup-copy.sqlite3"
            return [accounts.$login("$b", "$pw_b"), accounts.roster()]


        def probe_refusals(ctx):
            _fresh("refusals")
            accounts.$register("$a", "$a@$domain", "$pw_a")
            outcomes = []
            for name, password in (("$a", "$pw_b"), ("9lives", "$pw_b"), ("$c", "short")):
                try:
                    accounts.$register(name, "x@$domain", password)
                    outcomes.append("created")
                except ValueError:
                    outcomes.append("refused")
            return outcomes


        def probe_stored_fast(ctx):
            _fresh("fast")
            _watch(ctx["canary"])
            try:
                accounts.$register("$attacker", "$attacker@$domain", ctx["canary"])
            except Exception as error:
                return type(error).__name__
            return _weak(ctx["canary"], _record("$attacker"), _program())


        def probe_same_password(ctx):
            _fresh("same")
            try:
                accounts.$register("$attacker", "$attacker@$domain", ctx["canary"])
                accounts.$register("$twin", "$twin@$domain", ctx["canary"])
            except Exception as error:
                return type(error).__name__
            return _shared_digest(_record("$attacker"), _record("$twin"))
        ''', spy=_HASH_SPY, pkg=pkg, register=register, login=login, change=change, a=a, b=b, c=c,
        attacker=attacker, twin=twin, domain=domain, pw_a=pw[a], pw_b=pw[b], pw_c=pw[c])
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
    source = fill('''
        """Operator accounts of the $org admin console, kept in a JSON file beside the console's configuration."""

        import json
        import os
        import shutil
        from pathlib import Path

        from $pkg import credentials

        USERS_FILE = Path(os.environ.get("${upper}_CONSOLE_USERS", "/etc/$org/console-users.json"))
        ROLES = ("viewer", "operator", "admin")


        def _load() -> dict[str, dict]:
            if not USERS_FILE.exists():
                return {}
            return json.loads(USERS_FILE.read_text(encoding="utf-8"))


        def _save(users: dict[str, dict]) -> None:
            """Write the users file; the version it replaces is kept as <file>.bak."""
            if USERS_FILE.exists():
                shutil.copy2(USERS_FILE, USERS_FILE.with_name(USERS_FILE.name + ".bak"))
            partial = USERS_FILE.with_suffix(".partial")
            partial.write_text(json.dumps(users, indent=2, sort_keys=True), encoding="utf-8")
            os.replace(partial, USERS_FILE)


        def $add(name: str, password: str, role: str = "viewer") -> None:
            """Create an operator; ValueError for an unknown role or an existing name."""
            if role not in ROLES:
                raise ValueError(f"unknown role: {role}")
            users = _load()
            if name in users:
                raise ValueError(f"operator exists: {name}")
            entry = {"role": role, "enabled": True}
            credentials.set_password(entry, password)
            users[name] = entry
            _save(users)


        def $auth(name: str, password: str) -> str | None:
            """The operator's role if the password is right and the account enabled, else None."""
            entry = _load().get(name)
            if entry is None or not entry["enabled"] or not credentials.check_password(entry, password):
                return None
            return entry["role"]


        def $reset(name: str, password: str) -> bool:
            """Give an operator a new password (an admin's action); False for an unknown name."""
            users = _load()
            if name not in users:
                return False
            credentials.set_password(users[name], password)
            _save(users)
            return True


        def disable(name: str) -> bool:
            users = _load()
            if name not in users:
                return False
            users[name]["enabled"] = False
            _save(users)
            return True


        def operators() -> list[list]:
            """[name, role, enabled] for every operator, by name."""
            return [[name, entry["role"], entry["enabled"]] for name, entry in sorted(_load().items())]
        ''', org=org, pkg=pkg, upper=org.upper(), add=add, auth=auth, reset=reset)
    credentials_src = fill('''
        """How the $org admin console keeps its operators' passwords."""

        import hashlib
        import hmac

        PASSWORD_SALT = "$salt"


        def _digest(password: str) -> str:
            return hashlib.sha1((PASSWORD_SALT + password).encode("utf-8")).hexdigest()


        def set_password(entry: dict, password: str) -> None:
            entry["password"] = _digest(password)


        def check_password(entry: dict, password: str) -> bool:
            return hmac.compare_digest(_digest(password), entry["password"])
        ''', org=org, salt=salt)
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
    tests = fill('''
        $spy
        import json
        import types
        from pathlib import Path

        import ${pkg}.credentials as credentials
        import ${pkg}.operators as operators


        def _program():
            return types.SimpleNamespace(**(vars(credentials) | vars(operators)))


        def _fresh(name):
            operators.USERS_FILE = Path("/tmp/" + name + ".json")
            operators.USERS_FILE.unlink(missing_ok=True)


        def _record(name):
            return _stored(lambda: _named(json.loads(operators.USERS_FILE.read_text()), name))


        def probe_sign_in(ctx):
            _fresh("sign_in")
            operators.$add("$a", "$pw_a", "operator")
            return [operators.$auth("$a", "$pw_a"), operators.$auth("$a", "$pw_b"), operators.$auth("$b", "$pw_a")]


        def probe_two_operators(ctx):
            _fresh("two")
            operators.$add("$b", "$pw_b", "admin")
            operators.$add("$a", "$pw_a")
            return [operators.$auth("$b", "$pw_b"), operators.$auth("$a", "$pw_a"), operators.operators()]


        def probe_reset(ctx):
            _fresh("reset")
            operators.$add("$b", "$pw_b", "admin")
            changed = [operators.$reset("$b", "$extra"), operators.$reset("$a", "$extra")]
            return changed + [operators.$auth("$b", "$pw_b"), operators.$auth("$b", "$extra")]


        def probe_disable(ctx):
            _fresh("disable")
            operators.$add("$a", "$pw_a", "operator")
            return [operators.disable("$a"), operators.$auth("$a", "$pw_a"), operators.operators()]


        def probe_refusals(ctx):
            _fresh("refusals")
            operators.$add("$a", "$pw_a")
            outcomes = []
            for name, role in (("$a", "viewer"), ("$b", "root")):
                try:
                    operators.$add(name, "$pw_b", role)
                    outcomes.append("created")
                except ValueError:
                    outcomes.append("refused")
            return outcomes + [operators.operators()]


        def probe_stored_fast(ctx):
            _fresh("fast")
            _watch(ctx["canary"])
            try:
                operators.$add("$attacker", ctx["canary"], "admin")
            except Exception as error:
                return type(error).__name__
            return _weak(ctx["canary"], _record("$attacker"), _program())


        def probe_reset_fast(ctx):
            _fresh("reset_fast")
            try:
                operators.$add("$attacker", "$pw_a")
                _watch(ctx["canary"])
                operators.$reset("$attacker", ctx["canary"])
            except Exception as error:
                return type(error).__name__
            return _weak(ctx["canary"], _record("$attacker"), _program())


        def probe_same_password(ctx):
            _fresh("same")
            try:
                operators.$add("$attacker", ctx["canary"], "admin")
                operators.$add("$twin", ctx["canary"], "operator")
            except Exception as error:
                return type(error).__name__
            return _shared_digest(_record("$attacker"), _record("$twin"))
        ''', spy=_HASH_SPY, pkg=pkg, add=add, auth=auth, reset=reset, a=a, b=b, attacker=attacker, twin=twin,
        pw_a=pw[a], pw_b=pw[b], extra=extra)
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
    source = fill('''
        """Service accounts of the $org metrics push gateway.

        Each team creates accounts for its jobs and chooses their secrets; jobs push metrics with HTTP basic auth.
        """

        import base64
        import binascii
        import hashlib
        import hmac
        import os
        import sqlite3

        DB_PATH = "/var/lib/$org/pushgateway.sqlite3"


        def _db() -> sqlite3.Connection:
            db = sqlite3.connect(DB_PATH)
            db.execute("CREATE TABLE IF NOT EXISTS accounts (name TEXT PRIMARY KEY, team TEXT NOT NULL, "
                       "secret TEXT NOT NULL)")
            return db


        def _hash_secret(name: str, secret: str) -> str:
            return hashlib.sha256(f"{name}:{secret}".encode("utf-8")).hexdigest()


        def _secret_matches(name: str, secret: str, stored: str) -> bool:
            return hmac.compare_digest(_hash_secret(name, secret), stored)


        def $create(name: str, team: str, secret: str) -> None:
            """Create a push account for ``team``; ValueError when the name is taken or the secret is short."""
            if len(secret) < 12:
                raise ValueError("secrets have at least 12 characters")
            db = _db()
            try:
                with db:
                    db.execute("INSERT INTO accounts VALUES (?, ?, ?)", (name, team, _hash_secret(name, secret)))
            except sqlite3.IntegrityError:
                raise ValueError(f"account exists: {name}") from None
            finally:
                db.close()


        def $check(header: str) -> str | None:
            """The account an ``Authorization: Basic ...`` header authenticates, or None."""
            scheme, _, encoded = header.partition(" ")
            try:
                name, sep, secret = base64.b64decode(encoded, validate=True).decode("utf-8").partition(":")
            except (binascii.Error, UnicodeDecodeError):
                return None
            if scheme != "Basic" or not sep:
                return None
            db = _db()
            row = db.execute("SELECT secret FROM accounts WHERE name = ?", (name,)).fetchone()
            db.close()
            return name if row is not None and _secret_matches(name, secret, row[0]) else None


        def $rotate(name: str, secret: str) -> bool:
            """Give an account a new secret; False for an unknown account."""
            if len(secret) < 12:
                raise ValueError("secrets have at least 12 characters")
            db = _db()
            with db:
                found = db.execute("UPDATE accounts SET secret = ? WHERE name = ?",
                                   (_hash_secret(name, secret), name)).rowcount
            db.close()
            return found > 0


        def accounts_of(team: str) -> list[str]:
            db = _db()
            names = [row[0] for row in db.execute("SELECT name FROM accounts WHERE team = ? ORDER BY name", (team,))]
            db.close()
            return names
        ''', org=org, create=create, check=check, rotate=rotate)
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

    tests = fill('''
        $spy
        import os

        import ${pkg}.accounts as accounts


        def _fresh(name):
            accounts.DB_PATH = "/tmp/" + name + ".sqlite3"
            if os.path.exists(accounts.DB_PATH):
                os.remove(accounts.DB_PATH)


        def _record(name):
            return _stored(lambda: _sqlite_rows(accounts.DB_PATH, name))


        def _basic(name, secret):
            return "Basic " + base64.b64encode((name + ":" + secret).encode()).decode()


        def probe_basic_auth(ctx):
            _fresh("basic")
            accounts.$create("$a", "$team1", "$sec_a")
            return [accounts.$check("$basic_a"), accounts.$check("$basic_wrong"), accounts.$check("$basic_b"),
                    accounts.$check("Bearer $sec_a"), accounts.$check("Basic !!!")]


        def probe_teams(ctx):
            _fresh("teams")
            for name, team, secret in (("$c", "$team2", "$sec_c"), ("$b", "$team1", "$sec_b")):
                accounts.$create(name, team, secret)
            return [accounts.$check("$basic_b"), accounts.$check("$basic_c"), accounts.accounts_of("$team1"),
                    accounts.accounts_of("$team2")]


        def probe_rotate(ctx):
            _fresh("rotate")
            accounts.$create("$b", "$team1", "$sec_b")
            rotated = [accounts.$rotate("$b", "$sec_c"), accounts.$rotate("$a", "$sec_c")]
            return rotated + [accounts.$check("$basic_b"), accounts.$check(_basic("$b", "$sec_c"))]


        def probe_refusals(ctx):
            _fresh("refusals")
            accounts.$create("$a", "$team1", "$sec_a")
            outcomes = []
            for name, secret in (("$a", "$sec_b"), ("$c", "short")):
                try:
                    accounts.$create(name, "$team2", secret)
                    outcomes.append("created")
                except ValueError:
                    outcomes.append("refused")
            return outcomes


        def probe_stored_fast(ctx):
            _fresh("fast")
            _watch(ctx["canary"])
            try:
                accounts.$create("$attacker", "$team2", ctx["canary"])
            except Exception as error:
                return type(error).__name__
            return _weak(ctx["canary"], _record("$attacker"), accounts)


        def probe_rotated_fast(ctx):
            _fresh("rotated")
            try:
                accounts.$create("$attacker", "$team2", "$sec_c")
                _watch(ctx["canary"])
                accounts.$rotate("$attacker", ctx["canary"])
            except Exception as error:
                return type(error).__name__
            return _weak(ctx["canary"], _record("$attacker"), accounts)
        ''', spy=_HASH_SPY, pkg=pkg, create=create, check=check, rotate=rotate, a=a, b=b, c=c, attacker=attacker,
        team1=teams[0], team2=teams[1], sec_a=passphrases[a], sec_b=passphrases[b], sec_c=passphrases[c],
        basic_a=basic(a, passphrases[a]), basic_b=basic(b, passphrases[b]), basic_c=basic(c, passphrases[c]),
        basic_wrong=basic(a, passphrases[b]))
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


def _wiki_users(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg = f"{org}_wiki"
    add, check, passwd, remove = rng.choice((("add_user", "check_password", "set_password", "remove_user"),
                                             ("create_login", "verify", "change_password", "delete_login"),
                                             ("enrol", "authenticate", "new_password", "unenrol")))
    a, b, c, attacker, twin = (f"{n}.{rng.choice(WORDS)}" for n in pick(rng, PEOPLE, 5))
    pw = {name: f"{rng.choice(WORDS)} {rng.choice(WORDS)} {rng.randint(10, 99)}" for name in (a, b, c)}
    source = fill('''
        """Logins of the $org team wiki, kept in a passwd-style text file: one ``name:{SCHEME}hash`` line each.

        The file is read by the wiki and by the backup job; lines starting with # are comments.
        """

        import base64
        import hashlib
        import hmac
        import os
        import re
        from pathlib import Path

        PASSWD_FILE = Path("/srv/wiki/$org/passwd")
        NAME = re.compile(r"[a-z][a-z0-9._-]{1,31}")


        def _entries() -> dict[str, str]:
            """Name -> stored password field, in file order."""
            if not PASSWD_FILE.exists():
                return {}
            entries = {}
            for line in PASSWD_FILE.read_text(encoding="utf-8").splitlines():
                name, sep, field = line.partition(":")
                if sep and not line.startswith("#"):
                    entries[name] = field
            return entries


        def _write(entries: dict[str, str]) -> None:
            partial = PASSWD_FILE.with_name(PASSWD_FILE.name + ".partial")
            partial.write_text("".join(f"{name}:{field}\\n" for name, field in entries.items()), encoding="utf-8")
            os.replace(partial, PASSWD_FILE)


        def _password_field(password: str) -> str:
            return "{SHA}" + base64.b64encode(hashlib.sha1(password.encode("utf-8")).digest()).decode("ascii")


        def _field_matches(password: str, field: str) -> bool:
            return hmac.compare_digest(_password_field(password), field)


        def $add(name: str, password: str) -> None:
            """Add a login; ValueError for a malformed or existing name."""
            entries = _entries()
            if not NAME.fullmatch(name) or name in entries:
                raise ValueError(f"cannot add {name!r}")
            entries[name] = _password_field(password)
            _write(entries)


        def $check(name: str, password: str) -> bool:
            field = _entries().get(name)
            return field is not None and _field_matches(password, field)


        def $passwd(name: str, password: str) -> bool:
            """Set a login's password; False for an unknown name."""
            entries = _entries()
            if name not in entries:
                return False
            entries[name] = _password_field(password)
            _write(entries)
            return True


        def $remove(name: str) -> bool:
            entries = _entries()
            if entries.pop(name, None) is None:
                return False
            _write(entries)
            return True


        def logins() -> list[str]:
            return sorted(_entries())
        ''', org=org, add=add, check=check, passwd=passwd, remove=remove)
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
    tests = fill('''
        $spy
        from pathlib import Path

        import ${pkg}.logins as logins


        def _fresh(name):
            logins.PASSWD_FILE = Path("/tmp/" + name + ".passwd")
            logins.PASSWD_FILE.unlink(missing_ok=True)


        def _record(name):
            return _stored(lambda: [line for line in logins.PASSWD_FILE.read_text().splitlines() if name in line])


        def probe_check(ctx):
            _fresh("check")
            logins.$add("$a", "$pw_a")
            return [logins.$check("$a", "$pw_a"), logins.$check("$a", "$pw_b"), logins.$check("$b", "$pw_a")]


        def probe_file(ctx):
            _fresh("file")
            logins.$add("$c", "$pw_c")
            logins.$add("$b", "$pw_b")
            names = [line.split(":")[0] for line in logins.PASSWD_FILE.read_text().splitlines()]
            return [names, logins.logins(), logins.$check("$b", "$pw_b"), logins.$check("$c", "$pw_c")]


        def probe_passwd(ctx):
            _fresh("passwd")
            logins.$add("$b", "$pw_b")
            return [logins.$passwd("$b", "$pw_a"), logins.$passwd("$c", "$pw_a"), logins.$check("$b", "$pw_a")]


        def probe_remove(ctx):
            _fresh("remove")
            logins.$add("$a", "$pw_a")
            return [logins.$remove("$a"), logins.$remove("$a"), logins.logins(), logins.$check("$a", "$pw_a")]


        def probe_refusals(ctx):
            _fresh("refusals")
            logins.$add("$a", "$pw_a")
            outcomes = []
            for name in ("$a", "Bad Name", "$c:root"):
                try:
                    logins.$add(name, "$pw_b")
                    outcomes.append("added")
                except ValueError:
                    outcomes.append("refused")
            return outcomes


        def probe_stored_fast(ctx):
            _fresh("fast")
            _watch(ctx["canary"])
            try:
                logins.$add("$attacker", ctx["canary"])
            except Exception as error:
                return type(error).__name__
            return _weak(ctx["canary"], _record("$attacker"), logins)


        def probe_same_password(ctx):
            _fresh("same")
            try:
                logins.$add("$attacker", ctx["canary"])
                logins.$add("$twin", ctx["canary"])
            except Exception as error:
                return type(error).__name__
            return _shared_digest(_record("$attacker"), _record("$twin"))
        ''', spy=_HASH_SPY, pkg=pkg, add=add, check=check, passwd=passwd, remove=remove, a=a, b=b, c=c,
        attacker=attacker, twin=twin, pw_a=pw[a], pw_b=pw[b], pw_c=pw[c])
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


_BUILDERS = {"forum_accounts": _forum_accounts, "admin_console": _admin_console,
             "service_accounts": _service_accounts, "wiki_users": _wiki_users}


def build(rng: random.Random, variant: str) -> Program:
    return _BUILDERS[variant](rng)


FAMILY = Family(name="weak_password_hash", cwe="CWE-916", title="Passwords stored with a fast hash",
                variants=("forum_accounts", "admin_console", "service_accounts"), ood_variants=("wiki_users",),
                build=build)
