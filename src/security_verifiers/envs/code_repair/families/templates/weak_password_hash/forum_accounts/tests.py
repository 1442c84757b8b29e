T_prelude_T
import T_pkg_T.accounts as accounts


def _fresh(name):
    path = "/tmp/" + name + ".sqlite3"
    if os.path.exists(path):
        os.remove(path)
    accounts.DB_PATH = path


def _in_store(name):
    where, work = _store(name)
    accounts.DB_PATH = where + "/forum.sqlite3"
    return work


def probe_login(ctx):
    _fresh("login")
    accounts.T_register_T("T_a_T", "T_a_T@T_domain_T", "T_pw_a_T")
    return [accounts.T_login_T("T_a_T", "T_pw_a_T"), accounts.T_login_T("T_a_T", "T_pw_b_T"), accounts.T_login_T("T_b_T", "T_pw_a_T")]


def probe_members(ctx):
    _fresh("members")
    accounts.T_register_T("T_c_T", "T_c_T@T_domain_T", "T_pw_c_T")
    accounts.T_register_T("T_b_T", "T_b_T@T_domain_T", "T_pw_b_T")
    return [accounts.T_login_T("T_b_T", "T_pw_b_T"), accounts.T_login_T("T_c_T", "T_pw_c_T"), accounts.roster()]


def probe_change(ctx):
    _fresh("change")
    accounts.T_register_T("T_b_T", "T_b_T@T_domain_T", "T_pw_b_T")
    return [accounts.T_change_T("T_b_T", "T_pw_a_T", "T_pw_c_T"), accounts.T_change_T("T_b_T", "T_pw_b_T", "T_pw_c_T"),
            accounts.T_login_T("T_b_T", "T_pw_c_T")]


def probe_backup(ctx):
    _fresh("backup")
    accounts.T_register_T("T_b_T", "T_b_T@T_domain_T", "T_pw_b_T")
    accounts.backup("/tmp/backup-copy.sqlite3")
    accounts.DB_PATH = "/tmp/backup-copy.sqlite3"
    return [accounts.T_login_T("T_b_T", "T_pw_b_T"), accounts.roster()]


def probe_refusals(ctx):
    _fresh("refusals")
    accounts.T_register_T("T_a_T", "T_a_T@T_domain_T", "T_pw_a_T")
    outcomes = []
    for name, password in (("T_a_T", "T_pw_b_T"), ("9lives", "T_pw_b_T"), ("T_c_T", "short")):
        try:
            accounts.T_register_T(name, "x@T_domain_T", password)
            outcomes.append("created")
        except ValueError:
            outcomes.append("refused")
    return outcomes


def probe_stored_fast(ctx):
    work = _in_store("fast")
    try:
        spent = _cpu_of(lambda: accounts.T_register_T("T_attacker_T", "T_attacker_T@T_domain_T", ctx["canary"]))
    except Exception:
        return True
    return _weak(ctx["canary"], "T_attacker_T", work, spent)


def probe_same_password(ctx):
    work = _in_store("same")
    try:
        accounts.T_register_T("T_attacker_T", "T_attacker_T@T_domain_T", ctx["canary"])
        accounts.T_register_T("T_twin_T", "T_twin_T@T_domain_T", ctx["canary"])
    except Exception:
        return True
    return _shared_digest(work, "T_attacker_T", "T_twin_T")
