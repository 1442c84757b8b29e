from urllib.parse import parse_qs, urlsplit

import T_pkg_T.T_mod_T as auth
import T_pkg_T.sessions as sessions


def _query(link):
    return {key: values[0] for key, values in parse_qs(urlsplit(link).query).items()}


def _location(next_url):
    try:
        query = _query(sessions.magic_link("T_user_T", next_url))
        return auth.verify(query["token"], query.get("next"))["location"]
    except Exception as error:
        return type(error).__name__


def probe_back_to_page(ctx):
    link = sessions.magic_link("T_user_T", "T_page_T")
    query = _query(link)
    result = auth.verify(query["token"], query.get("next"))
    return [urlsplit(link).path, sorted(query), query["next"], result["location"],
            sessions.whoami(result["session"])]


def probe_default(ctx):
    return [_location(None), _location(""), _location("/"), auth.T_fn_T(None)]


def probe_other_site(ctx):
    return [_location("https://T_word_T.example.net/"), auth.T_fn_T("javascript:alert(1)")]


def probe_used_twice(ctx):
    token = _query(sessions.magic_link("T_user_T", "T_page_T"))["token"]
    first = auth.verify(token, "T_page_T")["location"]
    second = auth.verify(token, "T_page_T")
    return [first, second, auth.verify("no-such-token")]


def _followed(next_url):
    """Where a sign-in link for next_url leads, the link going from magic_link to verify inside the program
    (map): its token is drawn there, another in every run, and an exploit probe replayed as a plain script
    must ask the very requests it asked the live program."""
    b, op, parse = program_module("builtins"), program_module("operator"), program_module("urllib.parse")
    try:
        links = b.map(sessions.magic_link, ["T_user_T"], [next_url])
        queries = b.map(op.attrgetter("query"), b.map(parse.urlsplit, links))
        fields = b.map(op.itemgetter("token", "next"), b.map(b.dict, b.map(parse.parse_qsl, queries)))
        verified = program_module("itertools").starmap(auth.verify, fields)
        return b.list(verified)[0]["location"]
    except Exception as error:
        return type(error).__name__


def probe_scheme_relative(ctx):
    return _followed("//" + ctx["canary"] + ".evil.example/account")


def probe_backslash(ctx):
    return _followed("/\\" + ctx["canary"] + ".evil.example/")


def probe_tab(ctx):
    return _followed("/\t/" + ctx["canary"] + ".evil.example")
