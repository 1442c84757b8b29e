import T_pkg_T.T_mod_T as go


def _fresh():
    go._db = None


def _via_link(target):
    _fresh()
    try:
        go.T_create_T("x", target, "T_other_T")
    except Exception:
        pass
    try:
        return go.T_follow_T("x")
    except Exception as error:
        return type(error).__name__


def probe_follow(ctx):
    _fresh()
    made = [go.T_create_T("T_slug0_T", "T_target0_T", "T_owner_T"), go.T_create_T("T_slug1_T", "T_target1_T", "T_owner_T")]
    return made + [go.T_follow_T("T_slug0_T"), go.T_follow_T("T_slug1_T".upper())]


def probe_unknown(ctx):
    _fresh()
    return go.T_follow_T("nothing-here")


def probe_lucky(ctx):
    _fresh()
    empty = go.lucky()
    go.T_create_T("T_slug0_T", "T_target0_T", "T_owner_T")
    go.T_create_T("T_slug1_T", "T_target1_T", "T_other_T")
    return [empty, go.lucky() in ("T_target0_T", "T_target1_T")]


def probe_hits(ctx):
    _fresh()
    go.T_create_T("T_slug0_T", "T_target0_T", "T_owner_T")
    go.T_create_T("T_slug1_T", "T_target1_T", "T_other_T")
    for _ in range(3):
        go.T_follow_T("T_slug0_T")
    return [go.links_of("T_owner_T"), go.links_of("T_other_T")]


def probe_external(ctx):
    _fresh()
    refused = []
    for target in ("https://www.example.org/", "http://T_host0_T/", "ftp://T_host1_T/"):
        try:
            go.T_create_T("ext", target, "T_owner_T")
        except ValueError:
            refused.append(target)
    return refused


def probe_duplicate(ctx):
    _fresh()
    go.T_create_T("T_slug0_T", "T_target0_T", "T_owner_T")
    try:
        go.T_create_T("T_slug0_T", "T_target1_T", "T_other_T")
    except ValueError:
        return [go.T_follow_T("T_slug0_T"), "refused"]
    return [go.T_follow_T("T_slug0_T"), "replaced"]


def probe_userinfo(ctx):
    return _via_link("https://T_host0_T@" + ctx["canary"] + ".evil.example/login")


def probe_longer_host(ctx):
    return _via_link("https://T_host1_T." + ctx["canary"] + ".evil.example/")
