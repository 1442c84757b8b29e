import ast
import base64
import binascii
import hashlib
import hmac
import json
import os
import re
import shutil
import sqlite3
import stat
import time

_FAST = ("md5", "sha1", "sha224", "sha256", "sha384", "sha512", "sha3_224", "sha3_256", "sha3_384", "sha3_512",
         "blake2b", "blake2s")
#: Key derivation under these settings is weak (OWASP's floor for PBKDF2, scrypt's interactive setting); so is an
#: iterated fast hash of fewer rounds than PBKDF2's floor.
PBKDF2_MIN, SCRYPT_MIN_N = 100_000, 2 ** 14
#: CPU seconds the program must spend storing one password (read from outside with program_cpu()). Calibrated in the
#: judged sandbox on an AMD EPYC: md5/sha1/sha256 with the store's sqlite or JSON write 0.3-0.9 ms, PBKDF2 at 10,000
#: rounds 2.4 ms, scrypt n=2**14 r=1 4-5 ms; PBKDF2-SHA256 at 100,000 rounds 19 ms, PBKDF2-SHA1 at 100,000 20 ms,
#: scrypt n=2**14 r=8 26-33 ms, PBKDF2-SHA256 at 200,000 36 ms.
CPU_FLOOR = 0.008
#: Hash blocks the recomputation may spend (about 0.2 us each); past it the record counts as weak (not cleared).
_BUDGET = 10 ** 7
_SEPARATORS = re.compile(r"[$:;,|{}()\s]+")


def _cpu_of(call):
    """The CPU seconds the program spent in ``call()`` (``program_cpu`` counts the current program's processes
    only, so nothing the judge starts meanwhile is in it)."""
    before = program_cpu()
    call()
    return program_cpu() - before


def _store(name):
    """A fresh, empty directory for a store, as (the program's path, the judge's path)."""
    work = os.path.join(WORK, "store-" + name)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    os.chmod(work, 0o777)
    return ROOT + "/store-" + name, work


def _read(path, limit=1 << 23):
    """The bytes of a regular file (never through a link, never a FIFO), or None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        data = b""
        while len(data) <= limit:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return data
            data += chunk
        return None
    except OSError:
        return None
    finally:
        os.close(fd)


def _sqlite_rows(data):
    db = sqlite3.connect(":memory:")
    try:
        db.execute("PRAGMA trusted_schema = OFF")
        db.deserialize(data)
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        rows = []
        for table in tables:
            try:
                rows += [list(row) for row in db.execute('SELECT * FROM "%s" LIMIT 5000' % table.replace('"', '""'))]
            except sqlite3.Error:
                continue
        return rows
    except sqlite3.Error:
        return None
    finally:
        db.close()


def _contents(work):
    """Every file of a store directory, read by the judge: ("rows", sqlite rows), ("json", document) or ("lines",
    text lines)."""
    out = {}
    try:
        names = sorted(os.listdir(work))
    except OSError:
        return out
    for name in names[:32]:
        data = _read(os.path.join(work, name))
        if data is None:
            continue
        if data.startswith(b"SQLite format 3\0"):
            rows = _sqlite_rows(data)
            if rows is not None:
                out[name] = ("rows", rows)
            continue
        text = data.decode("utf-8", "replace")
        try:
            out[name] = ("json", json.loads(text))
        except ValueError:
            out[name] = ("lines", text.splitlines())
    return out


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


def _record(contents, name):
    """What the store keeps of the user ``name``: the rows, JSON entries and lines that name it."""
    found = []
    for kind, content in contents.values():
        if kind == "rows":
            found += [row for row in content if name in row]
        elif kind == "json":
            entry = _named(content, name)
            if entry is not None:
                found.append(entry)
        else:
            found += [line for line in content if name in line]
    return found


def _pieces(values):
    """Every str and bytes in ``values`` (nested in lists, tuples and dicts), the parts of the strings between
    separators, and what the parts decode to as hex or base64."""
    out, stack = set(), list(values)
    while stack and len(out) < 20000:
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
            for part in {value, *_SEPARATORS.split(value)}:
                if not part or len(part) > 4096:
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
        elif isinstance(value, int) and not isinstance(value, bool):
            out.add(str(value).encode())
    return out


def _fold(node, names):
    """The int a constant expression stands for (``2**14``, ``1 << 10``, ``10 * 1000``, a module constant)."""
    if isinstance(node, ast.Constant):
        return node.value if type(node.value) is int else None
    if isinstance(node, ast.Name):
        return names.get(node.id)
    if isinstance(node, ast.BinOp):
        a, b = _fold(node.left, names), _fold(node.right, names)
        if a is None or b is None or abs(a) > 1 << 40 or abs(b) > 1 << 40:
            return None
        if isinstance(node.op, ast.Pow):
            return a ** b if 0 <= b <= 64 and abs(a) <= 1 << 16 else None
        if isinstance(node.op, ast.LShift):
            return a << b if 0 <= b <= 64 else None
        ops = {ast.Mult: lambda: a * b, ast.Add: lambda: a + b, ast.Sub: lambda: a - b,
               ast.FloorDiv: lambda: a // b if b else None}
        return ops[type(node.op)]() if type(node.op) in ops else None
    return None


def _sources():
    """The program's Python files as the judge sees them (the project directory, the stores left out)."""
    texts, total = [], 0
    for top, dirs, files in os.walk(WORK):
        dirs[:] = sorted(d for d in dirs if not d.startswith("store-") and d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py") and total < 1 << 20:
                data = _read(os.path.join(top, name), 1 << 18)
                if data is not None:
                    texts.append(data.decode("utf-8", "replace"))
                    total += len(data)
    return texts


def _constants(sources):
    """What the source holds that a derivation could take: (str/bytes constants, module-level str/bytes constants,
    int constants and constant expressions, loop bounds: of range() and of while tests, the fast hashes it calls)."""
    trees = []
    for text in sources:
        try:
            trees.append(ast.parse(text))
        except (SyntaxError, ValueError, RecursionError):
            continue
    names, named_strings = {}, set()
    for _ in range(3):
        for tree in trees:
            for node in tree.body:
                if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    for target in targets:
                        if isinstance(target, ast.Name):
                            value = _fold(node.value, names)
                            if value is not None:
                                names[target.id] = value
                            elif isinstance(node.value, ast.Constant) and isinstance(node.value.value, (str, bytes)):
                                named_strings.add(node.value.value)
    strings, numbers, rounds, fast = set(), set(names.values()), set(), set()
    params = {"iterations": set(), "n": set(), "r": set(), "p": set()}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)) and len(node.value) <= 256:
                strings.add(node.value)
            elif isinstance(node, (ast.Constant, ast.BinOp, ast.Name)):
                value = _fold(node, names)
                if value is not None:
                    numbers.add(value)
            if isinstance(node, ast.Call):
                func = node.func
                called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
                where = {"pbkdf2_hmac": ("iterations", 3), "scrypt": ("n", None), "pbkdf2": ("iterations", 3)}
                if called in where:
                    wanted = {where[called][0]} | ({"r", "p"} if called == "scrypt" else set())
                    given = {k.arg: k.value for k in node.keywords if k.arg in wanted}
                    if where[called][1] is not None and len(node.args) > where[called][1]:
                        given[where[called][0]] = node.args[where[called][1]]
                    for key in wanted:
                        value = _fold(given[key], names) if key in given else None
                        params[key].add(value if value is not None else "any" if key in given else None)
                if called == "range":
                    rounds.update(v for v in (_fold(arg, names) for arg in node.args) if v is not None)
                elif called in _FAST:
                    fast.add(called)
                elif called == "new":
                    fast.update(a.value.lower() for a in node.args[:3] if isinstance(a, ast.Constant)
                                and isinstance(a.value, str) and a.value.lower() in _FAST)
            elif isinstance(node, ast.While) and isinstance(node.test, ast.Compare):
                rounds.update(v for v in (_fold(c, names) for c in [node.test.left, *node.test.comparators])
                              if v is not None)
    return strings, named_strings, numbers, rounds, fast, params


