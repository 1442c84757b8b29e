"""CWE-208, observable timing discrepancy: a secret is compared with what a caller sent by ``==``/``!=``/``in``.

Python's string and bytes equality stops at the first differing byte, so the time a check takes tells an
attacker how much of a guessed signature, key or token is right. Variants:

- ``webhook_signature``: an HMAC-SHA256 webhook signature header checked with ``==`` (or ``!=``);
- ``service_keys``: static per-service keys from a JSON config checked with ``!=`` (or ``==``);
- ``csrf_tokens``: the CSRF token a settings form echoes back checked against the session's with ``==``;
- ``deploy_tokens`` (OOD): a bearer token checked by membership (``in``) in the list of the current and the
  previous token, so that no comparison operator appears at all.

No effect of such a comparison is observable from outside at this scale (CPython compares short strings in
near-constant time, and a spy handed to the program could be laundered or rewired), so the exploit probes are
``Detect(kind="static")``: they are not run; the host checks the patched source with :mod:`..taint` (ast only,
never executed). Each probe's rule names the entry point its attack goes through and the argument that carries
the attacker's value: the check function itself (the signature, the key, the token), or the handler above it (the
item of the headers or the form under its name; the other items are not the attacker's secret and may be
compared freely). From there the value and everything derived from it may reach only ``hmac.compare_digest`` /
``secrets.compare_digest``, hashing, ``len``/``isinstance`` and comparisons with literals, across the program's
own functions and modules; any other comparison or lookup, an unknown call, a store that escapes, or
introspection counts as exploited (see :mod:`..taint` for the rules). The functional probes still run in the
program. The reference fix uses ``hmac.compare_digest``. Bandit knows nothing of this weakness, so no static ids.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import random
import textwrap

from security_verifiers.envs.code_repair.families import Family
from security_verifiers.envs.code_repair.families.kit import NOUNS, ORGS, PEOPLE, WORDS, fill, location, pick, swap
from security_verifiers.envs.code_repair.program import Detect, Probe, Program


def _static(entry: dict[str, object]) -> Detect:
    """An exploit judged on the patched source (:mod:`..taint`): the attacker's value enters at ``entry``."""
    return Detect(kind="static", rule={"check": "secret_compare", "entries": [entry]})  # type: ignore[list-item]


#: The body of an exploit probe in the test module: never run (its rule is checked on the source instead).
_STATIC = "return None  # judged on the patched source (taint.py), not run"

VENDORS = ("paylane", "shipwise", "mailgrid", "ledgerly", "tallybox", "routely", "formhub", "smsbeam")


def _wrong(rng: random.Random, secret: str) -> str:
    """A guess of the same length and alphabet as ``secret`` that is not it (its first half right)."""
    alphabet = sorted(set(secret)) if len(set(secret)) > 1 else ["a", "b"]
    half = len(secret) // 2
    tail = "".join(rng.choice(alphabet) for _ in range(len(secret) - half))
    guess = secret[:half] + tail
    return guess if guess != secret else secret[:half] + "".join("b" if c == "a" else "a" for c in tail)


