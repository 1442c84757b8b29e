import tidepool.sessions as sessions


def _sid(set_cookie):
    return set_cookie.split(";", 1)[0].partition("=")[2]


def _user(header):
    try:
        return sessions.current_user(header)
    except Exception as error:
        return type(error).__name__


def _victim_and_attacker(ctx):
    """A signed-in victim, and the attacker's own session (the attacker signed in as themself: the canary). Their
    ids are set here rather than drawn by login(), so that the probe asks the same whoever answers it."""
    store = ref(sessions, "SESSIONS")  # noqa: F821 (the judge's ref)
    store["v1ct1m-s3ss10n-1d-0f-car0l-2024"] = "carol"
    store["4tt4ck3r-s3ss10n-1d-fr0m-bl0g-7"] = ctx["canary"]
    return "v1ct1m-s3ss10n-1d-0f-car0l-2024", "4tt4ck3r-s3ss10n-1d-fr0m-bl0g-7"


def probe_parse(ctx):
    header = 'theme=dark; lang="en-GB"; token=YWJj==; empty=; _ga=GA1.2.3; flag; __Secure-pref=compact'
    return sessions.parse_cookie(header)


def probe_session(ctx):
    set_cookie = sessions.login("dave")
    header = f"theme=dark; {set_cookie.split(';', 1)[0]}; lang=en"
    return [set_cookie.split(";", 1)[1], len(_sid(set_cookie)) >= 16, _user(header), _user("theme=dark")]


def probe_logout(ctx):
    header = "__Host-sid=" + _sid(sessions.login("erin"))
    before = _user(header)
    cleared = sessions.logout(header)
    return [before, cleared, _user(header), sessions.logout("theme=light")]


def probe_unknown(ctx):
    return [_user("__Host-sid=not-a-session"), _user(None), _user(""), _user("__Host-sid=")]


def probe_nameless_after(ctx):
    victim, attacker = _victim_and_attacker(ctx)
    return _user(f"__Host-sid={victim}; =__Host-sid={attacker}")


def probe_nameless_alone(ctx):
    _, attacker = _victim_and_attacker(ctx)
    return _user(f"theme=dark; =__Host-sid={attacker}")


def probe_nameless_spaced(ctx):
    victim, attacker = _victim_and_attacker(ctx)
    return _user(f"__Host-sid={victim}; lang=en; = __Host-sid={attacker}; theme=dark")