def _salt_order(piece):
    """Salts most likely first: decoded bytes (a random salt kept as hex or base64), then short text."""
    printable = all(32 <= b < 127 for b in piece)
    return (printable, not 8 <= len(piece) <= 32, len(piece), piece)


class _Match:
    """Whether a derived key is stored: as it is, hex-encoded, or a prefix of it (8 bytes or more) among the pieces
    of the store, or inside a longer piece."""

    def __init__(self, stored):
        self.index = {}
        for piece in stored:
            if len(piece) >= 8:
                self.index.setdefault(piece[:8], []).append(piece)
        self.windows = set()
        for piece in sorted(stored, key=len):
            if 16 < len(piece) <= 4096 and len(self.windows) < 1 << 19:
                self.windows.update(piece[i:i + 16] for i in range(len(piece) - 15))

    def __call__(self, derived):
        for form in (derived, derived.hex().encode()):
            if any(form.startswith(piece) for piece in self.index.get(form[:8], ())):
                return True
        return derived[:16] in self.windows


def _unique(items):
    seen, out = set(), []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


def _fast_digest(secret, salts, match):
    """The password, salted on either side with a salt, through one fast hash or an HMAC keyed either way."""
    for salt in salts:
        messages = {secret}
        if salt:
            for glue in (b"", b":", b"$"):
                messages |= {salt + glue + secret, secret + glue + salt}
        for message in messages:
            if any(match(hashlib.new(name, message).digest()) for name in _FAST):
                return True
        if salt and any(match(hmac.new(key, message, name).digest()) for key, message
                        in ((salt, secret), (secret, salt)) for name in ("md5", "sha1", "sha256", "sha512")):
            return True
    return False


