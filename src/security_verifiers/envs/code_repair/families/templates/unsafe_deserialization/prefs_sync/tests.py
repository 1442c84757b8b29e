import os
import pickle
import zlib

import T_pkg_T.T_mod_T as sync

SENT = T_sent_T
T_payloads_T

def _fresh():
    sync.DB_PATH = ":memory:"
    sync._conn = None


def _upload(user, blob):
    try:
        return sync.T_upload_T(user, blob)
    except Exception as error:
        return type(error).__name__


def probe_upload(ctx):
    _fresh()
    tag = _upload("T_user_T", sync.pack(SENT))
    return [tag, sync.T_fetch_T("T_user_T"), sync.current("T_user_T", tag)]


def probe_defaults(ctx):
    _fresh()
    _upload("T_user_T", sync.pack(SENT))
    return [sync.T_fetch_T("T_other_T"), sync.current("T_other_T", "x")]


def probe_replace(ctx):
    _fresh()
    first = _upload("T_user_T", sync.pack(SENT))
    second = _upload("T_user_T", sync.pack({"language": "nl"}))
    return [second, sync.current("T_user_T", first), sync.T_fetch_T("T_user_T")]


def probe_refused(ctx):
    _fresh()
    return [_upload("T_user_T", sync.pack(["theme", "dark"])), _upload("T_user_T", b"garbage"),
            sync.T_fetch_T("T_user_T") == sync.DEFAULTS]


def probe_open(ctx):
    _fresh()
    return _upload("T_user_T", zlib.compress(_open(ctx["marker"])))


def probe_system(ctx):
    _fresh()
    return _upload("T_user_T", zlib.compress(_system(ctx["marker"])))


def probe_chain(ctx):
    _fresh()
    return _upload("T_user_T", zlib.compress(_chain(ctx["marker"])))
