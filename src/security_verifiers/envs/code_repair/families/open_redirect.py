"""CWE-601, open redirect: a program sends the browser to an address taken from a request without keeping it on
the sites it means.

Every program returns the Location it would redirect to (no web framework: the function is what a view calls).
Variants:

- ``login_next``: after sign-in, ``next`` is accepted when it starts with "/" (so "//host", "/\\host" and
  "/<TAB>/host", which browsers read as another site, pass);
- ``logout_return``: after sign-out, the return address must be on the company's domain, checked with
  ``netloc.endswith(domain)`` ("evil<domain>" passes);
- ``go_links``: internal short links whose targets must be on the company's sites, checked with
  ``startswith("https://" + host)`` (userinfo and longer host names pass);
- ``sso_return`` (OOD): the return path is checked while still percent-encoded and decoded afterwards
  ("/%2Fhost" passes the check and becomes "//host").

The exploit probes redirect to ``{canary}.evil.example`` (or a host with the canary before "evil"); the reference
fixes parse with ``urllib.parse`` and compare hosts exactly, or accept only single-slash local paths. A token the
program draws and the test hands back unchanged (a session) replays as the script run's own token; a sign-in link's
token, which the test would have to cut out of a URL, goes from one call to the next inside the program (``map``
over the program's functions), so that the probe, replayed as a plain script, asks the same requests whatever token
it drew.
"""

from __future__ import annotations

import html
import random
from urllib.parse import quote

from security_verifiers.envs.code_repair.families import Variants
from security_verifiers.envs.code_repair.families.kit import NOUNS, ORGS, PEOPLE, WORDS, Templates, line_of, pick, swap
from security_verifiers.envs.code_repair.program import Detect, Location, Probe, Program

TEMPLATES = Templates(__name__)
VARIANTS = Variants()

EVIL = Detect(kind="contains", text="{canary}.evil")


def _at(source: str, path: str, needle: str, extra: int = 0) -> Location:
    start = line_of(source, needle)
    return Location(file=path, start=start, end=start + extra)