def _weak_derivation(secret, salts, text, numbers, rounds, fast, params, match):
    """A weak key derivation the program's source names, with its parameters among the numbers of the source and
    the record: PBKDF2 under PBKDF2_MIN rounds, scrypt under n=SCRYPT_MIN_N, a fast hash iterated fewer than
    PBKDF2_MIN times (each round hashing the previous digest, its hex, or it with the salt or the password).
    The parameters tried are those of the source's calls where they are constants, else any number found.
    Returns True (weak), False, or None when the budget ran out first."""
    work = 0

    def candidates(key, keep):
        found = params[key]
        loose = not found or "any" in found
        chosen = {v for v in found if isinstance(v, int)} | (numbers if loose else set())
        if None in found:
            chosen.add({"r": 8, "p": 1}.get(key, 0))
        return sorted(v for v in chosen if keep(v))

    named = [name for name in _FAST if name in text] or ["sha256"]
    if "pbkdf2" in text:
        counts = candidates("iterations", lambda c: 1 <= c < PBKDF2_MIN)
        for salt in salts:
            for name in [n for n in named if not n.startswith(("sha3", "blake"))] or ["sha256"]:
                for count in counts:
                    work += count * 2
                    if work > _BUDGET:
                        return None
                    if match(hashlib.pbkdf2_hmac(name, secret, salt, count, 64)):
                        return True
    if "scrypt" in text:
        ns = candidates("n", lambda n: 2 <= n < SCRYPT_MIN_N and n & (n - 1) == 0)
        rs = candidates("r", lambda x: 1 <= x <= 32)
        ps = candidates("p", lambda x: 1 <= x <= 4)
        for salt in salts:
            for n in ns:
                for r in rs:
                    for p in ps:
                        work += n * r * p
                        if work > _BUDGET:
                            return None
                        try:
                            if match(hashlib.scrypt(secret, salt=salt, n=n, r=r, p=p, maxmem=1 << 26, dklen=64)):
                                return True
                        except (ValueError, MemoryError):
                            continue
    chain = max((c for c in rounds if 2 <= c < PBKDF2_MIN), default=0)
    if chain and fast:
        for salt in salts[:8]:
            seeds = _unique([secret, salt + secret, secret + salt])
            steps = [lambda d: d, lambda d: d.hex().encode(), lambda d, s=salt: d + s, lambda d, s=salt: s + d,
                     lambda d: d + secret, lambda d: secret + d]
            for name in sorted(fast):
                for seed in seeds:
                    for step in steps:
                        work += 3 * chain
                        if work > _BUDGET:
                            return None
                        digest = hashlib.new(name, seed).digest()
                        for _ in range(chain):
                            digest = hashlib.new(name, step(digest)).digest()
                            if match(digest):
                                return True
    return False


def _derivable(password, contents, record):
    """Whether the store keeps ``password`` in a form an offline cracker gets cheaply: the password itself, a fast
    digest of it (salted with a string of the record or of the source, or HMAC-keyed), or a weak key derivation."""
    secret = password.encode("utf-8")
    stored = _pieces([content for _, content in contents.values()])
    if any(secret in piece for piece in stored):
        return True
    match = _Match(stored)
    sources = _sources()
    strings, named_strings, numbers, rounds, fast, params = _constants(sources)
    in_record = _pieces(record)
    from_record = sorted((p for p in in_record if 4 <= len(p) <= 64), key=_salt_order)
    cuts = sorted({p[:k] for p in in_record if 24 <= len(p) <= 160 for k in (8, 12, 16, 24, 32) if k < len(p)}
                  | {p[-k:] for p in in_record if 24 <= len(p) <= 160 for k in (8, 12, 16, 24, 32) if k < len(p)},
                  key=_salt_order)
    named = sorted((p for p in _pieces(named_strings) if len(p) <= 64), key=_salt_order)
    salts = _unique([b""] + from_record + named + cuts + sorted(p for p in _pieces(strings) if len(p) <= 64)
                    + sorted(p for p in stored if len(p) <= 64))
    if _fast_digest(secret, salts[:600], match):
        return True
    listed = {int(p) for p in in_record if p.isdigit() and len(p) <= 7}  # parameters a record names (rounds$salt$..)
    numbers |= listed | {int(p) for p in stored if p.isdigit() and len(p) <= 7}
    rounds |= listed
    for values in params.values():
        if values:
            values |= listed
    found = _weak_derivation(secret, _unique(from_record + named + cuts + [b""])[:48], "\n".join(sources).lower(),
                             numbers, rounds, fast, params, match)
    return found is not False


def _weak(password, name, work, spent):
    """The probe's verdict on storing ``password`` for the user ``name`` in the store at ``work``: True when it cost
    the program less than CPU_FLOOR, when the store has no record of the user, or when the record is derivable."""
    if spent < CPU_FLOOR:
        return True
    contents = _contents(work)
    record = _record(contents, name)
    return not record or _derivable(password, contents, record)


def _shared_digest(work, name_a, name_b):
    """Whether two users' records hold the same digest, or either is missing. A digest is 16 bytes or more that are
    not text (raw, or decoded from hex or base64) and not a constant of the source (a scheme's name)."""
    contents = _contents(work)
    a, b = _record(contents, name_a), _record(contents, name_b)
    if not a or not b:
        return True
    constant = _pieces(_constants(_sources())[0])

    def digests(record):
        return {p for p in _pieces(record) if len(p) >= 16 and not all(32 <= c < 127 for c in p)} - constant
    return bool(digests(a) & digests(b))
