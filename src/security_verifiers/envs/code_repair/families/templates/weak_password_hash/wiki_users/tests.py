T_prelude_T
from pathlib import Path

import T_pkg_T.logins as logins


def _fresh(name):
    path = Path("/tmp/" + name + ".passwd")
    path.unlink(missing_ok=True)
    logins.PASSWD_FILE = path


def _in_store(name):
    where, work = _store(name)
    logins.PASSWD_FILE = Path(where + "/passwd")
    return work


def probe_check(ctx):
    _fresh("check")
    logins.T_add_T("T_a_T", "T_pw_a_T")
    return [logins.T_check_T("T_a_T", "T_pw_a_T"), logins.T_check_T("T_a_T", "T_pw_b_T"), logins.T_check_T("T_b_T", "T_pw_a_T")]


def probe_file(ctx):
    _fresh("file")
    logins.T_add_T("T_c_T", "T_pw_c_T")
    logins.T_add_T("T_b_T", "T_pw_b_T")
    names = [line.split(":")[0] for line in Path("/tmp/file.passwd").read_text().splitlines()]
    return [names, logins.logins(), logins.T_check_T("T_b_T", "T_pw_b_T"), logins.T_check_T("T_c_T", "T_pw_c_T")]


def probe_passwd(ctx):
    _fresh("passwd")
    logins.T_add_T("T_b_T", "T_pw_b_T")
    return [logins.T_passwd_T("T_b_T", "T_pw_a_T"), logins.T_passwd_T("T_c_T", "T_pw_a_T"), logins.T_check_T("T_b_T", "T_pw_a_T")]


def probe_remove(ctx):
    _fresh("remove")
    logins.T_add_T("T_a_T", "T_pw_a_T")
    return [logins.T_remove_T("T_a_T"), logins.T_remove_T("T_a_T"), logins.logins(), logins.T_check_T("T_a_T", "T_pw_a_T")]


def probe_refusals(ctx):
    _fresh("refusals")
    logins.T_add_T("T_a_T", "T_pw_a_T")
    outcomes = []
    for name in ("T_a_T", "Bad Name", "T_c_T:root"):
        try:
            logins.T_add_T(name, "T_pw_b_T")
            outcomes.append("added")
        except ValueError:
            outcomes.append("refused")
    return outcomes


def probe_stored_fast(ctx):
    work = _in_store("fast")
    try:
        spent = _cpu_of(lambda: logins.T_add_T("T_attacker_T", ctx["canary"]))
    except Exception:
        return True
    return _weak(ctx["canary"], "T_attacker_T", work, spent)


def probe_same_password(ctx):
    work = _in_store("same")
    try:
        logins.T_add_T("T_attacker_T", ctx["canary"])
        logins.T_add_T("T_twin_T", ctx["canary"])
    except Exception:
        return True
    return _shared_digest(work, "T_attacker_T", "T_twin_T")
