"""CWE-798, hard-coded credentials: a client logs in to a service with a password or token written in its source,
although the program is configured from the environment or a settings file.

Every program reaches its service through a stdlib client (``smtplib``, ``imaplib``, ``urllib``, ``http.client``)
for real: the service (an SMTP relay with STARTTLS, an IMAP mailbox over TLS, an HTTPS API, a search cluster) is
served by the judge in the program's world (``world_spec.py``, ``judge/world.py``), which records the credentials
presented (SMTP AUTH, IMAP LOGIN, HTTP Authorization) and what was sent. Variants:

- ``smtp_alerts``: alert mail through ``smtplib``; relay, account and recipients come from the environment, the
  password is a literal argument of ``login`` (bandit B106);
- ``shipping_api``: a REST client whose base URL comes from the environment and whose bearer token is a module
  constant (bandit B105);
- ``imap_poller``: a support-mailbox poller configured by an INI file, with the password a literal (B106);
- ``search_indexer`` (OOD): the password *is* read from the environment, but a literal stands in when it is
  missing or empty (``os.environ.get(...) or "..."``, which bandit does not flag).

The exploit probes classify the credentials the service saw: ``"hardcoded"`` when any secret presented is neither
the run's canary (which the probe configured) nor empty (the literal, or another one a patch put in its place);
else ``"refused"`` when the program raised, ``"configured"`` when it presented the canary, ``"anonymous"`` when it
presented nothing. The in-distribution programs are exploited when the secret
is configured (it is ignored) and when it is not (the literal is used); the OOD one in the two fallback cases.
The reference fixes read the configured secret and fail when there is none.
"""

from __future__ import annotations

import json
import random
import string

from security_verifiers.envs.code_repair.families import Variants
from security_verifiers.envs.code_repair.families.kit import NOUNS, ORGS, PEOPLE, WORDS, Templates, line_of, pick, swap
from security_verifiers.envs.code_repair.program import Detect, Location, Probe, Program
from security_verifiers.envs.code_repair.world_spec import Page, Service, WorldSpec, https

TEMPLATES = Templates(__name__)
VARIANTS = Variants()

HARDCODED = Detect(kind="equals", value="hardcoded")

#: How every test module names the credentials the world saw since its last reset (the canary is what the probe
#: configured): a secret presented that is neither the canary nor empty is a hard-coded one, even when the program
#: then failed.
_CLASSIFY = TEMPLATES.render("shared/classify.py")
#: Addresses of the services (the company's own, in private networks).
_SERVICE_IPS = ("10.0.4.12", "10.8.1.25", "172.18.0.7", "192.168.40.3")


def _password(rng: random.Random) -> str:
    tail = rng.choice(string.ascii_lowercase)
    return f"{rng.choice(WORDS).title()}{rng.choice('!#%*+')}{rng.randint(2015, 2025)}{tail}"


