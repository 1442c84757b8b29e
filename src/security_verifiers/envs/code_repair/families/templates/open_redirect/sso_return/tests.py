import T_pkg_T.T_mod_T as sso


def _location(field):
    try:
        return sso.T_fn_T(field)
    except Exception as error:
        return type(error).__name__


def probe_round_trip(ctx):
    return [_location(sso.return_field(page)) for page in T_pages_T]


def probe_fields(ctx):
    return [sso.return_field(page) for page in T_pages_T]


def probe_foreign(ctx):
    return [_location(None), _location(""), _location("https://T_word_T.example.net/"),
            _location("//T_word_T.example.net/"), _location(sso.return_field("//T_word_T.example.net/"))]


def probe_form(ctx):
    return sso.login_form("T_page0_T", "Wrong password <again>")


def probe_encoded_slash(ctx):
    return _location("/%2F" + ctx["canary"] + ".evil.example/")


def probe_encoded_backslash(ctx):
    return _location("/%5C" + ctx["canary"] + ".evil.example/")


def probe_encoded_tab(ctx):
    return _location("/%09/" + ctx["canary"] + ".evil.example")
