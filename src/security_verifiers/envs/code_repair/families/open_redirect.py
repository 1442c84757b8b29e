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

from security_verifiers.envs.code_repair.families import Family
from security_verifiers.envs.code_repair.families.kit import NOUNS, ORGS, PEOPLE, WORDS, fill, line_of, pick, swap
from security_verifiers.envs.code_repair.program import Detect, Location, Probe, Program

EVIL = Detect(kind="contains", text="{canary}.evil")


def _at(source: str, path: str, needle: str, extra: int = 0) -> Location:
    start = line_of(source, needle)
    return Location(file=path, start=start, end=start + extra)


def _login_next(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg, mod = f"{org}_portal", rng.choice(("auth", "signin", "magic_link"))
    fn = rng.choice(("after_login_target", "landing_for", "redirect_target"))
    landing = rng.choice(("/dashboard", "/home", "/inbox", "/overview"))
    user = f"{pick(rng, PEOPLE)[0]}@{org}.com"
    ttl = rng.choice((600, 900, 1800))
    page = f"/{rng.choice(NOUNS)}s/{rng.randint(1, 500)}?tab={rng.choice(WORDS)}"
    sessions = fill('''
        """One-time sign-in links of the $org portal and the sessions they open."""

        import secrets
        import time
        from urllib.parse import urlencode

        LINK_TTL_S = $ttl
        _pending: dict[str, tuple[str, float]] = {}
        _sessions: dict[str, str] = {}


        def magic_link(email: str, next_url: str | None = None) -> str:
            """A one-time sign-in link for ``email`` (what the mail contains)."""
            token = secrets.token_urlsafe(24)
            _pending[token] = (email, time.monotonic() + LINK_TTL_S)
            query = {"token": token, "next": next_url} if next_url else {"token": token}
            return "/login/verify?" + urlencode(query)


        def redeem(token: str) -> str | None:
            """The address a link was mailed to; None when the link is unknown, used or expired (it works once)."""
            email, expires = _pending.pop(token, ("", 0.0))
            if not email or time.monotonic() > expires:
                return None
            return email


        def open_session(email: str) -> str:
            session = secrets.token_urlsafe(24)
            _sessions[session] = email
            return session


        def whoami(session: str | None) -> str | None:
            return _sessions.get(session) if session else None
        ''', org=org, ttl=ttl)
    source = fill('''
        """Passwordless sign-in for the $org portal.

        We mail the user a one-time link; opening it signs them in and takes them back to the page they were on
        when they asked for it (the ``next`` parameter of the link).
        """

        from ${pkg} import sessions

        DEFAULT_LANDING = "$landing"


        def $fn(next_url: str | None) -> str:
            """Where to send a user after sign-in: the page on this site they asked for, or DEFAULT_LANDING."""
            if next_url and next_url.startswith("/"):
                return next_url
            return DEFAULT_LANDING


        def verify(token: str, next_url: str | None = None) -> dict:
            """Redeem a sign-in link; returns the new session (None if the link is unknown, used or expired) and the
            Location to redirect to."""
            email = sessions.redeem(token)
            if email is None:
                return {"session": None, "location": "/login?expired=1"}
            return {"session": sessions.open_session(email), "location": $fn(next_url)}
        ''', org=org, pkg=pkg, landing=landing, fn=fn)
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
    tests = fill('''
        from urllib.parse import parse_qs, urlsplit

        import ${pkg}.${mod} as auth
        import ${pkg}.sessions as sessions


        def _query(link):
            return {key: values[0] for key, values in parse_qs(urlsplit(link).query).items()}


        def _location(next_url):
            try:
                query = _query(sessions.magic_link("$user", next_url))
                return auth.verify(query["token"], query.get("next"))["location"]
            except Exception as error:
                return type(error).__name__


        def probe_back_to_page(ctx):
            link = sessions.magic_link("$user", "$page")
            query = _query(link)
            result = auth.verify(query["token"], query.get("next"))
            return [urlsplit(link).path, sorted(query), query["next"], result["location"],
                    sessions.whoami(result["session"])]


        def probe_default(ctx):
            return [_location(None), _location(""), _location("/"), auth.$fn(None)]


        def probe_other_site(ctx):
            return [_location("https://$word.example.net/"), auth.$fn("javascript:alert(1)")]


        def probe_used_twice(ctx):
            token = _query(sessions.magic_link("$user", "$page"))["token"]
            first = auth.verify(token, "$page")["location"]
            second = auth.verify(token, "$page")
            return [first, second, auth.verify("no-such-token")]


        def _followed(next_url):
            """Where a sign-in link for next_url leads, the link going from magic_link to verify inside the program
            (map): its token is drawn there, another in every run, and an exploit probe replayed as a plain script
            must ask the very requests it asked the live program."""
            b, op, parse = program_module("builtins"), program_module("operator"), program_module("urllib.parse")
            try:
                links = b.map(sessions.magic_link, ["$user"], [next_url])
                queries = b.map(op.attrgetter("query"), b.map(parse.urlsplit, links))
                fields = b.map(op.itemgetter("token", "next"), b.map(b.dict, b.map(parse.parse_qsl, queries)))
                verified = program_module("itertools").starmap(auth.verify, fields)
                return b.list(verified)[0]["location"]
            except Exception as error:
                return type(error).__name__


        def probe_scheme_relative(ctx):
            return _followed("//" + ctx["canary"] + ".evil.example/account")


        def probe_backslash(ctx):
            return _followed("/\\\\" + ctx["canary"] + ".evil.example/")


        def probe_tab(ctx):
            return _followed("/\\t/" + ctx["canary"] + ".evil.example")
        ''', pkg=pkg, mod=mod, fn=fn, user=user, page=page, word=rng.choice(WORDS))
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


def _logout_return(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg, mod = f"{org}_accounts", rng.choice(("logout", "signout", "sessions"))
    fn = rng.choice(("logout", "sign_out", "end_session"))
    check = rng.choice(("is_company_url", "on_our_domain", "trusted_return"))
    domain = f"{org}.com"
    apps = [f"https://{rng.choice(('app', 'mail', 'wiki', 'crm'))}.{domain}/{rng.choice(WORDS)}",
            f"https://{domain}/{rng.choice(NOUNS)}s"]
    user, other = pick(rng, PEOPLE, 2)
    source = fill('''
        """Sign-out for the $org apps: after signing out, users go back to the app they came from, if it is ours."""

        from urllib.parse import urlsplit

        from ${pkg} import session_store

        COMPANY_DOMAIN = "$domain"
        SIGNED_OUT_PAGE = "https://accounts.$domain/signed-out"


        def $check(url: str) -> bool:
            """Whether ``url`` is an https address on the company's domain (or one of its subdomains)."""
            parts = urlsplit(url)
            return parts.scheme == "https" and parts.netloc.endswith(COMPANY_DOMAIN)


        def $fn(token: str, return_to: str | None = None, everywhere: bool = False) -> str:
            """End the session (all of the user's sessions with ``everywhere``); returns the Location to send the
            browser to: ``return_to`` when it is one of our apps, the signed-out page otherwise."""
            session_store.end(token, everywhere)
            if return_to and $check(return_to):
                return return_to
            return SIGNED_OUT_PAGE
        ''', org=org, pkg=pkg, domain=domain, fn=fn, check=check)
    store = fill('''
        """The sessions of the $org apps' single sign-on."""

        import secrets

        _sessions: dict[str, str] = {}


        def start_session(user: str) -> str:
            token = secrets.token_urlsafe(24)
            _sessions[token] = user
            return token


        def sessions_of(user: str) -> int:
            return sum(1 for owner in _sessions.values() if owner == user)


        def end(token: str, everywhere: bool = False) -> None:
            """End one session, or with ``everywhere`` every session of its user."""
            user = _sessions.pop(token, None)
            if user is not None and everywhere:
                for other in [t for t, owner in _sessions.items() if owner == user]:
                    del _sessions[other]
        ''', org=org)
    fixed = swap(source, '    return parts.scheme == "https" and parts.netloc.endswith(COMPANY_DOMAIN)', '''\
    host = parts.hostname or ""
    return parts.scheme == "https" and (host == COMPANY_DOMAIN or host.endswith("." + COMPANY_DOMAIN))''')
    path, store_path = f"{pkg}/{mod}.py", f"{pkg}/session_store.py"
    signed_out = f"https://accounts.{domain}/signed-out"
    tests = fill('''
        import ${pkg}.${mod} as accounts
        import ${pkg}.session_store as sessions


        def _location(return_to):
            try:  # the token the program drew goes back as it is: the replay hands back its own run's token
                return accounts.$fn(sessions.start_session("$other"), return_to)
            except Exception as error:
                return type(error).__name__


        def probe_back_to_app(ctx):
            return [_location("$app0"), _location("$app1")]


        def probe_no_return(ctx):
            return [_location(None), _location("")]


        def probe_foreign(ctx):
            return [_location("https://www.example.org/"), _location("http://$domain/"),
                    _location("https://$domain.example.org/")]


        def probe_everywhere(ctx):
            tokens = [sessions.start_session("$user") for _ in range(3)]
            one = accounts.$fn(tokens[0], "$app0")
            left = sessions.sessions_of("$user")
            accounts.$fn(tokens[1], None, everywhere=True)
            return [one, left, sessions.sessions_of("$user")]


        def probe_check(ctx):
            return [accounts.$check("$app0"), accounts.$check("https://$word.example.com/")]


        def probe_suffix(ctx):
            return _location("https://" + ctx["canary"] + ".evil$domain/welcome")


        def probe_dashed_suffix(ctx):
            return _location("https://" + ctx["canary"] + ".evil-$domain/")
        ''', pkg=pkg, mod=mod, fn=fn, check=check, user=user, other=other, app0=apps[0], app1=apps[1],
        domain=domain, word=rng.choice(WORDS))
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
    source = fill('''
        """go/ links for $org: short names for internal pages, e.g. go/onboarding. Links may only point at the
        company's own sites."""

        import random
        import re
        import sqlite3

        INTERNAL_HOSTS = ("$host0", "$host1")
        NOT_FOUND = "$not_found"
        _SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{0,40}$$")
        _db = None


        def db() -> sqlite3.Connection:
            global _db
            if _db is None:
                _db = sqlite3.connect(":memory:")
                _db.execute("CREATE TABLE links (slug TEXT PRIMARY KEY, target TEXT NOT NULL, owner TEXT NOT NULL, "
                            "hits INTEGER NOT NULL DEFAULT 0)")
            return _db


        def _internal(target: str) -> bool:
            return target.startswith(tuple(f"https://{host}" for host in INTERNAL_HOSTS))


        def $create(slug: str, target: str, owner: str) -> str:
            """Create go/``slug`` pointing at ``target``; returns the short link."""
            if not _SLUG.match(slug):
                raise ValueError(f"bad slug: {slug!r}")
            if not _internal(target):
                raise ValueError("go links may only point at " + ", ".join(INTERNAL_HOSTS))
            try:
                db().execute("INSERT INTO links (slug, target, owner) VALUES (?, ?, ?)", (slug, target, owner))
            except sqlite3.IntegrityError:
                raise ValueError(f"go/{slug} exists already") from None
            return f"go/{slug}"


        def $follow(slug: str) -> str:
            """The Location for go/``slug`` (counting the visit), or NOT_FOUND."""
            row = db().execute("SELECT target FROM links WHERE slug = ?", (slug.lower(),)).fetchone()
            if row is None:
                return NOT_FOUND
            db().execute("UPDATE links SET hits = hits + 1 WHERE slug = ?", (slug.lower(),))
            return row[0]


        def links_of(owner: str) -> list[list]:
            rows = db().execute("SELECT slug, hits FROM links WHERE owner = ? ORDER BY slug", (owner,))
            return [[slug, hits] for slug, hits in rows]


        def lucky() -> str:
            """go/lucky: the Location of a link picked at random, for people who like to explore the intranet."""
            slugs = [row[0] for row in db().execute("SELECT slug FROM links ORDER BY slug")]
            return $follow(random.choice(slugs)) if slugs else NOT_FOUND
        ''', org=org, host0=hosts[0], host1=hosts[1], not_found=not_found, create=create, follow=follow)
    fixed = swap(source, "import sqlite3\n", "import sqlite3\nfrom urllib.parse import urlsplit\n")
    fixed = swap(fixed, '    return target.startswith(tuple(f"https://{host}" for host in INTERNAL_HOSTS))', '''\
    parts = urlsplit(target)
    return parts.scheme == "https" and parts.hostname in INTERNAL_HOSTS''')
    path = f"{pkg}/{mod}.py"
    tests = fill('''
        import ${pkg}.${mod} as go


        def _fresh():
            go._db = None


        def _via_link(target):
            _fresh()
            try:
                go.$create("x", target, "$other")
            except Exception:
                pass
            try:
                return go.$follow("x")
            except Exception as error:
                return type(error).__name__


        def probe_follow(ctx):
            _fresh()
            made = [go.$create("$slug0", "$target0", "$owner"), go.$create("$slug1", "$target1", "$owner")]
            return made + [go.$follow("$slug0"), go.$follow("$slug1".upper())]


        def probe_unknown(ctx):
            _fresh()
            return go.$follow("nothing-here")


        def probe_lucky(ctx):
            _fresh()
            empty = go.lucky()
            go.$create("$slug0", "$target0", "$owner")
            go.$create("$slug1", "$target1", "$other")
            return [empty, go.lucky() in ("$target0", "$target1")]


        def probe_hits(ctx):
            _fresh()
            go.$create("$slug0", "$target0", "$owner")
            go.$create("$slug1", "$target1", "$other")
            for _ in range(3):
                go.$follow("$slug0")
            return [go.links_of("$owner"), go.links_of("$other")]


        def probe_external(ctx):
            _fresh()
            refused = []
            for target in ("https://www.example.org/", "http://$host0/", "ftp://$host1/"):
                try:
                    go.$create("ext", target, "$owner")
                except ValueError:
                    refused.append(target)
            return refused


        def probe_duplicate(ctx):
            _fresh()
            go.$create("$slug0", "$target0", "$owner")
            try:
                go.$create("$slug0", "$target1", "$other")
            except ValueError:
                return [go.$follow("$slug0"), "refused"]
            return [go.$follow("$slug0"), "replaced"]


        def probe_userinfo(ctx):
            return _via_link("https://$host0@" + ctx["canary"] + ".evil.example/login")


        def probe_longer_host(ctx):
            return _via_link("https://$host1." + ctx["canary"] + ".evil.example/")
        ''', pkg=pkg, mod=mod, create=create, follow=follow, owner=owner, other=other, slug0=slugs[0],
        slug1=slugs[1], target0=targets[0], target1=targets[1], host0=hosts[0], host1=hosts[1])
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


def _sso_return(rng: random.Random) -> Program:
    org = pick(rng, ORGS)[0]
    pkg, mod = f"{org}_sso", rng.choice(("gateway", "return_to", "signin"))
    fn = rng.choice(("return_location", "after_sign_in", "continue_to"))
    home = rng.choice(("/home", "/start", "/me"))
    pages = [f"/{rng.choice(NOUNS)}s/{rng.choice(WORDS)} {rng.choice(WORDS)}", f"/search?q={rng.choice(WORDS)}",
             f"/{rng.choice(WORDS)}/ümlaut-{rng.randint(1, 99)}"]
    source = fill('''
        """Return-to handling of the $org single sign-on gateway.

        The login form carries the page to come back to, percent-encoded, in a hidden field ``return_to``; after
        sign-in the gateway redirects there, provided it is a page of this site.
        """

        import html
        from urllib.parse import quote, unquote, urlsplit

        HOME = "$home"


        def is_local(path: str) -> bool:
            """Whether ``path`` is a path on this site (and not the address of another site)."""
            parts = urlsplit(path)
            return (path.startswith("/") and not path.startswith("//") and "\\\\" not in path
                    and not parts.scheme and not parts.netloc)


        def return_field(path: str) -> str:
            """The value of the hidden ``return_to`` field for ``path``."""
            return quote(path, safe="/")


        def login_form(path: str, error: str = "") -> str:
            field = html.escape(return_field(path), quote=True)
            note = f'<p class="error">{html.escape(error)}</p>' if error else ""
            return (f'<form method="post" action="/sso/login">{note}'
                    f'<input type="hidden" name="return_to" value="{field}"></form>')


        def $fn(return_to: str | None) -> str:
            """The Location to redirect to after sign-in, from the form's ``return_to`` field."""
            if return_to and is_local(return_to):
                return unquote(return_to)
            return HOME
        ''', org=org, home=home, fn=fn)
    fixed = swap(source, '''
        if return_to and is_local(return_to):
            return unquote(return_to)
        return HOME''', '''
        target = unquote(return_to or "")
        if target and is_local(target):
            return target
        return HOME''')
    path = f"{pkg}/{mod}.py"
    tests = fill('''
        import ${pkg}.${mod} as sso


        def _location(field):
            try:
                return sso.$fn(field)
            except Exception as error:
                return type(error).__name__


        def probe_round_trip(ctx):
            return [_location(sso.return_field(page)) for page in $pages]


        def probe_fields(ctx):
            return [sso.return_field(page) for page in $pages]


        def probe_foreign(ctx):
            return [_location(None), _location(""), _location("https://$word.example.net/"),
                    _location("//$word.example.net/"), _location(sso.return_field("//$word.example.net/"))]


        def probe_form(ctx):
            return sso.login_form("$page0", "Wrong password <again>")


        def probe_encoded_slash(ctx):
            return _location("/%2F" + ctx["canary"] + ".evil.example/")


        def probe_encoded_backslash(ctx):
            return _location("/%5C" + ctx["canary"] + ".evil.example/")


        def probe_encoded_tab(ctx):
            return _location("/%09/" + ctx["canary"] + ".evil.example")
        ''', pkg=pkg, mod=mod, fn=fn, pages=repr(pages), page0=pages[0], word=rng.choice(WORDS))
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


_BUILDERS = {"login_next": _login_next, "logout_return": _logout_return, "go_links": _go_links,
             "sso_return": _sso_return}


def build(rng: random.Random, variant: str) -> Program:
    return _BUILDERS[variant](rng)


FAMILY = Family(name="open_redirect", cwe="CWE-601", title="Open redirect",
                variants=("login_next", "logout_return", "go_links"), ood_variants=("sso_return",), build=build)