def _webhook_signature(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    vendor = rng.choice(VENDORS)
    pkg = f"{org}_billing"
    header = f"X-{vendor.capitalize()}-Signature"
    secret = "whsec_" + "".join(rng.choice("0123456789abcdefghijklmnopqrstuvwxyz") for _ in range(24))
    style = rng.choice(("prefixed", "hex", "base64"))
    expr = {"prefixed": '"sha256=" + mac.hexdigest()', "hex": "mac.hexdigest()",
            "base64": "base64.b64encode(mac.digest()).decode()"}[style]
    verify, receive = rng.choice((("verify_signature", "receive"), ("signature_ok", "handle_delivery"),
                                  ("is_authentic", "on_webhook")))
    compare, fixed_compare = rng.choice((
        ("return signature == sign(body)", "return hmac.compare_digest(signature.encode(), sign(body).encode())"),
        ("return sign(body) == signature", "return hmac.compare_digest(sign(body).encode(), signature.encode())"),
        ("expected = sign(body)\nif signature != expected:\n    return False\nreturn True",
         "expected = sign(body)\nif not hmac.compare_digest(signature.encode(), expected.encode()):\n"
         "    return False\nreturn True")))
    kinds = pick(rng, ("invoice.paid", "invoice.failed", "customer.created", "refund.issued", "payout.sent"), 2)
    source = fill('''
        """Signatures of the $vendor webhooks the $org billing service receives.

        $vendor signs every delivery with our shared secret: the $header header holds an HMAC-SHA256 of
        the raw request body.
        """

        ${base64}import hashlib
        import hmac
        import os

        WEBHOOK_SECRET = os.environ.get("${upper}_WEBHOOK_SECRET", "").encode()
        SIGNATURE_HEADER = "$header"


        def sign(body: bytes) -> str:
            """The signature $vendor sends with ``body``."""
            mac = hmac.new(WEBHOOK_SECRET, body, hashlib.sha256)
            return $expr


        def $verify(body: bytes, signature: str) -> bool:
            """Whether ``signature`` is the one our secret gives for ``body``."""
            $compare
        ''', vendor=vendor, org=org, upper=org.upper(), header=header, expr=expr, verify=verify,
        compare=compare.replace("\n", "\n    "), base64="import base64\n" if style == "base64" else "")
    hooks_src = fill('''
        """Receives $vendor webhooks for the $org billing service and queues the events they carry."""

        import json
        from xml.sax.saxutils import quoteattr

        from $pkg import signing

        _queue: list[dict] = []


        def $receive(headers: dict[str, str], body: bytes) -> int:
            """Handle one delivery; returns the HTTP status to answer with (202 once the event is queued)."""
            signature = headers.get(signing.SIGNATURE_HEADER)
            if not signature or not signing.$verify(body, signature):
                return 401
            try:
                event = json.loads(body)
            except ValueError:
                return 400
            if not isinstance(event, dict) or not isinstance(event.get("type"), str):
                return 422
            _queue.append(event)
            return 202


        def drain() -> list[dict]:
            """The queued events, oldest first; the queue is emptied."""
            events = list(_queue)
            _queue.clear()
            return events


        def tally(events: list[dict]) -> dict[str, int]:
            """How many events of each type."""
            counts: dict[str, int] = {}
            for event in events:
                counts[event["type"]] = counts.get(event["type"], 0) + 1
            return counts


        def tally_xml(events: list[dict]) -> str:
            """The tally as the XML the finance dashboard imports."""
            rows = "".join(f"<count type={quoteattr(kind)}>{n}</count>" for kind, n in sorted(tally(events).items()))
            return f"<events>{rows}</events>"
        ''', vendor=vendor, org=org, pkg=pkg, receive=receive, verify=verify)
    fixed = swap(source, compare, fixed_compare)
    path, hooks_path = f"{pkg}/signing.py", f"{pkg}/webhooks.py"

    def signature(body: bytes) -> str:
        mac = hmac.new(secret.encode(), body, hashlib.sha256)
        return {"prefixed": "sha256=" + mac.hexdigest(), "hex": mac.hexdigest(),
                "base64": base64.b64encode(mac.digest()).decode()}[style]

    event = {"id": f"evt_{rng.randint(10**6, 10**7)}", "type": kinds[0], "amount": rng.randint(100, 99999)}
    body = json.dumps(event).encode()
    other = json.dumps({"id": f"evt_{rng.randint(10**6, 10**7)}", "type": kinds[1]}).encode()
    good, good_other = signature(body), signature(other)
    tests = fill('''
        import ${pkg}.signing as signing
        import ${pkg}.webhooks as hooks

        signing.WEBHOOK_SECRET = b"$secret"
        BODY = $body
        OTHER = $other


        def probe_verify_ok(ctx):
            return signing.$verify(BODY, "$good")


        def probe_verify_bad(ctx):
            return [signing.$verify(BODY, "$wrong"), signing.$verify(OTHER, "$good"), signing.$verify(BODY, "")]


        def probe_delivery(ctx):
            hooks.drain()
            statuses = [hooks.$receive({"$header": "$good"}, BODY), hooks.$receive({"$header": "$good_other"}, OTHER)]
            return [statuses, hooks.drain(), hooks.drain()]


        def probe_unsigned(ctx):
            hooks.drain()
            return [hooks.$receive({}, BODY), hooks.$receive({"$header": "$good_other"}, BODY), hooks.drain()]


        def probe_not_json(ctx):
            hooks.drain()
            return [hooks.$receive({"$header": "$sig_text"}, b"not json"), hooks.$receive({"$header": "$sig_list"},
                                                                                           b"[1, 2]")]


        def probe_tally(ctx):
            events = [{"type": "a"}, {"type": "b"}, {"type": "a"}]
            return [hooks.tally(events), hooks.tally_xml(events + [{"type": 'x"<y'}])]


        def probe_guess(ctx):
            $static


        def probe_forged_delivery(ctx):
            $static
        ''', static=_STATIC, pkg=pkg, secret=secret, body=repr(body), other=repr(other), verify=verify,
        receive=receive, header=header, good=good, good_other=good_other, wrong=_wrong(rng, good),
        sig_text=signature(b"not json"), sig_list=signature(b"[1, 2]"))
    return Program(
        family="timing_unsafe_comparison", variant="webhook_signature", domain="webhook receiver", cwe="CWE-208",
        files={path: source, hooks_path: hooks_src}, fixed={path: fixed, hooks_path: hooks_src},
        description=f"`{verify}(body, signature)` says whether a {vendor} webhook's `{header}` value is the "
                    f"HMAC-SHA256 signature of the body under WEBHOOK_SECRET (as `sign` makes it); "
                    f"`{receive}(headers, body)` checks a delivery and queues its event, returning 202, 400, "
                    "401 or 422.",
        location=location({path: source}, path, "signature != expected" if "!=" in compare else compare),
        tests=tests,
        probes=[Probe(id="verify_ok", kind="functional", expect=True),
                Probe(id="verify_bad", kind="functional", expect=[False, False, False]),
                Probe(id="delivery", kind="functional", expect=[[202, 202], [event, json.loads(other)], []]),
                Probe(id="unsigned", kind="functional", expect=[401, 401, []]),
                Probe(id="not_json", kind="functional", expect=[400, 422]),
                Probe(id="tally", kind="functional", expect=[{"a": 2, "b": 1}, '<events><count type="a">2</count>'
                      '<count type="b">1</count><count type=\'x"&lt;y\'>1</count></events>']),
                Probe(id="guess", kind="exploit", detect=_static(
                    {"module": f"{pkg}.signing", "function": verify, "position": 1, "param": "signature"})),
                Probe(id="forged_delivery", kind="exploit", detect=_static(
                    {"module": f"{pkg}.webhooks", "function": receive, "position": 0, "param": "headers",
                     "key": header}))])


def _service_keys(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg = f"{org}_mesh"
    names = [f"{noun}-{rng.choice(('api', 'svc', 'worker', 'sync'))}" for noun in pick(rng, NOUNS, 4)]
    keys = {name: "".join(rng.choice("0123456789abcdef") for _ in range(40)) for name in names}
    enabled, disabled = names[:3], names[3]
    auth, authorize = rng.choice((("authenticate", "authorize"), ("key_valid", "calling_service"),
                                  ("check_key", "require_service")))
    if rng.random() < 0.5:
        compare = '''
            if key != expected:
                log.warning("bad key for service %s", service)
                return False
            return True'''
        fixed_compare = '''
            if not hmac.compare_digest(key.encode(), expected.encode()):
                log.warning("bad key for service %s", service)
                return False
            return True'''
        needle = "if key != expected:"
    else:
        compare = '''
            if expected == key:
                return True
            log.warning("bad key for service %s", service)
            return False'''
        fixed_compare = '''
            if hmac.compare_digest(expected.encode(), key.encode()):
                return True
            log.warning("bad key for service %s", service)
            return False'''
        needle = "if expected == key:"
    source = fill('''
        """Authentication of calls between $org's internal services, with a static key per service.

        A caller names itself in the X-Service header and presents its key in X-Service-Key; the keys are kept in
        a JSON file the deployment writes (services can be disabled there without removing their key).
        """

        import json
        import logging
        from pathlib import Path

        KEYS_FILE = Path("/etc/$org/service-keys.json")
        log = logging.getLogger(__name__)
        _keys: dict[str, str] | None = None


        def service_keys() -> dict[str, str]:
            """The keys of the enabled services, by name (the file is read once)."""
            global _keys
            if _keys is None:
                with open(KEYS_FILE, encoding="utf-8") as handle:
                    services = json.load(handle)["services"]
                _keys = {name: entry["key"] for name, entry in services.items() if entry.get("enabled", True)}
            return _keys


        def reload() -> None:
            """Forget the keys read so far (after the file changed)."""
            global _keys
            _keys = None


        def $auth(service: str, key: str) -> bool:
            """Whether ``key`` is the key of the enabled service ``service``."""
            expected = service_keys().get(service)
            if expected is None:
                log.info("unknown service %s", service)
                return False
            $compare


        def $authorize(headers: dict[str, str], allowed: set[str]) -> str:
            """The calling service, if it authenticates and may call this endpoint; PermissionError otherwise."""
            service, key = headers.get("X-Service", ""), headers.get("X-Service-Key", "")
            if not $auth(service, key):
                raise PermissionError(f"service {service!r} did not authenticate")
            if service not in allowed:
                raise PermissionError(f"service {service!r} may not call this endpoint")
            return service


        def known_services() -> list[str]:
            return sorted(service_keys())
        ''', org=org, auth=auth, authorize=authorize,
        compare=textwrap.dedent(compare).strip("\n").replace("\n", "\n    "))
    fixed = swap(swap(source, "import json\n", "import hmac\nimport json\n"), compare, fixed_compare)
    path = f"{pkg}/service_auth.py"
    config = {"services": {name: {"key": keys[name], "enabled": name != disabled, "owner": rng.choice(PEOPLE)}
                           for name in names}}
    a, b, c = enabled
    tests = fill('''
        from pathlib import Path

        import ${pkg}.service_auth as service_auth


        def _load():
            service_auth.KEYS_FILE = Path(ROOT + "/data/service-keys.json")
            service_auth.reload()


        def probe_valid(ctx):
            _load()
            return [service_auth.$auth("$a", "$key_a"), service_auth.$auth("$c", "$key_c")]


        def probe_invalid(ctx):
            _load()
            return [service_auth.$auth("$a", "$key_b"), service_auth.$auth("nobody", "$key_a"),
                    service_auth.$auth("$disabled", "$key_d"), service_auth.$auth("$b", "")]


        def probe_authorize(ctx):
            _load()
            return service_auth.$authorize({"X-Service": "$b", "X-Service-Key": "$key_b"}, {"$b", "$c"})


        def probe_not_allowed(ctx):
            _load()
            outcomes = []
            for headers in ({"X-Service": "$a", "X-Service-Key": "$key_a"}, {"X-Service": "$b"}):
                try:
                    outcomes.append(service_auth.$authorize(headers, {"$b", "$c"}))
                except PermissionError:
                    outcomes.append("denied")
            return outcomes


        def probe_known(ctx):
            _load()
            return service_auth.known_services()


        def probe_guess(ctx):
            $static


        def probe_forged_call(ctx):
            $static
        ''', static=_STATIC, pkg=pkg, auth=auth, authorize=authorize, a=a, b=b, c=c, disabled=disabled,
        key_a=keys[a], key_b=keys[b], key_c=keys[c], key_d=keys[disabled])
    return Program(
        family="timing_unsafe_comparison", variant="service_keys", domain="service-to-service authentication",
        cwe="CWE-208", files={path: source}, fixed={path: fixed},
        description=f"`{auth}(service, key)` says whether `key` is the configured key of an enabled service in "
                    f"KEYS_FILE; `{authorize}(headers, allowed)` returns the calling service named in X-Service when "
                    "its X-Service-Key authenticates and it is allowed, and raises PermissionError otherwise.",
        location=location({path: source}, path, needle),
        tests=tests,
        probes=[Probe(id="valid", kind="functional", expect=[True, True]),
                Probe(id="invalid", kind="functional", expect=[False, False, False, False]),
                Probe(id="authorize", kind="functional", expect=b),
                Probe(id="not_allowed", kind="functional", expect=["denied", "denied"]),
                Probe(id="known", kind="functional", expect=sorted(enabled)),
                Probe(id="guess", kind="exploit", detect=_static(
                    {"module": f"{pkg}.service_auth", "function": auth, "position": 1, "param": "key"})),
                Probe(id="forged_call", kind="exploit", detect=_static(
                    {"module": f"{pkg}.service_auth", "function": authorize, "position": 0, "param": "headers",
                     "key": "X-Service-Key"}))],
        fixtures={"data/service-keys.json": json.dumps(config, indent=2) + "\n"})


def _csrf_tokens(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg = f"{org}_web"
    user, other = pick(rng, PEOPLE, 2)
    domain = f"{rng.choice(WORDS)}.example"
    change, close = rng.choice((("change_email", "close_account"), ("update_email", "delete_account"),
                                ("post_email_form", "post_close_form")))
    compare, fixed_compare = rng.choice((
        ('return submitted is not None and submitted == session["csrf"]',
         'return submitted is not None and hmac.compare_digest(submitted.encode(), session["csrf"].encode())'),
        ('return submitted is not None and session["csrf"] == submitted',
         'return submitted is not None and hmac.compare_digest(session["csrf"].encode(), submitted.encode())'),
    ))
    source = fill('''
        """Account settings pages of the $org web app.

        Every form a session is shown carries the session's CSRF token in a hidden field; a POST is applied only
        when the token comes back with it.
        """

        import html
        import secrets

        _sessions: dict[str, dict] = {}


        def start_session(user: str, email: str) -> str:
            """A session for a signed-in user; returns its id (the cookie's value)."""
            session_id = secrets.token_urlsafe(24)
            _sessions[session_id] = {"user": user, "email": email, "csrf": secrets.token_urlsafe(32)}
            return session_id


        def csrf_field(session_id: str) -> str:
            """The hidden input every form of the session carries."""
            return f'<input type="hidden" name="csrf_token" value="{html.escape(_sessions[session_id]["csrf"])}">'


        def settings_page(session_id: str) -> str:
            session = _sessions[session_id]
            return (f"<h1>Settings of {html.escape(session['user'])}</h1>\\n"
                    f'<form method="post" action="/settings/email">{csrf_field(session_id)}'
                    f'<input name="email" value="{html.escape(session["email"])}"></form>')


        def _token_matches(session: dict, form: dict[str, str]) -> bool:
            submitted = form.get("csrf_token")
            $compare


        def $change(session_id: str, form: dict[str, str]) -> int:
            """Apply the e-mail form: 200, or 400 (not an address), 401 (no session) or 403 (token missing or wrong)."""
            session = _sessions.get(session_id)
            if session is None:
                return 401
            if not _token_matches(session, form):
                return 403
            email = form.get("email", "").strip()
            if email.count("@") != 1 or " " in email:
                return 400
            session["email"] = email
            return 200


        def $close(session_id: str, form: dict[str, str]) -> int:
            """Apply the close-account form, which repeats the user name; the session ends. 200, 400, 401 or 403."""
            session = _sessions.get(session_id)
            if session is None:
                return 401
            if not _token_matches(session, form):
                return 403
            if form.get("confirm") != session["user"]:
                return 400
            del _sessions[session_id]
            return 200


        def account(session_id: str) -> dict[str, str] | None:
            session = _sessions.get(session_id)
            return None if session is None else {"user": session["user"], "email": session["email"]}
        ''', org=org, change=change, close=close, compare=compare)
    fixed = swap(swap(source, "import html\n", "import hmac\nimport html\n"), compare, fixed_compare)
    path = f"{pkg}/settings.py"
    email, new_email = f"{user}@{domain}", f"{user}.{rng.choice(WORDS)}@{domain}"
    tests = fill('''
        import html
        import re

        import ${pkg}.settings as settings


        def _session(user, email):
            sid = settings.start_session(user, email)
            token = html.unescape(re.search(r'name="csrf_token" value="([^"]*)"', settings.csrf_field(sid)).group(1))
            return sid, token


        def probe_change(ctx):
            sid, token = _session("$user", "$email")
            return [settings.$change(sid, {"csrf_token": token, "email": " $new_email "}), settings.account(sid)]


        def probe_bad_token(ctx):
            sid, token = _session("$user", "$email")
            _, foreign = _session("$other", "$other@$domain")
            forms = [{"email": "$new_email"}, {"csrf_token": foreign, "email": "$new_email"},
                     {"csrf_token": token[:-1], "email": "$new_email"}]
            return [settings.$change(sid, form) for form in forms] + [settings.account(sid)["email"]]


        def probe_no_session(ctx):
            _, token = _session("$user", "$email")
            return [settings.$change("nope", {"csrf_token": token, "email": "$new_email"}),
                    settings.$close("nope", {"csrf_token": token, "confirm": "$user"})]


        def probe_bad_email(ctx):
            sid, token = _session("$user", "$email")
            return settings.$change(sid, {"csrf_token": token, "email": "$user at $domain"})


        def probe_close(ctx):
            sid, token = _session("$other", "$other@$domain")
            first = settings.$close(sid, {"csrf_token": token, "confirm": "$user"})
            return [first, settings.$close(sid, {"csrf_token": token, "confirm": "$other"}), settings.account(sid)]


        def probe_page(ctx):
            sid, token = _session("$user", "$email")
            page = settings.settings_page(sid)
            return [page.count('name="csrf_token"'), token in page, "$email" in page]


        def probe_forged_change(ctx):
            $static


        def probe_forged_close(ctx):
            $static
        ''', static=_STATIC, pkg=pkg, change=change, close=close, user=user, other=other, domain=domain,
        email=email, new_email=new_email)
    return Program(
        family="timing_unsafe_comparison", variant="csrf_tokens", domain="web form handling", cwe="CWE-208",
        files={path: source}, fixed={path: fixed},
        description=f"Every session has a CSRF token that its forms carry in the hidden `csrf_token` field. "
                    f"`{change}(session_id, form)` and `{close}(session_id, form)` apply a posted form only when its "
                    "token is the session's, returning 200, 400, 401 or 403.",
        location=location({path: source}, path, compare),
        tests=tests,
        probes=[Probe(id="change", kind="functional", expect=[200, {"user": user, "email": new_email}]),
                Probe(id="bad_token", kind="functional", expect=[403, 403, 403, email]),
                Probe(id="no_session", kind="functional", expect=[401, 401]),
                Probe(id="bad_email", kind="functional", expect=400),
                Probe(id="close", kind="functional", expect=[400, 200, None]),
                Probe(id="page", kind="functional", expect=[1, True, True]),
                Probe(id="forged_change", kind="exploit", detect=_static(
                    {"module": f"{pkg}.settings", "function": change, "position": 1, "param": "form",
                     "key": "csrf_token"})),
                Probe(id="forged_close", kind="exploit", detect=_static(
                    {"module": f"{pkg}.settings", "function": close, "position": 1, "param": "form",
                     "key": "csrf_token"}))])


def _deploy_tokens(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg = f"{org}_ci"
    current, previous = ("".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(32))
                         for _ in range(2))
    services = [f"{w}-{rng.choice(('api', 'web', 'worker'))}" for w in pick(rng, WORDS, 2)]
    refs = ["".join(rng.choice("0123456789abcdef") for _ in range(n)) for n in (7, 40)]
    authorized, trigger = rng.choice((("token_accepted", "trigger"), ("authorized", "queue_deploy"),
                                      ("valid_token", "handle_hook")))
    source = fill('''
        """Deploy tokens of the $org CI: a POST to the deploy hook carries one as a bearer token.

        The token is rotated now and then; during a rotation both the current and the previous token in
        TOKENS_FILE are accepted, so that callers can switch over without downtime.
        """

        import json
        import shutil
        from pathlib import Path

        TOKENS_FILE = Path("/etc/$org/deploy-tokens.json")


        def accepted_tokens() -> list[str]:
            """The current token, and the previous one while a rotation is under way."""
            with open(TOKENS_FILE, encoding="utf-8") as handle:
                data = json.load(handle)
            return [token for token in (data.get("current"), data.get("previous")) if token]


        def bearer(header: str | None) -> str | None:
            """The token of an ``Authorization: Bearer <token>`` header, or None."""
            if not header:
                return None
            scheme, _, token = header.partition(" ")
            return token.strip() if scheme.lower() == "bearer" and token.strip() else None


        def $authorized(token: str | None) -> bool:
            """Whether ``token`` is one of the accepted tokens."""
            return token is not None and token in accepted_tokens()


        def rotate(new_token: str) -> None:
            """Make new_token the current token; the current one stays accepted as the previous one (the old file
            is kept beside it as .bak)."""
            shutil.copyfile(TOKENS_FILE, TOKENS_FILE.with_name(TOKENS_FILE.name + ".bak"))
            current = json.loads(TOKENS_FILE.read_text(encoding="utf-8")).get("current")
            TOKENS_FILE.write_text(json.dumps({"current": new_token, "previous": current}), encoding="utf-8")
        ''', org=org, authorized=authorized)
    hook_src = fill('''
        """The deploy hook of $org's CI: an authorized request queues a deployment of a service at a git ref."""

        import re

        from $pkg import tokens

        SERVICE_NAME = re.compile(r"[a-z][a-z0-9-]{1,39}")
        GIT_REF = re.compile(r"[0-9a-f]{7,40}")
        _deployments: list[dict[str, str]] = []


        def $trigger(headers: dict[str, str], service: str, ref: str) -> int:
            """Queue a deployment; returns the HTTP status (202, 400 for a bad service or ref, 401)."""
            if not tokens.$authorized(tokens.bearer(headers.get("Authorization"))):
                return 401
            if not SERVICE_NAME.fullmatch(service) or not GIT_REF.fullmatch(ref):
                return 400
            _deployments.append({"service": service, "ref": ref})
            return 202


        def queued() -> list[dict[str, str]]:
            """The deployments queued so far, oldest first."""
            return [dict(entry) for entry in _deployments]
        ''', org=org, pkg=pkg, authorized=authorized, trigger=trigger)
    fixed = swap(swap(source, "import json\n", "import hmac\nimport json\n"),
                 "return token is not None and token in accepted_tokens()",
                 "return token is not None and any(hmac.compare_digest(token.encode(), accepted.encode())\n"
                 "                                     for accepted in accepted_tokens())")
    path, hook_path = f"{pkg}/tokens.py", f"{pkg}/deploy_hook.py"
    s1, s2 = services
    tests = fill('''
        import json
        from pathlib import Path

        import ${pkg}.deploy_hook as hook
        import ${pkg}.tokens as tokens


        def _tokens(previous=True):
            tokens.TOKENS_FILE = Path("/tmp/deploy-tokens.json")
            data = {"current": "$current", "previous": "$previous" if previous else None}
            tokens.TOKENS_FILE.write_text(json.dumps(data))
            del hook._deployments[:]


        def probe_bearer(ctx):
            return [tokens.bearer("Bearer  abc "), tokens.bearer("Basic abc"), tokens.bearer(None),
                    tokens.bearer("Bearer ")]


        def probe_tokens(ctx):
            _tokens()
            return [tokens.$authorized("$current"), tokens.$authorized("$previous"),
                    tokens.$authorized("$current"[:-1]), tokens.$authorized(None), tokens.$authorized("")]


        def probe_rotate(ctx):
            _tokens()
            tokens.rotate("$s1-$s2")
            return [tokens.$authorized("$s1-$s2"), tokens.$authorized("$current"), tokens.$authorized("$previous"),
                    json.loads(Path("/tmp/deploy-tokens.json.bak").read_text())["current"]]


        def probe_rotation_over(ctx):
            _tokens(previous=False)
            return [tokens.$authorized("$current"), tokens.$authorized("$previous")]


        def probe_trigger(ctx):
            _tokens()
            statuses = [hook.$trigger({"Authorization": "Bearer $current"}, "$s1", "$ref1"),
                        hook.$trigger({"Authorization": "bearer $previous"}, "$s2", "$ref2"),
                        hook.$trigger({"Authorization": "Bearer $s1"}, "$s1", "$ref1"),
                        hook.$trigger({}, "$s1", "$ref1"),
                        hook.$trigger({"Authorization": "Bearer $current"}, "$s1; rm", "$ref1"),
                        hook.$trigger({"Authorization": "Bearer $current"}, "$s1", "main")]
            return [statuses, hook.queued()]


        def probe_guess(ctx):
            $static


        def probe_forged_hook(ctx):
            $static
        ''', static=_STATIC, pkg=pkg, authorized=authorized, trigger=trigger, current=current, previous=previous,
        s1=s1, s2=s2, ref1=refs[0], ref2=refs[1])
    return Program(
        family="timing_unsafe_comparison", variant="deploy_tokens", domain="CI deploy hook", cwe="CWE-208",
        files={path: source, hook_path: hook_src}, fixed={path: fixed, hook_path: hook_src},
        description=f"`{authorized}(token)` says whether a token is the current or (during a rotation) the previous "
                    f"token of TOKENS_FILE; `{trigger}(headers, service, ref)` queues a deployment for a request "
                    "whose `Authorization: Bearer` token is accepted, returning 202, 400 or 401; `rotate` makes a new "
                    "token current.",
        location=location({path: source}, path, "token in accepted_tokens()"),
        tests=tests,
        probes=[Probe(id="bearer", kind="functional", expect=["abc", None, None, None]),
                Probe(id="tokens", kind="functional", expect=[True, True, False, False, False]),
                Probe(id="rotation_over", kind="functional", expect=[True, False]),
                Probe(id="rotate", kind="functional", expect=[True, True, False, current]),
                Probe(id="trigger", kind="functional",
                      expect=[[202, 202, 401, 401, 400, 400],
                              [{"service": s1, "ref": refs[0]}, {"service": s2, "ref": refs[1]}]]),
                Probe(id="guess", kind="exploit", detect=_static(
                    {"module": f"{pkg}.tokens", "function": authorized, "position": 0, "param": "token"})),
                Probe(id="forged_hook", kind="exploit", detect=_static(
                    {"module": f"{pkg}.deploy_hook", "function": trigger, "position": 0, "param": "headers",
                     "key": "Authorization"}))])


_BUILDERS = {"webhook_signature": _webhook_signature, "service_keys": _service_keys, "csrf_tokens": _csrf_tokens,
             "deploy_tokens": _deploy_tokens}


def build(rng: random.Random, variant: str) -> Program:
    return _BUILDERS[variant](rng)


FAMILY = Family(name="timing_unsafe_comparison", cwe="CWE-208", title="Timing-unsafe comparison of secrets",
                variants=("webhook_signature", "service_keys", "csrf_tokens"), ood_variants=("deploy_tokens",),
                build=build)