@VARIANTS.add()
def _login_next(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg, mod = f"{org}_portal", rng.choice(("auth", "signin", "magic_link"))
    fn = rng.choice(("after_login_target", "landing_for", "redirect_target"))
    landing = rng.choice(("/dashboard", "/home", "/inbox", "/overview"))
    user = f"{pick(rng, PEOPLE)[0]}@{org}.com"
    ttl = rng.choice((600, 900, 1800))
    page = f"/{rng.choice(NOUNS)}s/{rng.randint(1, 500)}?tab={rng.choice(WORDS)}"
    sessions = TEMPLATES.render("login_next/sessions.py", org=org, ttl=ttl)
    source = TEMPLATES.render("login_next/source.py", org=org, pkg=pkg, landing=landing, fn=fn)
    fixed = swap(source, f"from {pkg} import sessions\n",
                 f"from urllib.parse import urlsplit\n\nfrom {pkg} import sessions\n")
    fixed = swap(fixed, '''
        if next_url and next_url.startswith("/"):
            return next_url''', '''
        if next_url and next_url.startswith("/") and "\\\\" not in next_url:
            parts = urlsplit(next_url)
            if not parts.scheme and not parts.netloc:
                return next_url''')
    path, sessions_path = f"{pkg}/{mod}.py", f"{pkg}/sessions.py"
    tests = TEMPLATES.render("login_next/tests.py", pkg=pkg, mod=mod, fn=fn, user=user, page=page,
                             word=rng.choice(WORDS))
    expired = {"session": None, "location": "/login?expired=1"}
    return Program(
        family="open_redirect", variant="login_next", domain="web sign-in", cwe="CWE-601",
        files={sessions_path: sessions, path: source}, fixed={sessions_path: sessions, path: fixed},
        description=f"`verify(token, next_url)` redeems a one-time sign-in link and returns the session and the "
                    f"Location to redirect to: the page of this site given in the link's `next` parameter (`{fn}`), "
                    "or DEFAULT_LANDING.",
        location=_at(source, path, 'if next_url and next_url.startswith("/"):', 1),
        tests=tests,
        probes=[Probe(id="back_to_page", kind="functional", expect=["/login/verify", ["next", "token"], page, page,
                                                                    user]),
                Probe(id="default", kind="functional", expect=[landing, landing, "/", landing]),
                Probe(id="other_site", kind="functional", expect=[landing, landing]),
                Probe(id="used_twice", kind="functional", expect=[page, expired, expired]),
                Probe(id="scheme_relative", kind="exploit", detect=EVIL),
                Probe(id="backslash", kind="exploit", detect=EVIL),
                Probe(id="tab", kind="exploit", detect=EVIL)])


@VARIANTS.add()
def _logout_return(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg, mod = f"{org}_accounts", rng.choice(("logout", "signout", "sessions"))
    fn = rng.choice(("logout", "sign_out", "end_session"))
    check = rng.choice(("is_company_url", "on_our_domain", "trusted_return"))
    domain = f"{org}.com"
    apps = [f"https://{rng.choice(('app', 'mail', 'wiki', 'crm'))}.{domain}/{rng.choice(WORDS)}",
            f"https://{domain}/{rng.choice(NOUNS)}s"]
    user, other = pick(rng, PEOPLE, 2)
    source = TEMPLATES.render("logout_return/source.py", org=org, pkg=pkg, domain=domain, fn=fn, check=check)
    store = TEMPLATES.render("logout_return/store.py", org=org)
    fixed = swap(source, '    return parts.scheme == "https" and parts.netloc.endswith(COMPANY_DOMAIN)', '''\
    host = parts.hostname or ""
    return parts.scheme == "https" and (host == COMPANY_DOMAIN or host.endswith("." + COMPANY_DOMAIN))''')
    path, store_path = f"{pkg}/{mod}.py", f"{pkg}/session_store.py"
    signed_out = f"https://accounts.{domain}/signed-out"
    tests = TEMPLATES.render("logout_return/tests.py", pkg=pkg, mod=mod, fn=fn, check=check, user=user, other=other,
                             app0=apps[0], app1=apps[1], domain=domain, word=rng.choice(WORDS))
    return Program(
        family="open_redirect", variant="logout_return", domain="single sign-out", cwe="CWE-601",
        files={store_path: store, path: source}, fixed={store_path: store, path: fixed},
        description=f"`{fn}(token, return_to)` ends a session and returns the Location to redirect to: "
                    "`return_to` when it is an https address on COMPANY_DOMAIN or one of its subdomains, "
                    "SIGNED_OUT_PAGE otherwise. `return_to` is a query parameter of the sign-out link.",
        location=_at(source, path, "parts.netloc.endswith(COMPANY_DOMAIN)"),
        tests=tests,
        probes=[Probe(id="back_to_app", kind="functional", expect=apps),
                Probe(id="no_return", kind="functional", expect=[signed_out, signed_out]),
                Probe(id="foreign", kind="functional", expect=[signed_out, signed_out, signed_out]),
                Probe(id="everywhere", kind="functional", expect=[apps[0], 2, 0]),
                Probe(id="check", kind="functional", expect=[True, False]),
                Probe(id="suffix", kind="exploit", detect=EVIL),
                Probe(id="dashed_suffix", kind="exploit", detect=EVIL)])


@VARIANTS.add()
def _go_links(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg, mod = f"{org}_go", rng.choice(("links", "shortlinks", "golinks"))
    create = rng.choice(("create_link", "add_link", "shorten"))
    follow = rng.choice(("follow", "resolve", "redirect_for"))
    hosts = [f"{name}.{org}.com" for name in pick(rng, ("wiki", "docs", "intranet", "jira", "people", "handbook"), 2)]
    owner, other = pick(rng, PEOPLE, 2)
    slugs = [f"{rng.choice(WORDS)}-{rng.choice(NOUNS)}", rng.choice(NOUNS) + "s"]
    targets = [f"https://{hosts[0]}/display/{rng.choice(WORDS).upper()}/{rng.choice(NOUNS).title()}+Guide",
               f"https://{hosts[1]}/{rng.choice(NOUNS)}s?quarter=Q{rng.randint(1, 4)}"]
    not_found = rng.choice(("/not-found", "/missing", "/?unknown="))
    source = TEMPLATES.render("go_links/source.py", org=org, host0=hosts[0], host1=hosts[1], not_found=not_found,
                              create=create, follow=follow)
    fixed = swap(source, "import sqlite3\n", "import sqlite3\nfrom urllib.parse import urlsplit\n")
    fixed = swap(fixed, '    return target.startswith(tuple(f"https://{host}" for host in INTERNAL_HOSTS))', '''\
    parts = urlsplit(target)
    return parts.scheme == "https" and parts.hostname in INTERNAL_HOSTS''')
    path = f"{pkg}/{mod}.py"
    tests = TEMPLATES.render("go_links/tests.py", pkg=pkg, mod=mod, create=create, follow=follow, owner=owner,
                             other=other, slug0=slugs[0], slug1=slugs[1], target0=targets[0], target1=targets[1],
                             host0=hosts[0], host1=hosts[1])
    return Program(
        family="open_redirect", variant="go_links", domain="link shortener", cwe="CWE-601",
        files={path: source}, fixed={path: fixed},
        description=f"`{create}(slug, target, owner)` makes a go/ link to an https page on one of INTERNAL_HOSTS "
                    f"(anything else raises ValueError); `{follow}(slug)` returns the Location the link redirects "
                    "to. Any employee can create links.",
        location=_at(source, path, "return target.startswith("),
        tests=tests,
        probes=[Probe(id="follow", kind="functional", expect=[f"go/{slugs[0]}", f"go/{slugs[1]}"] + targets),
                Probe(id="unknown", kind="functional", expect=not_found),
                Probe(id="lucky", kind="functional", expect=[not_found, True]),
                Probe(id="hits", kind="functional", expect=[[[slugs[0], 3]], [[slugs[1], 0]]]),
                Probe(id="external", kind="functional", expect=["https://www.example.org/", f"http://{hosts[0]}/",
                                                                f"ftp://{hosts[1]}/"]),
                Probe(id="duplicate", kind="functional", expect=[targets[0], "refused"]),
                Probe(id="userinfo", kind="exploit", detect=EVIL),
                Probe(id="longer_host", kind="exploit", detect=EVIL)])


@VARIANTS.add(ood=True)
def _sso_return(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg, mod = f"{org}_sso", rng.choice(("gateway", "return_to", "signin"))
    fn = rng.choice(("return_location", "after_sign_in", "continue_to"))
    home = rng.choice(("/home", "/start", "/me"))
    pages = [f"/{rng.choice(NOUNS)}s/{rng.choice(WORDS)} {rng.choice(WORDS)}", f"/search?q={rng.choice(WORDS)}",
             f"/{rng.choice(WORDS)}/ümlaut-{rng.randint(1, 99)}"]
    source = TEMPLATES.render("sso_return/source.py", org=org, home=home, fn=fn)
    fixed = swap(source, '''
        if return_to and is_local(return_to):
            return unquote(return_to)
        return HOME''', '''
        target = unquote(return_to or "")
        if target and is_local(target):
            return target
        return HOME''')
    path = f"{pkg}/{mod}.py"
    tests = TEMPLATES.render("sso_return/tests.py", pkg=pkg, mod=mod, fn=fn, pages=repr(pages), page0=pages[0],
                             word=rng.choice(WORDS))
    fields = [quote(page, safe="/") for page in pages]
    form = (f'<form method="post" action="/sso/login"><p class="error">Wrong password &lt;again&gt;</p>'
            f'<input type="hidden" name="return_to" value="{html.escape(fields[0], quote=True)}"></form>')
    return Program(
        family="open_redirect", variant="sso_return", domain="single sign-on", cwe="CWE-601",
        files={path: source}, fixed={path: fixed},
        description=f"`{fn}(return_to)` returns the Location to redirect to after sign-in: the page of this site "
                    "whose percent-encoded path the login form carried in `return_to` (see `return_field`), or "
                    "HOME. The field comes back from the browser with the login form.",
        location=_at(source, path, "if return_to and is_local(return_to):", 1),
        tests=tests,
        probes=[Probe(id="round_trip", kind="functional", expect=pages),
                Probe(id="fields", kind="functional", expect=fields),
                Probe(id="foreign", kind="functional", expect=[home] * 5),
                Probe(id="form", kind="functional", expect=form),
                Probe(id="encoded_slash", kind="exploit", detect=EVIL),
                Probe(id="encoded_backslash", kind="exploit", detect=EVIL),
                Probe(id="encoded_tab", kind="exploit", detect=EVIL)])


FAMILY = VARIANTS.family(name="open_redirect", cwe="CWE-601", title="Open redirect")
