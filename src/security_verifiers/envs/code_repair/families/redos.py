"""CWE-1333, inefficient regular expression: a validator's pattern backtracks catastrophically on a near miss.

Variants:

- ``slug``: article slugs of a CMS on sqlite, ``^([a-z0-9]+-?)*[a-z0-9]+$``;
- ``email``: a newsletter sign-up, ``^([a-zA-Z0-9]+[._+-]?)*[a-zA-Z0-9]+@...``;
- ``version``: release versions of a plugin registry, ``^v?(\\d+\\.?)*\\d+(-...)?$``;
- ``log_line`` (OOD): a log ingester whose line pattern ends in ``(?P<message>.*?)\\s*$``: polynomial
  (quadratic) rather than exponential backtracking, on a line that even matches in the end.

Each program checks a length cap before the pattern, and the exploit inputs stay under it (30 to 36 characters
for the exponential patterns, under 64 KiB for the quadratic one), so the cap alone is no fix. The exploit probes
run in a child the driver kills after a second (``Detect(kind="hang")``); the vulnerable patterns need far
longer (measured: well over 10 s), the reference fix (an equivalent pattern without nested or overlapping
quantifiers) microseconds. bandit has no test for this.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

from security_verifiers.envs.code_repair.families import Variants
from security_verifiers.envs.code_repair.families.kit import NOUNS, ORGS, PEOPLE, WORDS, Templates, location, pick, swap
from security_verifiers.envs.code_repair.program import Detect, Probe, Program

TEMPLATES = Templates(__name__)
VARIANTS = Variants()

HANG = Detect(kind="hang", seconds=1.0)
_ACCENTED = (("Café", "cafe"), ("Résumé", "resume"), ("Naïve", "naive"), ("Über", "uber"), ("Señor", "senor"))


_ATTEMPT = TEMPLATES.render("shared/attempt.py")


# ---------------------------------------------------------------------------------------------------- slug

@VARIANTS.add()
def _slug(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg = f"{org}_cms"
    valid_fn = rng.choice(("is_valid_slug", "valid_slug", "check_slug"))
    suggest_fn = rng.choice(("suggest_slug", "slugify", "slug_for"))
    accent, plain = rng.choice(_ACCENTED)
    words = pick(rng, WORDS, 3)
    year = rng.randint(2019, 2027)
    title = f"{accent} {words[0].capitalize()}: {words[1]} & {words[2]}, {year}!"
    suggestion = "-".join([plain, *words, str(year)])
    long_slug = "-".join(pick(rng, WORDS, 8))[:60].strip("-")
    samples = [suggestion, long_slug, f"{rng.choice(NOUNS)}s-{year}", "-leading", "trailing-", "double--hyphen",
               "Upper-case", "with space", "ok", "a" * 81]
    verdicts: list[Any] = [True, True, True, False, False, False, False, False, True, False]
    n1, n2 = rng.randint(30, 36), rng.randint(15, 18)
    source = TEMPLATES.render("slug/source.py", org=org, suggest_fn=suggest_fn, valid_fn=valid_fn)
    fixed = swap(source, 'SLUG = re.compile(r"^([a-z0-9]+-?)*[a-z0-9]+$")',
                 'SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")')
    path = f"{pkg}/slugs.py"
    tests = TEMPLATES.render("slug/tests.py", pkg=pkg, attempt=_ATTEMPT, suggest_fn=suggest_fn, valid_fn=valid_fn,
                             title=repr(title), samples=repr(samples), suggestion=suggestion, payload1="a" * n1 + "!",
                             payload2="a1" * n2 + "--x")
    return Program(
        family="redos", variant="slug", domain="CMS article slugs", cwe="CWE-1333",
        files={path: source}, fixed={path: fixed},
        description=f"`{valid_fn}(slug)` tells whether an editor's slug is well formed (words of a-z and 0-9 "
                    f"joined by single hyphens, at most 80 characters); `publish` stores an article under a valid "
                    f"slug and `{suggest_fn}` proposes one from a title.",
        location=location({path: source}, path, "SLUG = re.compile("),
        tests=tests,
        probes=[Probe(id="suggest", kind="functional", expect=suggestion),
                Probe(id="valid", kind="functional", expect=verdicts),
                Probe(id="publish", kind="functional", expect=[title, None]),
                Probe(id="refused", kind="functional", expect="refused"),
                Probe(id="near_miss", kind="exploit", detect=HANG),
                Probe(id="publish_near_miss", kind="exploit", detect=HANG)])


# --------------------------------------------------------------------------------------------------- email

@VARIANTS.add()
def _email(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg = f"{org}_newsletter"
    valid_fn = rng.choice(("is_valid_address", "valid_email", "acceptable_address"))
    signup_fn = rng.choice(("sign_up", "subscribe", "register"))
    person, other = pick(rng, PEOPLE, 2)
    domain = f"{rng.choice(WORDS)}-{rng.choice(('mail', 'post', 'net'))}.example"
    address = f"{person}.{rng.choice(WORDS)}+news@{domain}"
    samples = [address, f"{other}@{org}.co.uk", f"{person}_{rng.randint(1, 99)}@{domain}",
               f"{'-'.join(pick(rng, WORDS, 5))}@{org}.example", f"{person}@{domain}", f"{person}..x@{domain}",
               f".{person}@{domain}", f"{person}@localhost", f"{person}@{domain}.x", "no-at-sign.example",
               f"{person} {other}@{domain}"]
    verdicts: list[Any] = [True, True, True, True, True, False, False, False, False, False, False]
    mixed = f"  {other.capitalize()}@{domain.upper()} "
    n1, n2 = rng.randint(30, 36), rng.randint(30, 34)
    source = TEMPLATES.render("email/source.py", org=org, valid_fn=valid_fn, signup_fn=signup_fn)
    fixed = swap(source, r'ADDRESS = re.compile(r"^([a-zA-Z0-9]+[._+-]?)*[a-zA-Z0-9]+@',
                 r'ADDRESS = re.compile(r"^[a-zA-Z0-9]+(?:[._+-][a-zA-Z0-9]+)*@')
    path = f"{pkg}/signup.py"
    tests = TEMPLATES.render("email/tests.py", pkg=pkg, attempt=_ATTEMPT, valid_fn=valid_fn, signup_fn=signup_fn,
                             samples=repr(samples), mixed=repr(mixed), person=person, payload1="a" * n1 + "@",
                             payload2=f"{person[0]}.{person[1:]}" + "x" * n2 + "@mail")
    normalized = f"{other.capitalize()}@{domain}"
    return Program(
        family="redos", variant="email", domain="newsletter sign-up", cwe="CWE-1333",
        files={path: source}, fixed={path: fixed},
        description=f"`{valid_fn}(address)` tells whether an e-mail address is acceptable (a local part of letters "
                    "and digits with single . _ + - between them, @, a dotted lower-case domain); "
                    f"`{signup_fn}(address)` normalizes and checks a visitor's address and returns a confirmation "
                    "token, which `confirm` redeems once.",
        location=location({path: source}, path, "ADDRESS = re.compile("),
        tests=tests,
        probes=[Probe(id="valid", kind="functional", expect=verdicts),
                Probe(id="flow", kind="functional", expect=[True, True, False, [normalized]]),
                Probe(id="normalize", kind="functional", expect=normalized),
                Probe(id="refused", kind="functional", expect=["please enter a valid e-mail address", [], 0]),
                Probe(id="no_domain", kind="exploit", detect=HANG),
                Probe(id="no_tld", kind="exploit", detect=HANG)])


# ------------------------------------------------------------------------------------------------- version

@VARIANTS.add()
def _version(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg = f"{org}_plugins"
    parse_fn = rng.choice(("parse_version", "version_parts", "split_version"))
    newest_fn = rng.choice(("newest", "latest_release", "pick_latest"))
    major = rng.randint(1, 9)
    releases: list[Any] = [f"{major}.{m}.{p}" for m in range(rng.randint(2, 3)) for p in range(rng.randint(1, 3))]
    top = releases[-1]
    pre = f"{major + 1}.0.0-rc.{rng.randint(1, 4)}"
    candidates: list[Any] = [*releases, f"v{major}.{releases[-1].split('.')[1]}.{int(top.split('.')[2]) + 1}-beta", pre]
    rng.shuffle(candidates)
    plugin = f"{rng.choice(WORDS)}-{rng.choice(NOUNS)}"
    n1, n2 = rng.randint(30, 36), rng.randint(30, 36)
    mirrors = tuple(f"https://{place}.{org}.example/plugins"
                    for place in pick(rng, ("eu", "us", "ap", "dl", "cdn", "mirror", "edge"), rng.randint(2, 4)))
    source = TEMPLATES.render("version/source.py", org=org, parse_fn=parse_fn, newest_fn=newest_fn)
    registry_src = TEMPLATES.render("version/registry_src.py", org=org, pkg=pkg, parse_fn=parse_fn, newest_fn=newest_fn,
                                    mirrors=repr(mirrors))
    fixed = swap(source, r'VERSION = re.compile(r"^v?(\d+\.?)*\d+(-[0-9A-Za-z.]+)?$")',
                 r'VERSION = re.compile(r"^v?\d+(?:\.\d+)*(-[0-9A-Za-z.]+)?$")')
    path, registry_path = f"{pkg}/versions.py", f"{pkg}/registry.py"

    def key(text: str) -> tuple:
        core, _, tag = text.removeprefix("v").partition("-")
        return [int(x) for x in core.split(".")], tag == "", tag

    tests = TEMPLATES.render("version/tests.py", pkg=pkg, parse_fn=parse_fn, newest_fn=newest_fn,
                             candidates=repr(candidates), top=top, pre=pre, plugin=plugin, first=releases[0],
                             payload1="1" * n1 + "!", payload2="v" + "2" * n2 + "-")
    core, _, tag = pre.partition("-")
    ordered: list[Any] = sorted(candidates, key=key)
    return Program(
        family="redos", variant="version", domain="plugin registry", cwe="CWE-1333",
        files={path: source, registry_path: registry_src}, fixed={path: fixed, registry_path: registry_src},
        description=f"`{parse_fn}(text)` splits a release version (digits separated by single dots, an optional "
                    "leading v and -tag) into its numbers and pre-release tag, raising ValueError otherwise; "
                    f"`{newest_fn}` picks the newest of several and `registry.manifest` lists them for clients. "
                    "Authors type "
                    "the versions when they upload a release.",
        location=location({path: source}, path, "VERSION = re.compile("),
        tests=tests,
        probes=[Probe(id="parse", kind="functional",
                      expect=[{"numbers": [int(x) for x in top.split(".")], "pre": None},
                              {"numbers": [int(x) for x in core.split(".")], "pre": tag},
                              {"numbers": [12], "pre": None}, {"numbers": [3, 4, 1], "pre": None}]),
                Probe(id="bad", kind="functional", expect=["ValueError"] * 5),
                Probe(id="newest", kind="functional",
                      expect=[max(releases, key=key), max(candidates, key=key), None]),
                Probe(id="manifest", kind="functional",
                      expect={"plugin": plugin, "versions": ordered, "latest": max(releases, key=key)}),
                Probe(id="upgrades", kind="functional", expect=releases[1:]),
                Probe(id="downloads", kind="functional",
                      expect=[sorted(f"{m}/{plugin}/{top}.zip" for m in mirrors), "ValueError"]),
                Probe(id="appcast", kind="functional", expect=f'<feed plugin="{plugin}">' + "".join(
                    f'<item version="{v}" />' for v in sorted(releases, key=key, reverse=True)) + "</feed>"),
                Probe(id="digits", kind="exploit", detect=HANG),
                Probe(id="empty_tag", kind="exploit", detect=HANG)])


# ------------------------------------------------------------------------------------------ log_line (OOD)

@VARIANTS.add(ood=True)
def _log_line(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg = f"{org}_ingest"
    parse_fn = rng.choice(("parse_line", "record_of", "split_line"))
    ingest_fn = rng.choice(("ingest", "summarize", "load_batch"))
    sources = [f"{rng.choice(WORDS)}.{rng.choice(('api', 'worker', 'db', 'auth'))}" for _ in range(3)]
    levels = ("DEBUG", "INFO", "WARNING", "ERROR")
    records: list[Any] = []
    for k in range(rng.randint(5, 9)):
        ts = f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:{k:02d}:00Z"
        message = " ".join(rng.choice(WORDS + NOUNS) for _ in range(rng.randint(1, 6)))
        records.append({"ts": ts, "level": rng.choice(levels), "source": rng.choice(sources), "message": message})
    lines = [f"{r['ts']} {r['level']}  {r['source']}: {r['message']}" + rng.choice(("", " ", "\t ", "   "))
             for r in records]
    bad = ["no structure here", f"{records[0]['ts']} NOTICE {sources[0]}: unknown level", ""]
    n1, n2 = rng.randint(58_000, 63_000), rng.randint(29_000, 31_500)
    source = TEMPLATES.render("log_line/source.py", org=org, parse_fn=parse_fn)
    batches_src = TEMPLATES.render("log_line/batches_src.py", org=org, pkg=pkg, ingest_fn=ingest_fn, parse_fn=parse_fn)
    fixed = swap(source, r'r"(?P<message>.*?)\s*$")', r'r"(?P<message>(?:.*\S)?)\s*$")')
    path, batches_path = f"{pkg}/lines.py", f"{pkg}/batches.py"
    accepted = [r for r in records if r["level"] in levels]
    summary: dict[str, Any] = {"accepted": len(accepted), "rejected": len(bad),
               "levels": dict(Counter(r["level"] for r in accepted)),
               "sources": dict(Counter(r["source"] for r in accepted))}
    head = f"{records[0]['ts']} INFO {sources[0]}: "
    tests = TEMPLATES.render("log_line/tests.py", pkg=pkg, parse_fn=parse_fn, ingest_fn=ingest_fn, lines=repr(lines),
                             bad=repr(bad), head=head, n1=n1, n2=n2)
    return Program(
        family="redos", variant="log_line", domain="log ingestion", cwe="CWE-1333",
        files={path: source, batches_path: batches_src}, fixed={path: fixed, batches_path: batches_src},
        description=f"`{parse_fn}(line)` returns the fields (ts, level, source, message without trailing blanks) of "
                    "a log line `<time> <LEVEL> <source>: <message>`, or None when the line is malformed or longer "
                    f"than 64 KiB; `{ingest_fn}` counts a batch and `to_json_lines` archives it. Lines come from "
                    "services over the network.",
        location=location({path: source}, path, 'r"(?P<message>', extra_lines=0),
        tests=tests,
        probes=[Probe(id="parse", kind="functional", expect=records[:3]),
                Probe(id="bad", kind="functional", expect=[None, None, None]),
                Probe(id="batch", kind="functional", expect=summary),
                Probe(id="json_lines", kind="functional",
                      expect="".join(json.dumps(r, sort_keys=True) + "\n" for r in records[-2:])),
                Probe(id="first_error", kind="functional",
                      expect=[next((r for r in records if r["level"] == "ERROR"), None), None]),
                Probe(id="spaces", kind="exploit", detect=HANG),
                Probe(id="tabs", kind="exploit", detect=HANG)])


FAMILY = VARIANTS.family(name="redos", cwe="CWE-1333", title="Inefficient regular expression (ReDoS)")
