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

from security_verifiers.envs.code_repair.families import Variants
from security_verifiers.envs.code_repair.families.kit import NOUNS, ORGS, WORDS, Templates, location, pick, swap
from security_verifiers.envs.code_repair.program import Detect, Probe, Program

TEMPLATES = Templates(__name__)
VARIANTS = Variants()

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


@VARIANTS.add()
def _log_search(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg = f"{org}_logs"
    fn = rng.choice(("count_matches", "count_lines_with", "occurrences"))
    term, other = pick(rng, ("timeout", "refused", "denied", "overflow", "retry", "expired"), 2)
    app_log, app_hits = _log_lines(rng, term, rng.randint(12, 30))
    auth_log, auth_hits = _log_lines(rng, other, rng.randint(8, 20))
    source = TEMPLATES.render("log_search/source.py", upper=org.upper(), org=org, fn=fn)
    fixed = swap(source,
        "subprocess.run(f\"grep -c -F -- '{term}' {path}\", shell=True, capture_output=True, text=True)",
        'subprocess.run(["grep", "-c", "-F", "--", term, str(path)], capture_output=True, text=True)')
    path = f"{pkg}/search.py"
    tests = TEMPLATES.render("log_search/tests.py", pkg=pkg, fn=fn, term=term, other=other)
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


@VARIANTS.add()
def _line_report(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    noun = rng.choice(NOUNS)
    pkg = f"{noun}_reports"
    counts = {f"{noun}s-{rng.choice(WORDS)}-{k}.csv": rng.randint(3, 25) for k in range(3)}
    names = list(counts)
    source = TEMPLATES.render("line_report/source.py", noun=noun, org=org)
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
    tests = TEMPLATES.render("line_report/tests.py", pkg=pkg, first=names[0], names=repr(names))
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


@VARIANTS.add()
def _checksum(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg = f"{org}_uploads"
    files = {f"{rng.choice(NOUNS)}-{k}.pdf": f"%PDF-1.4 {rng.choice(WORDS)} {rng.random()}\n" for k in range(2)}
    names = list(files)
    digests = {name: hashlib.sha256(text.encode()).hexdigest() for name, text in files.items()}
    ledger = TEMPLATES.render("checksum/ledger.py")
    source = TEMPLATES.render("checksum/source.py", pkg=pkg)
    fixed = swap(source,
        'subprocess.check_output(f"sha256sum {UPLOAD_ROOT}/{name}", shell=True, text=True)',
        'subprocess.check_output(["sha256sum", "--", f"{UPLOAD_ROOT}/{name}"], text=True)')
    path, ledger_path = f"{pkg}/verify.py", f"{pkg}/ledger.py"
    tests = TEMPLATES.render("checksum/tests.py", pkg=pkg, first=names[0], second=names[1],
                             second_digest=digests[names[1]])
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


@VARIANTS.add(ood=True)
def _archive_list(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg = f"{org}_archives"
    members = sorted(f"{rng.choice(NOUNS)}_{k}.txt" for k in range(rng.randint(2, 4)))
    inbox = TEMPLATES.render("archive_list/inbox.py")
    source = TEMPLATES.render("archive_list/source.py", pkg=pkg)
    fixed = swap(source,
        'subprocess.Popen("tar -tf " + path, shell=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)',
        'subprocess.Popen(["tar", "-tf", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE)')
    path, inbox_path = f"{pkg}/listing.py", f"{pkg}/inbox.py"
    tests = TEMPLATES.render("archive_list/tests.py", pkg=pkg, members=repr(members))
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


FAMILY = VARIANTS.family(name="command_injection", cwe="CWE-78", title="OS command injection")
