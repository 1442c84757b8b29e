T_prelude_T
import os
import string
import time

import T_pkg_T.keys as keys


def _fresh(name):
    path = "/tmp/" + name + ".sqlite3"
    if os.path.exists(path):
        os.remove(path)
    keys.DB_PATH = path


def probe_format(ctx):
    _fresh("format")
    made = [keys.T_issue_T(client) for client in ("T_client_T", "T_other_T", "T_client_T-2", "T_other_T-2")]
    bodies = [key[len("T_prefix_T"):] for key in made]
    return [all(key.startswith("T_prefix_T") for key in made), sorted({len(body) for body in bodies}),
            set("".join(bodies)) <= set(string.ascii_letters + string.digits)]


def probe_auth(ctx):
    _fresh("auth")
    key = keys.T_issue_T("T_client_T")
    keys.T_issue_T("T_other_T")
    return [keys.T_auth_T(key), keys.T_auth_T("T_sample_T"), keys.T_auth_T("nope")]


def probe_reissue(ctx):
    _fresh("reissue")
    keys.T_issue_T("T_other_T")
    new = keys.T_issue_T("T_other_T")
    return [keys.T_auth_T(new), keys.T_revoke_T("T_other_T"), keys.T_auth_T(new)]


def probe_revoke(ctx):
    _fresh("revoke")
    key = keys.T_issue_T("T_client_T")
    return [keys.T_revoke_T("T_client_T"), keys.T_auth_T(key), keys.T_revoke_T("T_client_T")]


def probe_stored_digest(ctx):
    import hashlib
    import sqlite3
    _fresh("digest")
    key = keys.T_issue_T("T_client_T")
    db = sqlite3.connect(keys.DB_PATH)
    rows = db.execute("SELECT client, digest FROM api_keys").fetchall()
    db.close()
    return [[rows[0][0], rows[0][1] == hashlib.sha256(key.encode()).hexdigest()], len(rows)]


# a token in the setup: a generator seeded at its first use is seeded here, from the setup's bytes
try:
    _fresh("warm")
    keys.T_issue_T("T_client_T")
except Exception:
    pass


def probe_fresh(ctx):
    _fresh("fresh")
    return _issued([keys.T_issue_T("T_client_T"), keys.T_issue_T("T_client_T"), keys.T_issue_T("T_other_T")])
