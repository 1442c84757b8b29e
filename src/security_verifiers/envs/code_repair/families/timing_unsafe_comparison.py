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

from security_verifiers.envs.code_repair.families import Variants
from security_verifiers.envs.code_repair.families.kit import NOUNS, ORGS, PEOPLE, WORDS, Templates, location, pick, swap
from security_verifiers.envs.code_repair.program import Detect, Probe, Program

TEMPLATES = Templates(__name__)
VARIANTS = Variants()


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


@VARIANTS.add()
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
    source = TEMPLATES.render("webhook_signature/source.py", vendor=vendor, org=org, upper=org.upper(), header=header,
                              expr=expr, verify=verify, compare=compare.replace("\n", "\n    "))
    if style == "base64":  # the module then imports base64 too, first of its imports
        source = source.replace("\nimport hashlib\n", "\nimport base64\nimport hashlib\n", 1)
    hooks_src = TEMPLATES.render("webhook_signature/hooks_src.py", vendor=vendor, org=org, pkg=pkg, receive=receive,
                                 verify=verify)
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
    tests = TEMPLATES.render("webhook_signature/tests.py", static=_STATIC, pkg=pkg, secret=secret, body=repr(body),
                             other=repr(other), verify=verify, receive=receive, header=header, good=good,
                             good_other=good_other, wrong=_wrong(rng, good), sig_text=signature(b"not json"),
                             sig_list=signature(b"[1, 2]"))
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


@VARIANTS.add()
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
    source = TEMPLATES.render("service_keys/source.py", org=org, auth=auth, authorize=authorize,
                              compare=textwrap.dedent(compare).strip("\n").replace("\n", "\n    "))
    fixed = swap(swap(source, "import json\n", "import hmac\nimport json\n"), compare, fixed_compare)
    path = f"{pkg}/service_auth.py"
    config = {"services": {name: {"key": keys[name], "enabled": name != disabled, "owner": rng.choice(PEOPLE)}
                           for name in names}}
    a, b, c = enabled
    tests = TEMPLATES.render("service_keys/tests.py", static=_STATIC, pkg=pkg, auth=auth, authorize=authorize, a=a, b=b,
                             c=c, disabled=disabled, key_a=keys[a], key_b=keys[b], key_c=keys[c], key_d=keys[disabled])
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


@VARIANTS.add()
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
    source = TEMPLATES.render("csrf_tokens/source.py", org=org, change=change, close=close, compare=compare)
    fixed = swap(swap(source, "import html\n", "import hmac\nimport html\n"), compare, fixed_compare)
    path = f"{pkg}/settings.py"
    email, new_email = f"{user}@{domain}", f"{user}.{rng.choice(WORDS)}@{domain}"
    tests = TEMPLATES.render("csrf_tokens/tests.py", static=_STATIC, pkg=pkg, change=change, close=close, user=user,
                             other=other, domain=domain, email=email, new_email=new_email)
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


@VARIANTS.add(ood=True)
def _deploy_tokens(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg = f"{org}_ci"
    current, previous = ("".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(32))
                         for _ in range(2))
    services = [f"{w}-{rng.choice(('api', 'web', 'worker'))}" for w in pick(rng, WORDS, 2)]
    refs = ["".join(rng.choice("0123456789abcdef") for _ in range(n)) for n in (7, 40)]
    authorized, trigger = rng.choice((("token_accepted", "trigger"), ("authorized", "queue_deploy"),
                                      ("valid_token", "handle_hook")))
    source = TEMPLATES.render("deploy_tokens/source.py", org=org, authorized=authorized)
    hook_src = TEMPLATES.render("deploy_tokens/hook_src.py", org=org, pkg=pkg, authorized=authorized, trigger=trigger)
    fixed = swap(swap(source, "import json\n", "import hmac\nimport json\n"),
                 "return token is not None and token in accepted_tokens()",
                 "return token is not None and any(hmac.compare_digest(token.encode(), accepted.encode())\n"
                 "                                     for accepted in accepted_tokens())")
    path, hook_path = f"{pkg}/tokens.py", f"{pkg}/deploy_hook.py"
    s1, s2 = services
    tests = TEMPLATES.render("deploy_tokens/tests.py", static=_STATIC, pkg=pkg, authorized=authorized, trigger=trigger,
                             current=current, previous=previous, s1=s1, s2=s2, ref1=refs[0], ref2=refs[1])
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


FAMILY = VARIANTS.family(name="timing_unsafe_comparison", cwe="CWE-208", title="Timing-unsafe comparison of secrets")
