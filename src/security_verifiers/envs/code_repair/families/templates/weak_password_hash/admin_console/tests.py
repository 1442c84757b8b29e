T_prelude_T
from pathlib import Path

import T_pkg_T.operators as operators


def _fresh(name):
    path = Path("/tmp/" + name + ".json")
    path.unlink(missing_ok=True)
    operators.USERS_FILE = path


def _in_store(name):
    where, work = _store(name)
    operators.USERS_FILE = Path(where + "/users.json")
    return work


def probe_sign_in(ctx):
    _fresh("sign_in")
    operators.T_add_T("T_a_T", "T_pw_a_T", "operator")
    return [operators.T_auth_T("T_a_T", "T_pw_a_T"), operators.T_auth_T("T_a_T", "T_pw_b_T"), operators.T_auth_T("T_b_T", "T_pw_a_T")]


def probe_two_operators(ctx):
    _fresh("two")
    operators.T_add_T("T_b_T", "T_pw_b_T", "admin")
    operators.T_add_T("T_a_T", "T_pw_a_T")
    return [operators.T_auth_T("T_b_T", "T_pw_b_T"), operators.T_auth_T("T_a_T", "T_pw_a_T"), operators.operators()]


def probe_reset(ctx):
    _fresh("reset")
    operators.T_add_T("T_b_T", "T_pw_b_T", "admin")
    changed = [operators.T_reset_T("T_b_T", "T_extra_T"), operators.T_reset_T("T_a_T", "T_extra_T")]
    return changed + [operators.T_auth_T("T_b_T", "T_pw_b_T"), operators.T_auth_T("T_b_T", "T_extra_T")]


def probe_disable(ctx):
    _fresh("disable")
    operators.T_add_T("T_a_T", "T_pw_a_T", "operator")
    return [operators.disable("T_a_T"), operators.T_auth_T("T_a_T", "T_pw_a_T"), operators.operators()]


def probe_refusals(ctx):
    _fresh("refusals")
    operators.T_add_T("T_a_T", "T_pw_a_T")
    outcomes = []
    for name, role in (("T_a_T", "viewer"), ("T_b_T", "root")):
        try:
            operators.T_add_T(name, "T_pw_b_T", role)
            outcomes.append("created")
        except ValueError:
            outcomes.append("refused")
    return outcomes + [operators.operators()]


def probe_stored_fast(ctx):
    work = _in_store("fast")
    try:
        spent = _cpu_of(lambda: operators.T_add_T("T_attacker_T", ctx["canary"], "admin"))
    except Exception:
        return True
    return _weak(ctx["canary"], "T_attacker_T", work, spent)


def probe_reset_fast(ctx):
    work = _in_store("reset")
    try:
        operators.T_add_T("T_attacker_T", "T_pw_a_T")
        spent = _cpu_of(lambda: operators.T_reset_T("T_attacker_T", ctx["canary"]))
    except Exception:
        return True
    return _weak(ctx["canary"], "T_attacker_T", work, spent)


def probe_same_password(ctx):
    work = _in_store("same")
    try:
        operators.T_add_T("T_attacker_T", ctx["canary"], "admin")
        operators.T_add_T("T_twin_T", ctx["canary"], "operator")
    except Exception:
        return True
    return _shared_digest(work, "T_attacker_T", "T_twin_T")
