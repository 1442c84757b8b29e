T_prelude_T
import os
import string

import T_pkg_T.password_reset as reset


def _fresh(name):
    path = "/tmp/" + name + ".sqlite3"
    if os.path.exists(path):
        os.remove(path)
    reset.DB_PATH = path


def probe_format(ctx):
    _fresh("format")
    tokens = [reset.T_request_T("T_email_T", now=1000.0) for _ in range(4)]
    alphabet = set(string.ascii_letters + string.digits)
    return [sorted({len(token) for token in tokens}), set("".join(tokens)) <= alphabet]


def probe_redeem_once(ctx):
    _fresh("once")
    token = reset.T_request_T("T_email_T", now=1000.0)
    return [reset.T_redeem_T(token, now=T_inside_T), reset.T_redeem_T(token, now=T_inside_T)]


def probe_expired(ctx):
    _fresh("expired")
    token = reset.T_request_T("T_other_T@T_domain_T", now=1000.0)
    return [reset.outstanding("T_other_T@T_domain_T", now=1001.0), reset.T_redeem_T(token, now=T_after_T)]


def probe_unknown(ctx):
    _fresh("unknown")
    reset.T_request_T("T_email_T", now=1000.0)
    return reset.T_redeem_T("T_guess_T", now=1001.0)


def probe_purge(ctx):
    _fresh("purge")
    for when in (1000.0, 2000.0, 5000.0):
        reset.T_request_T("T_other_T@T_domain_T", now=when)
    return [reset.T_purge_T(now=T_purge_at_T), reset.outstanding("T_other_T@T_domain_T", now=T_purge_at_T)]


def probe_bad_address(ctx):
    _fresh("bad")
    try:
        reset.T_request_T("T_other_T.T_domain_T")
    except ValueError:
        return "refused"
    return "accepted"


# a token in the setup: a generator seeded at its first use is seeded here, from the setup's bytes
try:
    _fresh("warm")
    reset.T_request_T("T_email_T")
except Exception:
    pass


def probe_fresh(ctx):
    _fresh("fresh")
    return _issued([reset.T_request_T("T_email_T"), reset.T_request_T("T_email_T"), reset.T_request_T("T_other_T@T_domain_T")])
