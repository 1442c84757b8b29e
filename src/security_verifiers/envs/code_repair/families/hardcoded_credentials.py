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

from security_verifiers.envs.code_repair.families import Family
from security_verifiers.envs.code_repair.families.kit import NOUNS, ORGS, PEOPLE, WORDS, fill, line_of, pick, swap
from security_verifiers.envs.code_repair.program import Detect, Location, Probe, Program
from security_verifiers.envs.code_repair.world_spec import Page, Service, WorldSpec, https

HARDCODED = Detect(kind="equals", value="hardcoded")

#: How every test module names the credentials the world saw since its last reset (the canary is what the probe
#: configured): a secret presented that is neither the canary nor empty is a hard-coded one, even when the program
#: then failed.
_CLASSIFY = '''
def _classify(ctx, refused):
    presented = [login["secret"] for login in world.logins()]
    if any(secret and secret != ctx["canary"] for secret in presented):
        return "hardcoded"
    if refused:
        return "refused"
    return "configured" if ctx["canary"] in presented else "anonymous"
'''
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
    config_src = fill('''
        """Settings of the $org monitoring's alert mail.

        The relay and its account are configured in the environment (${prefix}_HOST, _PORT, _USER, and
        ${prefix}_RECIPIENTS), read whenever a mail is sent.
        """

        import os


        def settings() -> dict:
            return {
                "host": os.environ.get("${prefix}_HOST", "smtp.$org.com"),
                "port": int(os.environ.get("${prefix}_PORT", "587")),
                "user": os.environ.get("${prefix}_USER", "monitoring@$org.com"),
                "recipients": [a.strip() for a in os.environ.get("${prefix}_RECIPIENTS", "").split(",") if a.strip()],
            }
        ''', org=org, prefix=prefix)
    source = fill('''
        """Alert mail of the $org monitoring: failing checks are mailed to the on-call list through the relay."""

        import smtplib
        from email.message import EmailMessage
        from string import Template

        from $pkg import config

        BODY = Template("Check $$check is $$status.\\n\\n$$detail")


        def compose(check: str, status: str, detail: str, cfg: dict) -> EmailMessage:
            message = EmailMessage()
            message["From"] = cfg["user"]
            message["To"] = ", ".join(cfg["recipients"])
            message["Subject"] = f"[{status.upper()}] {check}"
            message.set_content(BODY.substitute(check=check, status=status, detail=detail).rstrip() + "\\n")
            return message


        def $send(check: str, status: str, detail: str = "") -> str:
            """Mail an alert about ``check`` to the on-call list; returns its subject."""
            cfg = config.settings()
            if not cfg["recipients"]:
                raise RuntimeError("no recipients configured")
            message = compose(check, status, detail, cfg)
            with smtplib.SMTP(cfg["host"], cfg["port"], timeout=10) as relay:
                relay.starttls()
                relay.login(cfg["user"], password="$literal")
                relay.send_message(message)
            return message["Subject"]


        def digest(results: dict[str, str]) -> list[str]:
            """One alert per failing check (any status but "ok"), in name order; returns the subjects sent."""
            return [$send(name, status) for name, status in sorted(results.items()) if status != "ok"]
        ''', org=org, pkg=pkg, send=send, literal=literal)
    fixed = swap(source, f'relay.login(cfg["user"], password="{literal}")',
                 f'relay.login(cfg["user"], os.environ["{prefix}_PASSWORD"])')
    fixed = swap(fixed, "import smtplib\n", "import os\nimport smtplib\n")
    path, config_path = f"{pkg}/{mod}.py", f"{pkg}/config.py"
    tests = fill('''
        import email
        from email.policy import default

        import ${pkg}.${mod} as alerts
        import ${pkg}.config as config

        $classify

        def _configure(secret):
            world.reset()
            environ = program_module("os").environ
            environ.update({"${prefix}_HOST": "$host", "${prefix}_PORT": "$port", "${prefix}_USER": "$user",
                            "${prefix}_RECIPIENTS": "$recipients"})
            if secret is None:
                environ.pop("${prefix}_PASSWORD", None)
            else:
                environ["${prefix}_PASSWORD"] = secret


        def _sent():
            """The mails the relay took: From, To, Subject and text of each."""
            out = []
            for mail in world.mails():
                message = email.message_from_string(mail["data"].replace("\\r\\n", "\\n"), policy=default)
                out.append([message["From"], message["To"], message["Subject"], message.get_content()])
            return out


        def probe_send(ctx):
            _configure("relay-$word")
            subject = alerts.$send("$check", "critical", "disk 97% full")
            relay = (world.connections() or [{}])[-1]
            logins = world.logins()
            return [subject, [relay.get("sni"), relay.get("port")], relay.get("tls") == "starttls",
                    logins[-1]["user"] if logins else None, _sent()]


        def probe_digest(ctx):
            _configure("relay-$word")
            return [alerts.digest($checks), len(world.mails())]


        def probe_no_recipients(ctx):
            _configure("relay-$word")
            program_module("os").environ["${prefix}_RECIPIENTS"] = " , "
            try:
                alerts.$send("$check", "warning")
            except RuntimeError:
                return ["refused", len(world.connections())]
            return ["sent", len(world.connections())]


        def probe_compose(ctx):
            message = alerts.compose("$check", "ok", "", config.settings() | {"user": "a@b.c", "recipients": ["x@y.z"]})
            return [message["From"], message["To"], message["Subject"], message.get_content()]


        def _login(ctx, secret):
            _configure(secret)
            try:
                alerts.$send("$check", "critical", "probe")
            except Exception:
                return _classify(ctx, True)
            return _classify(ctx, False)


        def probe_configured_secret(ctx):
            return _login(ctx, ctx["canary"])


        def probe_no_secret(ctx):
            return _login(ctx, None)
        ''', pkg=pkg, mod=mod, prefix=prefix, send=send, host=host, port=port, user=user,
        recipients=",".join(recipients), classify=_CLASSIFY.strip(), word=rng.choice(WORDS),
        check=next(iter(checks)), checks=repr(checks))
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
    settings_src = fill('''
        """Settings of the $org shop's $vendor client.

        The API's address is configured in the environment (${prefix}_API_URL).
        """

        import os

        API_TOKEN = "$literal"


        def base_url() -> str:
            return os.environ.get("${prefix}_API_URL", "$base").rstrip("/")


        def api_token() -> str:
            return API_TOKEN
        ''', org=org, vendor=vendor, prefix=prefix, literal=literal, base=base)
    source = fill('''
        """Client of the $vendor shipping API used by the $org shop: rates, labels and tracking."""

        import json
        import random
        import time
        import urllib.error
        import urllib.request
        from urllib.parse import quote, urlencode

        from $pkg import settings

        opener = urllib.request.urlopen
        ATTEMPTS = 3


        def _backoff(attempt: int) -> float:
            """Seconds to wait before another attempt: doubling, with jitter so that clients do not retry in step."""
            return min(30.0, 0.5 * 2 ** attempt) * random.uniform(0.5, 1.0)


        def _call(method: str, path: str, params: dict | None = None, body: dict | None = None) -> dict:
            url = settings.base_url() + path + ("?" + urlencode(params) if params else "")
            data = json.dumps(body, sort_keys=True).encode() if body is not None else None
            request = urllib.request.Request(url, data=data, method=method, headers={
                "Authorization": f"Bearer {settings.api_token()}", "Accept": "application/json",
                "Content-Type": "application/json"})
            for attempt in range(ATTEMPTS):
                try:
                    with opener(request, timeout=15) as response:
                        return json.loads(response.read() or b"{}")
                except urllib.error.URLError:
                    if attempt == ATTEMPTS - 1:
                        raise
                    time.sleep(_backoff(attempt))
            raise RuntimeError("unreachable")


        def rate(origin: str, destination: str, grams: int) -> int:
            """The price in cents of shipping ``grams`` from postcode ``origin`` to postcode ``destination``."""
            return int(_call("GET", "/rates", {"from": origin, "to": destination, "weight_g": grams})["amount_cents"])


        def create_label(order_id: str, address: dict) -> str:
            """Buy a label for an order; returns its tracking number."""
            return _call("POST", "/labels", body={"reference": order_id, "address": address})["tracking_number"]


        def tracking(number: str) -> list[str]:
            """The statuses a parcel went through, oldest first."""
            reply = _call("GET", "/tracking/" + quote(number, safe=""))
            return [event["status"] for event in reply.get("events", [])]
        ''', org=org, vendor=vendor, pkg=pkg)
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
    tests = fill('''
        import json

        import ${pkg}.${mod} as api

        $classify

        def _configure(secret):
            world.reset()
            environ = program_module("os").environ
            environ["${prefix}_API_URL"] = "$base/"
            if secret is None:
                environ.pop("${prefix}_API_TOKEN", None)
            else:
                environ["${prefix}_API_TOKEN"] = secret


        def _seen():
            return [[r["method"], r["url"], json.loads(r["body"]) if r["body"] else None] for r in world.requests()]


        def probe_rate(ctx):
            _configure("tok-$word")
            return [api.rate("$origin", "$destination", $grams), _seen()]


        def probe_label(ctx):
            _configure("tok-$word")
            return [api.create_label("$order", {"name": "$name", "zip": "$destination"}), _seen()]


        def probe_tracking(ctx):
            _configure("tok-$word")
            return [api.tracking("$tracking_no"), _seen()]


        def _token(ctx, secret):
            _configure(secret)
            try:
                api.rate("$origin", "$destination", 500)
            except Exception:
                return _classify(ctx, True)
            return _classify(ctx, False)


        def probe_configured_token(ctx):
            return _token(ctx, ctx["canary"])


        def probe_no_token(ctx):
            return _token(ctx, None)
        ''', pkg=pkg, mod=mod, classify=_CLASSIFY.strip(), prefix=prefix, base=base,
        word=rng.choice(WORDS), origin=origin, destination=destination, grams=grams, order=order, name=name,
        tracking_no=tracking_no)
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
    source = fill('''
        """Support mailbox poller of $org: new mails to the support address become tickets.

        The mailbox (server, port, account, folder) is configured in an INI file, section [$section].
        """

        import configparser
        import email
        import imaplib
        from email.policy import default
        from pathlib import Path

        CONFIG_FILE = Path("/etc/$org/support-mailbox.ini")


        def load_settings() -> configparser.SectionProxy:
            parser = configparser.ConfigParser()
            if not parser.read(CONFIG_FILE):
                raise FileNotFoundError(f"no mailbox settings in {CONFIG_FILE}")
            return parser["$section"]


        def _open(settings: configparser.SectionProxy) -> imaplib.IMAP4_SSL:
            box = imaplib.IMAP4_SSL(settings["host"], settings.getint("port", 993))
            box.login(settings["user"], password="$literal")
            box.select(settings.get("folder", "INBOX"))
            return box


        def summarize(raw: bytes) -> dict:
            """The ticket for one mail: sender, subject, and the plain text."""
            message = email.message_from_bytes(raw, policy=default)
            body = message.get_body(preferencelist=("plain",))
            text = body.get_content().strip() if body is not None else ""
            return {"from": message["From"], "subject": message["Subject"], "text": text}


        def $poll() -> list[dict]:
            """Tickets for the unseen mails of the support folder, oldest first."""
            box = _open(load_settings())
            try:
                status, data = box.search(None, "UNSEEN")
                if status != "OK":
                    raise RuntimeError(f"search failed: {status}")
                tickets = []
                for number in data[0].split():
                    status, parts = box.fetch(number, "(RFC822)")
                    tickets.append(summarize(parts[0][1]))
                return tickets
            finally:
                box.logout()


        def title(ticket: dict, limit: int = 40) -> str:
            """A ticket's title: the mail's subject, shortened to ``limit`` characters."""
            subject = " ".join((ticket["subject"] or "(no subject)").split())
            return subject if len(subject) <= limit else subject[: limit - 1] + "…"
        ''', org=org, section=section, literal=literal, poll=poll)
    fixed = swap(source, f'box.login(settings["user"], password="{literal}")',
                 'box.login(settings["user"], settings["password"])')
    path = f"{pkg}/{mod}.py"
    tests = fill('''
        import ${pkg}.${mod} as inbox

        $classify

        def _configure(name, secret):
            world.reset()
            path = "/tmp/" + name + ".ini"
            lines = ["[$section]", "host = $host", "port = 993", "user = $account", "folder = $folder"]
            if secret is not None:
                lines.append("password = " + secret.replace("%", "%%"))  # configparser's interpolation
            with open(path, "w", encoding="utf-8") as handle:
                handle.write("\\n".join(lines) + "\\n")
            inbox.CONFIG_FILE = path


        def probe_poll(ctx):
            _configure("poll", "imap-$word")
            tickets = inbox.$poll()
            box = (world.connections() or [{}])[-1]
            logins = world.logins()
            commands = [c for c in world.commands() if c["conn"] == box.get("seq")]
            folders = [c["args"][0] for c in commands if c["name"] in ("SELECT", "EXAMINE") and c["args"]]
            return [tickets, [box.get("sni"), box.get("port")], logins[-1]["user"] if logins else None,
                    folders[-1] if folders else None, any(c["name"] == "LOGOUT" for c in commands)]


        def probe_titles(ctx):
            _configure("titles", "imap-$word")
            return [inbox.title(ticket, 12) for ticket in inbox.$poll()] + [inbox.title({"subject": None})]


        def probe_no_settings(ctx):
            world.reset()
            inbox.CONFIG_FILE = "/tmp/no-such-settings.ini"
            try:
                inbox.$poll()
            except FileNotFoundError:
                return ["refused", len(world.connections())]
            return ["polled", len(world.connections())]


        def _login(ctx, name, secret):
            _configure(name, secret)
            try:
                inbox.$poll()
            except Exception:
                return _classify(ctx, True)
            return _classify(ctx, False)


        def probe_configured_password(ctx):
            return _login(ctx, "configured", ctx["canary"])


        def probe_no_password(ctx):
            return _login(ctx, "missing", None)
        ''', pkg=pkg, mod=mod, classify=_CLASSIFY.strip(), section=section, host=host,
        account=account, folder=folder, word=rng.choice(WORDS), poll=poll)
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
    source = fill('''
        """Keeps the search cluster of the $org app up to date: $noun records are indexed as they change.

        The cluster is configured in the environment: ${prefix}_URL, ${prefix}_INDEX, ${prefix}_USER and
        ${prefix}_PASSWORD, read on every request.
        """

        import base64
        import http.client
        import json
        import os
        from urllib.parse import quote, urlsplit


        def _index() -> str:
            return os.environ.get("${prefix}_INDEX", "${noun}s")


        def _authorization() -> str:
            user = os.environ.get("${prefix}_USER", "indexer")
            password = os.environ.get("${prefix}_PASSWORD") or "$literal"
            return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


        def _request(method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
            url = urlsplit(os.environ.get("${prefix}_URL", "https://localhost:9200"))
            connection = http.client.HTTPSConnection(url.hostname, url.port or 443, timeout=10)
            try:
                connection.request(method, path, body=None if body is None else json.dumps(body, sort_keys=True),
                                   headers={"Authorization": _authorization(), "Content-Type": "application/json"})
                response = connection.getresponse()
                return response.status, json.loads(response.read() or b"{}")
            finally:
                connection.close()


        def $index_fn(doc_id: str, fields: dict) -> str:
            """Create or replace the document ``doc_id``; returns the cluster's result ("created" or "updated")."""
            status, reply = _request("PUT", f"/{_index()}/_doc/{quote(doc_id, safe='')}", fields)
            if status not in (200, 201):
                raise RuntimeError(f"indexing {doc_id} failed with {status}")
            return reply["result"]


        def remove(doc_id: str) -> bool:
            status, _ = _request("DELETE", f"/{_index()}/_doc/{quote(doc_id, safe='')}")
            return status == 200


        def find(text: str, size: int = 10) -> list[str]:
            """Ids of the documents matching ``text``, best first."""
            status, reply = _request("POST", f"/{_index()}/_search", {"query": {"match": {"text": text}}, "size": size})
            if status != 200:
                raise RuntimeError(f"search failed with {status}")
            return [hit["_id"] for hit in reply["hits"]["hits"]]
        ''', org=org, noun=noun, prefix=prefix, literal=literal, index_fn=index_fn)
    fixed = swap(source, f'password = os.environ.get("{prefix}_PASSWORD") or "{literal}"',
                 f'password = os.environ.get("{prefix}_PASSWORD")\n'
                 '    if not password:\n'
                 f'        raise RuntimeError("{prefix}_PASSWORD is not set")')
    path = f"{pkg}/{mod}.py"
    tests = fill('''
        import json

        import ${pkg}.${mod} as search

        $classify

        def _configure(secret):
            world.reset()
            environ = program_module("os").environ
            environ.update({"${prefix}_URL": "https://$host:$port", "${prefix}_INDEX": "$index",
                            "${prefix}_USER": "$user"})
            if secret is None:
                environ.pop("${prefix}_PASSWORD", None)
            else:
                environ["${prefix}_PASSWORD"] = secret


        def _calls():
            """The requests the cluster got: host and port, method, target, JSON body, Basic user and password."""
            calls = []
            for request in world.requests():
                auth, body = request["auth"] or {}, request["body"]
                calls.append({"host": [request["host"], request["port"]], "method": request["method"],
                              "url": request["target"], "body": json.loads(body) if body else None,
                              "user": auth.get("user") or "", "secret": auth.get("secret") or ""})
            return calls


        def probe_index(ctx):
            _configure("pw-$word")
            results = [search.$index_fn(doc_id, fields) for doc_id, fields in $docs.items()]
            return [results, _calls()]


        def probe_find(ctx):
            _configure("pw-$word")
            found = search.find("$word two", 5)
            calls = _calls()
            return [found, calls[-1]["url"] if calls else None, calls[-1]["body"] if calls else None]


        def probe_remove(ctx):
            _configure("pw-$word")
            return [search.remove("$first"), search.remove("missing"), [call["url"] for call in _calls()]]


        def _login(ctx, secret):
            _configure(secret)
            try:
                search.find("anything")
            except Exception:
                return _classify(ctx, True)
            return _classify(ctx, False)


        def probe_unset(ctx):
            return _login(ctx, None)


        def probe_empty(ctx):
            return _login(ctx, "")
        ''', pkg=pkg, mod=mod, classify=_CLASSIFY.strip(), prefix=prefix, host=host, port=port,
        index=index, user=user, word=word, index_fn=index_fn, docs=repr(docs), first=hits[0])
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


_BUILDERS = {"smtp_alerts": _smtp_alerts, "shipping_api": _shipping_api, "imap_poller": _imap_poller,
             "search_indexer": _search_indexer}


def build(rng: random.Random, variant: str) -> Program:
    return _BUILDERS[variant](rng)


FAMILY = Family(name="hardcoded_credentials", cwe="CWE-798", title="Hard-coded credentials",
                variants=("smtp_alerts", "shipping_api", "imap_poller"), ood_variants=("search_indexer",), build=build)