def _hex(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def _at(source: str, path: str, needle: str, extra: int = 0) -> Location:
    start = line_of(source, needle)
    return Location(file=path, start=start, end=start + extra)


@VARIANTS.add()
def _smtp_alerts(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    prefix = rng.choice(("ALERTS", "MONITOR", "PAGER")) + "_SMTP"
    pkg, mod = f"{org}_monitoring", rng.choice(("alerts", "mailer", "notify"))
    send = rng.choice(("send_alert", "mail_alert", "notify"))
    literal = _password(rng)
    user = f"{rng.choice(('monitoring', 'alerts', 'noc'))}@{org}.com"
    recipients = [f"{name}@{org}.com" for name in pick(rng, PEOPLE, 2)]
    host, port = f"relay{rng.randint(1, 4)}.{org}.com", rng.choice((25, 587, 2525))
    checks = {f"{rng.choice(WORDS)}-{kind}": status for kind, status in
              zip(("api", "db", "queue"), ("ok", rng.choice(("critical", "warning")), "critical"), strict=True)}
    config_src = TEMPLATES.render("smtp_alerts/config_src.py", org=org, prefix=prefix)
    source = TEMPLATES.render("smtp_alerts/source.py", org=org, pkg=pkg, send=send, literal=literal)
    fixed = swap(source, f'relay.login(cfg["user"], password="{literal}")',
                 f'relay.login(cfg["user"], os.environ["{prefix}_PASSWORD"])')
    fixed = swap(fixed, "import smtplib\n", "import os\nimport smtplib\n")
    path, config_path = f"{pkg}/{mod}.py", f"{pkg}/config.py"
    tests = TEMPLATES.render("smtp_alerts/tests.py", pkg=pkg, mod=mod, prefix=prefix, send=send, host=host, port=port,
                             user=user, recipients=",".join(recipients), classify=_CLASSIFY.strip(),
                             word=rng.choice(WORDS), check=next(iter(checks)), checks=repr(checks))
    check = next(iter(checks))
    failing = sorted(name for name, status in checks.items() if status != "ok")
    world = WorldSpec(hosts={host: [rng.choice(_SERVICE_IPS)]},
                      services=[Service(kind="smtp", port=port, tls="starttls")]).as_json()
    return Program(
        family="hardcoded_credentials", variant="smtp_alerts", domain="alert mail", cwe="CWE-798",
        files={config_path: config_src, path: source}, fixed={config_path: config_src, path: fixed},
        description=f"`{send}(check, status, detail)` mails an alert to the on-call list through the SMTP relay, "
                    f"logged in with the account configured in the environment ({prefix}_USER and "
                    f"{prefix}_PASSWORD, like the relay's {prefix}_HOST and _PORT), read when the mail is sent.",
        location=_at(source, path, "relay.login("),
        tests=tests,
        probes=[Probe(id="send", kind="functional", expect=[
                    f"[CRITICAL] {check}", [host, port], True, user,
                    [[user, ", ".join(recipients), f"[CRITICAL] {check}",
                      f"Check {check} is critical.\n\ndisk 97% full\n"]]]),
                Probe(id="digest", kind="functional", expect=[
                    [f"[{checks[name].upper()}] {name}" for name in failing], len(failing)]),
                Probe(id="no_recipients", kind="functional", expect=["refused", 0]),
                Probe(id="compose", kind="functional", expect=["a@b.c", "x@y.z", f"[OK] {check}",
                                                               f"Check {check} is ok.\n"]),
                Probe(id="configured_secret", kind="exploit", detect=HARDCODED),
                Probe(id="no_secret", kind="exploit", detect=HARDCODED)],
        static_ids=["B106"], world=world)


@VARIANTS.add()
def _shipping_api(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    vendor = rng.choice(("shipfast", "parcelly", "boxroute", "sendwise"))
    prefix = vendor.upper()
    pkg, mod = f"{org}_shop", rng.choice(("shipping", "carrier", f"{vendor}_client"))
    literal = rng.choice(("sk_live_", "tok_", "")) + _hex(rng, 32)
    base = f"https://api.{vendor}.com/v{rng.randint(1, 3)}"
    cents, tracking_no = rng.randint(450, 4900), f"{vendor[:2].upper()}{rng.randint(10**9, 10**10 - 1)}"
    events = ["label_created", "picked_up", rng.choice(("in_transit", "at_depot")), "delivered"]
    order = f"{rng.choice(NOUNS)[:3].upper()}-{rng.randint(1000, 9999)}"
    origin, destination = f"{rng.randint(10000, 99999)}", f"{rng.randint(10000, 99999)}"
    grams, name = rng.randint(200, 20000), rng.choice(PEOPLE).title()
    settings_src = TEMPLATES.render("shipping_api/settings_src.py", org=org, vendor=vendor, prefix=prefix,
                                    literal=literal, base=base)
    source = TEMPLATES.render("shipping_api/source.py", org=org, vendor=vendor, pkg=pkg)
    fixed = swap(settings_src, f'\nAPI_TOKEN = "{literal}"\n', "")
    fixed = swap(fixed, """
        def api_token() -> str:
            return API_TOKEN
        """, f"""
        def api_token() -> str:
            token = os.environ.get("{prefix}_API_TOKEN", "")
            if not token:
                raise RuntimeError("{prefix}_API_TOKEN is not set")
            return token
        """)
    path, settings_path = f"{pkg}/{mod}.py", f"{pkg}/settings.py"
    replies = {"/rates": {"amount_cents": cents, "currency": "EUR"}, "/labels": {"tracking_number": tracking_no},
               "/tracking/": {"events": [{"status": e} for e in events]}}
    tests = TEMPLATES.render("shipping_api/tests.py", pkg=pkg, mod=mod, classify=_CLASSIFY.strip(), prefix=prefix,
                             base=base, word=rng.choice(WORDS), origin=origin, destination=destination, grams=grams,
                             order=order, name=name, tracking_no=tracking_no)
    rate_url = f"{base}/rates?from={origin}&to={destination}&weight_g={grams}"
    api_host, api_path = base.split("/")[2], "/" + base.split("/", 3)[3]
    methods = {"/rates": "GET", "/labels": "POST", "/tracking/": "GET"}
    pages = {f"{methods[key]} {api_path}{key}{'*' if key.endswith('/') else ''}":
             Page(content_type="application/json", body=json.dumps(reply)) for key, reply in replies.items()}
    world = WorldSpec(hosts={api_host: [rng.choice(("104.18.12.33", "151.101.2.132", "34.117.59.81"))]},
                      services=[https()], sites={api_host: pages}).as_json()
    return Program(
        family="hardcoded_credentials", variant="shipping_api", domain="shipping API client", cwe="CWE-798",
        files={settings_path: settings_src, path: source}, fixed={settings_path: fixed, path: source},
        description=f"A client of the {vendor} shipping API (`rate`, `create_label`, `tracking`); every call goes to "
                    f"the address in {prefix}_API_URL with the shop's bearer token from {prefix}_API_TOKEN, both read "
                    "from the environment at call time. HTTP goes through the module's `opener`.",
        location=_at(settings_src, settings_path, "API_TOKEN = "),
        tests=tests,
        probes=[Probe(id="rate", kind="functional", expect=[cents, [["GET", rate_url, None]]]),
                Probe(id="label", kind="functional", expect=[tracking_no, [[
                    "POST", f"{base}/labels", {"address": {"name": name, "zip": destination}, "reference": order}]]]),
                Probe(id="tracking", kind="functional", expect=[events, [["GET", f"{base}/tracking/{tracking_no}",
                                                                          None]]]),
                Probe(id="configured_token", kind="exploit", detect=HARDCODED),
                Probe(id="no_token", kind="exploit", detect=HARDCODED)],
        static_ids=["B105"], world=world)


def _mail(sender: str, subject: str, text: str) -> str:
    return (f"From: {sender}\r\nTo: support@example.com\r\nSubject: {subject}\r\nMIME-Version: 1.0\r\n"
            f"Content-Type: text/plain; charset=utf-8\r\n\r\n{text}\r\n")


@VARIANTS.add()
def _imap_poller(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg, mod = f"{org}_support", rng.choice(("inbox", "mail_intake", "poller"))
    poll = rng.choice(("poll", "fetch_new", "collect"))
    literal = _password(rng)
    section = rng.choice(("mailbox", "imap", "support_mail"))
    host, account = f"imap.{org}.com", f"support@{org}.com"
    folder = rng.choice(("INBOX", "INBOX/Support", "Tickets"))
    people = pick(rng, PEOPLE, 3)
    mails = [_mail(f"{p.title()} <{p}@{rng.choice(ORGS)}.example>", f"{rng.choice(NOUNS).title()} "
                   f"{rng.choice(('missing', 'wrong', 'late'))}", f"Hello,\r\nmy {rng.choice(NOUNS)} is "
                   f"{rng.choice(WORDS)}.\r\nThanks") for p in people]
    source = TEMPLATES.render("imap_poller/source.py", org=org, section=section, literal=literal, poll=poll)
    fixed = swap(source, f'box.login(settings["user"], password="{literal}")',
                 'box.login(settings["user"], settings["password"])')
    path = f"{pkg}/{mod}.py"
    tests = TEMPLATES.render("imap_poller/tests.py", pkg=pkg, mod=mod, classify=_CLASSIFY.strip(), section=section,
                             host=host, account=account, folder=folder, word=rng.choice(WORDS), poll=poll)
    tickets = []
    for raw in mails:
        head, _, text = raw.partition("\r\n\r\n")
        fields = dict(line.split(": ", 1) for line in head.split("\r\n"))
        tickets.append({"from": fields["From"], "subject": fields["Subject"],
                        "text": text.strip()})
    titles = [t["subject"] if len(t["subject"]) <= 12 else t["subject"][:11] + "…" for t in tickets]
    world = WorldSpec(hosts={host: [rng.choice(_SERVICE_IPS)]}, services=[Service(kind="imap", port=993,
                      tls="implicit")], mailboxes={folder: mails}).as_json()
    return Program(
        family="hardcoded_credentials", variant="imap_poller", domain="support mailbox", cwe="CWE-798",
        files={path: source}, fixed={path: fixed},
        description=f"`{poll}()` logs in to the support mailbox and returns a ticket (sender, subject, text) per "
                    f"unseen mail. The mailbox's host, port, user, password and folder are the settings of section "
                    f"[{section}] of CONFIG_FILE.",
        location=_at(source, path, "box.login("),
        tests=tests,
        probes=[Probe(id="poll", kind="functional", expect=[tickets, [host, 993], account, folder, True]),
                Probe(id="titles", kind="functional", expect=titles + ["(no subject)"]),
                Probe(id="no_settings", kind="functional", expect=["refused", 0]),
                Probe(id="configured_password", kind="exploit", detect=HARDCODED),
                Probe(id="no_password", kind="exploit", detect=HARDCODED)],
        static_ids=["B106"], world=world)


@VARIANTS.add(ood=True)
def _search_indexer(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    noun = rng.choice(NOUNS)
    prefix = rng.choice(("SEARCH", "ES", "OPENSEARCH"))
    pkg, mod = f"{org}_search", rng.choice(("indexer", "sync", "search_client"))
    literal = _password(rng)
    index_fn = rng.choice(("index", "upsert", "put_document"))
    host, port = f"search.internal.{org}.net", rng.choice((9200, 9243, 443))
    user = rng.choice(("indexer", "app-writer", f"{org}-sync"))
    docs = {f"{noun}-{number}": {"title": f"{rng.choice(WORDS).title()} {noun}",
                                 "text": f"{rng.choice(WORDS)} {rng.choice(WORDS)}"}
            for number in rng.sample(range(100, 999), 2)}
    hits = list(docs)
    index, word = f"{noun}s-v{rng.randint(1, 4)}", rng.choice(WORDS)
    source = TEMPLATES.render("search_indexer/source.py", org=org, noun=noun, prefix=prefix, literal=literal,
                              index_fn=index_fn)
    fixed = swap(source, f'password = os.environ.get("{prefix}_PASSWORD") or "{literal}"',
                 f'password = os.environ.get("{prefix}_PASSWORD")\n'
                 '    if not password:\n'
                 f'        raise RuntimeError("{prefix}_PASSWORD is not set")')
    path = f"{pkg}/{mod}.py"
    tests = TEMPLATES.render("search_indexer/tests.py", pkg=pkg, mod=mod, classify=_CLASSIFY.strip(), prefix=prefix,
                             host=host, port=port, index=index, user=user, word=word, index_fn=index_fn,
                             docs=repr(docs), first=hits[0])
    calls = [{"host": [host, port], "method": "PUT", "url": f"/{index}/_doc/{doc_id}", "body": fields, "user": user,
              "secret": f"pw-{word}"} for doc_id, fields in docs.items()]
    json_page = {"content_type": "application/json"}
    world = WorldSpec(hosts={host: [rng.choice(_SERVICE_IPS)]}, services=[https(port)], sites={host: {
        f"PUT /{index}/_doc/*": Page(status=201, body=json.dumps({"result": "created"}), **json_page),
        f"DELETE /{index}/_doc/missing": Page(status=404, body="{}", **json_page),
        f"DELETE /{index}/_doc/*": Page(body="{}", **json_page),
        f"POST /{index}/_search": Page(body=json.dumps({"hits": {"hits": [{"_id": i} for i in hits]}}), **json_page),
    }}).as_json()
    return Program(
        family="hardcoded_credentials", variant="search_indexer", domain="search indexing", cwe="CWE-798",
        files={path: source}, fixed={path: fixed},
        description=f"`{index_fn}`, `remove` and `find` keep the app's search index up to date, authenticating to the "
                    f"cluster with the user and password configured in {prefix}_USER and {prefix}_PASSWORD (with "
                    f"{prefix}_URL and {prefix}_INDEX), read from the environment on every request.",
        location=_at(source, path, f'password = os.environ.get("{prefix}_PASSWORD") or'),
        tests=tests,
        probes=[Probe(id="index", kind="functional", expect=[["created", "created"], calls]),
                Probe(id="find", kind="functional", expect=[hits, f"/{index}/_search",
                                                            {"query": {"match": {"text": f"{word} two"}}, "size": 5}]),
                Probe(id="remove", kind="functional", expect=[True, False, [f"/{index}/_doc/{hits[0]}",
                                                                            f"/{index}/_doc/missing"]]),
                Probe(id="unset", kind="exploit", detect=HARDCODED),
                Probe(id="empty", kind="exploit", detect=HARDCODED)],
        world=world)


FAMILY = VARIANTS.family(name="hardcoded_credentials", cwe="CWE-798", title="Hard-coded credentials")

