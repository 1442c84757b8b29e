T_prelude_T
import T_pkg_T.ids as ids
import T_pkg_T.sessions as sessions


def probe_format(ctx):
    ref(sessions, "T_store_T").clear()
    made = [sessions.T_open_fn_T("T_user_T", T_roles_T, now=1000.0) for _ in range(4)]
    return [sorted({len(sid) for sid in made}), set("".join(made)) <= set("0123456789abcdef")]


def probe_lookup(ctx):
    ref(sessions, "T_store_T").clear()
    sid = sessions.T_open_fn_T("T_user_T", T_roles_rev_T, now=1000.0)
    return [sessions.T_get_fn_T(sid, now=1001.0), sessions.T_get_fn_T("0" * 32, now=1001.0)]


def probe_expiry(ctx):
    ref(sessions, "T_store_T").clear()
    sid = sessions.T_open_fn_T("T_other_T", [], now=1000.0)
    kept = sessions.T_get_fn_T(sid, now=T_inside_T) is not None
    return [kept, sessions.T_get_fn_T(sid, now=T_inside_T + T_ttl_T), sessions.T_get_fn_T(sid, now=T_inside_T)]


def probe_logout(ctx):
    ref(sessions, "T_store_T").clear()
    sid = sessions.T_open_fn_T("T_user_T", T_roles_T, now=1000.0)
    return [sessions.T_close_fn_T(sid), sessions.T_close_fn_T(sid), sessions.T_get_fn_T(sid, now=1001.0)]


def probe_signed_in(ctx):
    ref(sessions, "T_store_T").clear()
    for name in ("T_third_T", "T_user_T", "T_third_T", "T_other_T"):
        sessions.T_open_fn_T(name, [], now=1000.0)
    return sessions.signed_in(now=1001.0)


def probe_cookie(ctx):
    ref(sessions, "T_store_T").clear()
    sid = sessions.T_open_fn_T("T_user_T", T_roles_T, now=1000.0)
    header = sessions.cookie_header(sid)
    return [header.startswith("T_cookie_T=" + sid + ";"), "HttpOnly" in header]


def probe_fingerprint(ctx):
    return ids.fingerprint("T_known_T")


# a token in the setup: a generator seeded at its first use is seeded here, from the setup's bytes
try:
    sessions.T_open_fn_T("T_user_T", T_roles_T)
    ref(sessions, "T_store_T").clear()
except Exception:
    pass


def probe_fresh(ctx):
    ref(sessions, "T_store_T").clear()
    return _issued([sessions.T_open_fn_T("T_user_T", T_roles_T), sessions.T_open_fn_T("T_user_T", T_roles_T),
                    sessions.T_open_fn_T("T_other_T", [])])
