"""CWE-78, OS command injection: a program builds a shell command line from a caller's string.

Variants (every one runs a real command of coreutils/grep/tar in the sandbox):

- ``log_search``: count the lines of a service log that contain a search term (``grep -c -F``);
- ``line_report``: count the lines of an exported report for a dashboard (``wc -l``);
- ``checksum``: verify an upload against its SHA-256 (``sha256sum``), through ``os.popen``;
- ``archive_list`` (OOD): list the members of an uploaded tarball (``tar -tf``), with the user's file name.

The exploit probes break out of the quoting with ``;`` and ``$( )`` and ``touch`` the run's marker file; the
reference fix passes an argument list without a shell.
"""

from __future__ import annotations

import hashlib
import random

from security_verifiers.envs.code_repair.families import Family
from security_verifiers.envs.code_repair.families.kit import NOUNS, ORGS, WORDS, fill, location, pick, swap
from security_verifiers.envs.code_repair.program import Detect, Probe, Program

MARKER = Detect(kind="marker")
_HELLO = hashlib.sha256(b"hello").hexdigest()


def _log_lines(rng: random.Random, term: str, n: int) -> tuple[str, int]:
    levels = ("INFO", "WARN", "ERROR", "DEBUG")
    lines, hits = [], 0
    for k in range(n):
        level = rng.choice(levels)
        text = f"2026-03-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d} {level} " \
               f"{rng.choice(WORDS)} request {k} " + (term if rng.random() < 0.3 else rng.choice(WORDS))
        hits += term in text
        lines.append(text)
    return "\n".join(lines) + "\n", hits


def _log_search(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg = f"{org}_logs"
    fn = rng.choice(("count_matches", "count_lines_with", "occurrences"))
    term, other = pick(rng, ("timeout", "refused", "denied", "overflow", "retry", "expired"), 2)
    app_log, app_hits = _log_lines(rng, term, rng.randint(12, 30))
    auth_log, auth_hits = _log_lines(rng, other, rng.randint(8, 20))
    source = fill('''
        """Search the service's log files for a term and count the lines that mention it.

        Used by the on-call dashboard: operators type a term, the dashboard shows how often it occurs.
        """

        import os
        import string
        import subprocess
        from pathlib import Path

        LOG_DIR = Path(os.environ.get("${upper}_LOG_DIR", "/var/log/${org}"))
        DEFAULT_LOG = "app.log"
        LINE = string.Template("$${term}: $${count} line(s) in $${log}")


        def log_path(name: str) -> Path:
            path = LOG_DIR / name
            if path.suffix != ".log" or not path.is_file():
                raise FileNotFoundError(f"no such log: {name}")
            return path


        def $fn(term: str, log: str = DEFAULT_LOG) -> int:
            """Number of lines of the log that contain term (a fixed string, not a pattern)."""
            path = log_path(log)
            result = subprocess.run(f"grep -c -F -- '{term}' {path}", shell=True, capture_output=True, text=True)
            if result.returncode > 1:
                raise RuntimeError(result.stderr.strip())
            return int(result.stdout.strip() or 0)


        def summary(terms: list[str], log: str = DEFAULT_LOG) -> dict[str, int]:
            return {term: $fn(term, log) for term in terms}


        def report(terms: list[str], log: str = DEFAULT_LOG) -> list[str]:
            """One line of text per term, as the dashboard's panel shows it."""
            return [LINE.substitute(term=term, count=count, log=log) for term, count in summary(terms, log).items()]


        def available_logs() -> list[str]:
            """The logs operators may search, by name."""
            return sorted(entry.name for entry in LOG_DIR.iterdir() if entry.suffix == ".log" and entry.is_file())


        def tail(log: str = DEFAULT_LOG, lines: int = 5) -> list[str]:
            """The last ``lines`` lines of a log, oldest first."""
            if not 1 <= lines <= 500:
                raise ValueError("lines must be between 1 and 500")
            with open(log_path(log), encoding="utf-8", errors="replace") as handle:
                return [line.rstrip("\\n") for line in handle.readlines()[-lines:]]
        ''', upper=org.upper(), org=org, fn=fn)
    fixed = swap(source,
        "subprocess.run(f\"grep -c -F -- '{term}' {path}\", shell=True, capture_output=True, text=True)",
        'subprocess.run(["grep", "-c", "-F", "--", term, str(path)], capture_output=True, text=True)')
    path = f"{pkg}/search.py"
    tests = fill('''
        from pathlib import Path

        import ${pkg}.search as search

        search.LOG_DIR = Path(ROOT + "/data/logs")


        def probe_count(ctx):
            return search.$fn("$term")


        def probe_other_log(ctx):
            return search.$fn("$other", "auth.log")


        def probe_summary(ctx):
            return search.summary(["$term", "no-such-term-zz"])


        def probe_report(ctx):
            return search.report(["$other"], "auth.log")


        def probe_logs(ctx):
            return search.available_logs()


        def probe_tail(ctx):
            return search.tail("auth.log", 2)


        def probe_missing_log(ctx):
            try:
                search.$fn("$term", "nope.log")
            except FileNotFoundError:
                return "not found"
            return "found"


        def probe_quote_break(ctx):
            try:
                search.$fn("x' ; touch " + ctx["marker"] + " ; echo '")
            except Exception as error:
                return type(error).__name__
            return "ran"


        def probe_substitution(ctx):
            try:
                search.$fn("x'$$(touch " + ctx["marker"] + ")'", "auth.log")
            except Exception as error:
                return type(error).__name__
            return "ran"
        ''', pkg=pkg, fn=fn, term=term, other=other)
    return Program(
        family="command_injection", variant="log_search", domain="operations log search", cwe="CWE-78",
        files={path: source}, fixed={path: fixed},
        description=f"`{fn}(term, log)` counts the lines of a log file under LOG_DIR that contain `term` "
                    "literally; `summary` does it for several terms. Operators type the terms in a dashboard.",
        location=location({path: source}, path, "shell=True"),
        tests=tests,
        probes=[Probe(id="count", kind="functional", expect=app_hits),
                Probe(id="other_log", kind="functional", expect=auth_hits),
                Probe(id="summary", kind="functional", expect={term: app_hits, "no-such-term-zz": 0}),
                Probe(id="report", kind="functional", expect=[f"{other}: {auth_hits} line(s) in auth.log"]),
                Probe(id="missing_log", kind="functional", expect="not found"),
                Probe(id="logs", kind="functional", expect=["app.log", "auth.log"]),
                Probe(id="tail", kind="functional", expect=auth_log.splitlines()[-2:]),
                Probe(id="quote_break", kind="exploit", detect=MARKER),
                Probe(id="substitution", kind="exploit", detect=MARKER)],
        fixtures={"data/logs/app.log": app_log, "data/logs/auth.log": auth_log},
        static_ids=["B602"])


def _line_report(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    noun = rng.choice(NOUNS)
    pkg = f"{noun}_reports"
    counts = {f"{noun}s-{rng.choice(WORDS)}-{k}.csv": rng.randint(3, 25) for k in range(3)}
    names = list(counts)
    source = fill('''
        """Row counts of the exported $noun reports, for the $org finance dashboard."""

        import csv
        import os
        from pathlib import Path

        EXPORT_DIR = Path("/srv/exports")


        def rows(report: str) -> int:
            """Data rows of one exported CSV report (its lines, minus the header)."""
            if not report.endswith(".csv"):
                raise ValueError("reports are CSV files")
            stream = os.popen(f"wc -l < {EXPORT_DIR}/{report}")
            output = stream.read()
            stream.close()
            if not output.strip():
                raise FileNotFoundError(report)
            return max(int(output.split()[0]) - 1, 0)


        def dashboard(reports: list[str]) -> list[tuple[str, int]]:
            """The reports with their row counts, largest first."""
            return sorted(((name, rows(name)) for name in reports), key=lambda pair: (-pair[1], pair[0]))


        def total(report: str, column: str = "amount") -> int:
            """The sum of one integer column of a report."""
            path = EXPORT_DIR / report
            if path.parent != EXPORT_DIR or not path.is_file():
                raise FileNotFoundError(report)
            with open(path, newline="", encoding="utf-8") as handle:
                return sum(int(row[column]) for row in csv.DictReader(handle))


        def reports() -> list[str]:
            return sorted(name for name in os.listdir(EXPORT_DIR) if name.endswith(".csv"))
        ''', noun=noun, org=org)
    fixed = swap(source,
        '''            stream = os.popen(f"wc -l < {EXPORT_DIR}/{report}")
            output = stream.read()
            stream.close()
            if not output.strip():
                raise FileNotFoundError(report)
            return max(int(output.split()[0]) - 1, 0)''',
        '''            path = EXPORT_DIR / report
            if path.parent != EXPORT_DIR or not path.is_file():
                raise FileNotFoundError(report)
            with open(path, "rb") as handle:
                return max(sum(1 for _ in handle) - 1, 0)''')
    path = f"{pkg}/counts.py"
    fixtures = {f"data/exports/{name}": "id,amount\n" + "".join(f"{k},{k * 7}\n" for k in range(n))
                for name, n in counts.items()}
    expect_dash = [[name, counts[name]] for name in sorted(names, key=lambda n: (-counts[n], n))]
    tests = fill('''
        from pathlib import Path

        import ${pkg}.counts as counts

        counts.EXPORT_DIR = Path(ROOT + "/data/exports")


        def probe_rows(ctx):
            return counts.rows("$first")


        def probe_dashboard(ctx):
            return [list(pair) for pair in counts.dashboard($names)]


        def probe_total(ctx):
            return counts.total("$first")


        def probe_reports(ctx):
            return counts.reports()


        def probe_not_csv(ctx):
            try:
                counts.rows("$first.txt")
            except ValueError:
                return "refused"
            return "accepted"


        def probe_chain(ctx):
            try:
                counts.rows("x.csv; touch " + ctx["marker"] + " #.csv")
            except Exception as error:
                return type(error).__name__
            return "ran"


        def probe_backticks(ctx):
            try:
                counts.rows("`touch " + ctx["marker"] + "`.csv")
            except Exception as error:
                return type(error).__name__
            return "ran"
        ''', pkg=pkg, first=names[0], names=repr(names))
    return Program(
        family="command_injection", variant="line_report", domain="report export", cwe="CWE-78",
        files={path: source}, fixed={path: fixed},
        description="`rows(report)` returns the number of data rows (lines minus the header) of an exported CSV "
                    "report in EXPORT_DIR; `dashboard(reports)` lists reports with their counts, largest first. "
                    "Report names come from the dashboard's URL.",
        location=location({path: source}, path, "os.popen("),
        tests=tests,
        probes=[Probe(id="rows", kind="functional", expect=counts[names[0]]),
                Probe(id="dashboard", kind="functional", expect=expect_dash),
                Probe(id="not_csv", kind="functional", expect="refused"),
                Probe(id="total", kind="functional", expect=sum(k * 7 for k in range(counts[names[0]]))),
                Probe(id="reports", kind="functional", expect=sorted(names)),
                Probe(id="chain", kind="exploit", detect=MARKER),
                Probe(id="backticks", kind="exploit", detect=MARKER)],
        fixtures=fixtures, static_ids=["B605"])


def _checksum(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg = f"{org}_uploads"
    files = {f"{rng.choice(NOUNS)}-{k}.pdf": f"%PDF-1.4 {rng.choice(WORDS)} {rng.random()}\n" for k in range(2)}
    names = list(files)
    digests = {name: hashlib.sha256(text.encode()).hexdigest() for name, text in files.items()}
    ledger = fill('''
        """The ledger of verified uploads: which stored files matched the digest their client claimed."""

        import sqlite3

        LEDGER = ":memory:"
        _db = None


        def connect() -> sqlite3.Connection:
            """The table of verified uploads (name, digest), made on first use."""
            global _db
            if _db is None:
                _db = sqlite3.connect(LEDGER)
                _db.execute("CREATE TABLE IF NOT EXISTS verified (name TEXT PRIMARY KEY, digest TEXT NOT NULL)")
            return _db


        def record(name: str, digest: str) -> None:
            with connect() as db:
                db.execute("INSERT OR REPLACE INTO verified VALUES (?, ?)", (name, digest))


        def verified() -> list[str]:
            return [row[0] for row in connect().execute("SELECT name FROM verified ORDER BY name")]
        ''')
    source = fill('''
        """Upload verification: clients send a file and its SHA-256; we check the stored copy against it."""

        import hashlib
        import os
        import subprocess

        from ${pkg} import ledger

        UPLOAD_ROOT = "/srv/uploads"


        def store(name: str, data: bytes) -> str:
            """Save an upload under UPLOAD_ROOT and return its SHA-256."""
            if os.path.basename(name) != name or name.startswith("."):
                raise ValueError("bad upload name")
            with open(os.path.join(UPLOAD_ROOT, name), "wb") as handle:
                handle.write(data)
            return hashlib.sha256(data).hexdigest()


        def stored_digest(name: str) -> str:
            output = subprocess.check_output(f"sha256sum {UPLOAD_ROOT}/{name}", shell=True, text=True)
            return output.split()[0]


        def verify(name: str, claimed: str) -> bool:
            """Whether the stored upload ``name`` has the SHA-256 ``claimed`` (hex, any case); a match is recorded."""
            digest = stored_digest(name)
            ok = digest == claimed.strip().lower()
            if ok:
                ledger.record(name, digest)
            return ok
        ''', pkg=pkg)
    fixed = swap(source,
        'subprocess.check_output(f"sha256sum {UPLOAD_ROOT}/{name}", shell=True, text=True)',
        'subprocess.check_output(["sha256sum", "--", f"{UPLOAD_ROOT}/{name}"], text=True)')
    path, ledger_path = f"{pkg}/verify.py", f"{pkg}/ledger.py"
    tests = fill('''
        import ${pkg}.ledger as ledger
        import ${pkg}.verify as verify

        verify.UPLOAD_ROOT = ROOT + "/data/uploads"


        def probe_digest(ctx):
            return verify.stored_digest("$first")


        def probe_verify_ok(ctx):
            return verify.verify("$second", "$second_digest".upper())


        def probe_verify_bad(ctx):
            return verify.verify("$first", "$second_digest")


        def probe_store(ctx):
            import os
            verify.UPLOAD_ROOT = "/tmp/uploads"
            ledger._db = None  # a ledger of its own: probes run in any order
            os.makedirs(verify.UPLOAD_ROOT, exist_ok=True)
            try:
                digest = verify.store("new.bin", b"hello")
                return [digest, verify.stored_digest("new.bin"), verify.verify("new.bin", digest), ledger.verified()]
            finally:
                verify.UPLOAD_ROOT = ROOT + "/data/uploads"


        def probe_semicolon(ctx):
            try:
                verify.verify("$first; touch " + ctx["marker"], "00")
            except Exception as error:
                return type(error).__name__
            return "ran"


        def probe_pipe(ctx):
            try:
                verify.stored_digest("nothing || touch " + ctx["marker"])
            except Exception as error:
                return type(error).__name__
            return "ran"
        ''', pkg=pkg, first=names[0], second=names[1], second_digest=digests[names[1]])
    return Program(
        family="command_injection", variant="checksum", domain="upload verification", cwe="CWE-78",
        files={ledger_path: ledger, path: source}, fixed={ledger_path: ledger, path: fixed},
        description="`stored_digest(name)` returns the SHA-256 (hex) of the upload `name` under UPLOAD_ROOT; "
                    "`verify(name, claimed)` compares it with a client's claimed digest. Names come from clients.",
        location=location({path: source}, path, "shell=True"),
        tests=tests,
        probes=[Probe(id="digest", kind="functional", expect=digests[names[0]]),
                Probe(id="verify_ok", kind="functional", expect=True),
                Probe(id="verify_bad", kind="functional", expect=False),
                Probe(id="store", kind="functional", expect=[_HELLO, _HELLO, True, ["new.bin"]]),
                Probe(id="semicolon", kind="exploit", detect=MARKER),
                Probe(id="pipe", kind="exploit", detect=MARKER)],
        fixtures={f"data/uploads/{name}": text for name, text in files.items()}, static_ids=["B602"])


def _archive_list(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg = f"{org}_archives"
    members = sorted(f"{rng.choice(NOUNS)}_{k}.txt" for k in range(rng.randint(2, 4)))
    inbox = fill('''
        """The upload inbox: where uploaded tarballs wait for the import job."""

        import os
        import shutil

        INBOX = "/srv/inbox"
        #: Unpacking needs room for this many times an archive's size.
        HEADROOM = 4


        def path_of(archive: str) -> str:
            return os.path.join(INBOX, archive)


        def names() -> list[str]:
            return sorted(os.listdir(INBOX))


        def has_room(archive: str) -> bool:
            """Whether the inbox's disk can hold the archive unpacked."""
            return shutil.disk_usage(INBOX).free > HEADROOM * os.stat(path_of(archive)).st_size
        ''')
    source = fill('''
        """Lists what an uploaded tarball holds before the import job unpacks it."""

        import os
        import subprocess

        from ${pkg} import inbox


        def members(archive: str) -> list[str]:
            """Names of the members of the tarball ``archive`` in the inbox, sorted."""
            path = inbox.path_of(archive)
            proc = subprocess.Popen("tar -tf " + path, shell=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            out, err = proc.communicate()
            if proc.returncode != 0:
                raise ValueError(f"not a readable archive: {archive}")
            return sorted(line for line in out.decode().splitlines() if line)


        def pending() -> list[dict]:
            """The archives waiting in the inbox, with their sizes in bytes."""
            out = []
            for name in inbox.names():
                if name.endswith((".tar", ".tar.gz", ".tgz")):
                    out.append({"name": name, "bytes": os.stat(inbox.path_of(name)).st_size})
            return out


        def plan(archive: str) -> dict:
            """What the import job will do with an archive: its members, which of them it skips, whether it fits."""
            names = members(archive)
            keep = [name for name in names if name.endswith((".txt", ".csv"))]
            return {"archive": archive, "import": keep, "skip": [name for name in names if name not in keep],
                    "fits": inbox.has_room(archive)}
        ''', pkg=pkg)
    fixed = swap(source,
        'subprocess.Popen("tar -tf " + path, shell=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)',
        'subprocess.Popen(["tar", "-tf", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE)')
    path, inbox_path = f"{pkg}/listing.py", f"{pkg}/inbox.py"
    tests = fill('''
        import io
        import os
        import tarfile

        import ${pkg}.inbox as inbox
        import ${pkg}.listing as listing

        inbox.INBOX = "/tmp/inbox"
        os.makedirs(inbox.INBOX, exist_ok=True)
        with tarfile.open(os.path.join(inbox.INBOX, "batch.tar"), "w") as archive:
            for name in $members:
                data = name.encode()
                info = tarfile.TarInfo(name)
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))


        def probe_list(ctx):
            return listing.members("batch.tar")


        def probe_pending(ctx):
            return [entry["name"] for entry in listing.pending()]


        def probe_plan(ctx):
            return listing.plan("batch.tar")


        def probe_not_archive(ctx):
            try:
                listing.members("missing.tar")
            except ValueError:
                return "refused"
            return "listed"


        def probe_inject(ctx):
            try:
                listing.members("batch.tar; touch " + ctx["marker"])
            except Exception as error:
                return type(error).__name__
            return "ran"


        def probe_newline(ctx):
            try:
                listing.members("batch.tar\\ntouch " + ctx["marker"])
            except Exception as error:
                return type(error).__name__
            return "ran"
        ''', pkg=pkg, members=repr(members))
    return Program(
        family="command_injection", variant="archive_list", domain="file import", cwe="CWE-78",
        files={inbox_path: inbox, path: source}, fixed={inbox_path: inbox, path: fixed},
        description="`members(archive)` returns the sorted member names of a tarball in the inbox, or raises "
                    "ValueError when it cannot be read. Archive names come from the upload form.",
        location=location({path: source}, path, "shell=True"),
        tests=tests,
        probes=[Probe(id="list", kind="functional", expect=members),
                Probe(id="not_archive", kind="functional", expect="refused"),
                Probe(id="pending", kind="functional", expect=["batch.tar"]),
                Probe(id="plan", kind="functional", expect={"archive": "batch.tar", "import": members, "skip": [],
                                                             "fits": True}),
                Probe(id="inject", kind="exploit", detect=MARKER),
                Probe(id="newline", kind="exploit", detect=MARKER)],
        static_ids=["B602"])


_BUILDERS = {"log_search": _log_search, "line_report": _line_report, "checksum": _checksum,
             "archive_list": _archive_list}


def build(rng: random.Random, variant: str) -> Program:
    return _BUILDERS[variant](rng)


FAMILY = Family(name="command_injection", cwe="CWE-78", title="OS command injection",
                variants=("log_search", "line_report", "checksum"), ood_variants=("archive_list",), build=build)
