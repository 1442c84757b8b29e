T_prelude_T
import T_pkg_T.accounts as accounts


def _fresh(name):
    path = "/tmp/" + name + ".sqlite3"
    if os.path.exists(path):
        os.remove(path)
    accounts.DB_PATH = path


def _in_store(name):
    where, work = _store(name)
    accounts.DB_PATH = where + "/pushgateway.sqlite3"
    return work


def _basic(name, secret):
    return "Basic " + base64.b64encode((name + ":" + secret).encode()).decode()


def probe_basic_auth(ctx):
    _fresh("basic")
    accounts.T_create_T("T_a_T", "T_team1_T", "T_sec_a_T")
    return [accounts.T_check_T("T_basic_a_T"), accounts.T_check_T("T_basic_wrong_T"), accounts.T_check_T("T_basic_b_T"),
            accounts.T_check_T("Bearer T_sec_a_T"), accounts.T_check_T("Basic !!!")]


def probe_teams(ctx):
    _fresh("teams")
    for name, team, secret in (("T_c_T", "T_team2_T", "T_sec_c_T"), ("T_b_T", "T_team1_T", "T_sec_b_T")):
        accounts.T_create_T(name, team, secret)
    return [accounts.T_check_T("T_basic_b_T"), accounts.T_check_T("T_basic_c_T"), accounts.accounts_of("T_team1_T"),
            accounts.accounts_of("T_team2_T")]


def probe_rotate(ctx):
    _fresh("rotate")
    accounts.T_create_T("T_b_T", "T_team1_T", "T_sec_b_T")
    rotated = [accounts.T_rotate_T("T_b_T", "T_sec_c_T"), accounts.T_rotate_T("T_a_T", "T_sec_c_T")]
    return rotated + [accounts.T_check_T("T_basic_b_T"), accounts.T_check_T(_basic("T_b_T", "T_sec_c_T"))]


def probe_refusals(ctx):
    _fresh("refusals")
    accounts.T_create_T("T_a_T", "T_team1_T", "T_sec_a_T")
    outcomes = []
    for name, secret in (("T_a_T", "T_sec_b_T"), ("T_c_T", "short")):
        try:
            accounts.T_create_T(name, "T_team2_T", secret)
            outcomes.append("created")
        except ValueError:
            outcomes.append("refused")
    return outcomes


def probe_stored_fast(ctx):
    work = _in_store("fast")
    try:
        spent = _cpu_of(lambda: accounts.T_create_T("T_attacker_T", "T_team2_T", ctx["canary"]))
    except Exception:
        return True
    return _weak(ctx["canary"], "T_attacker_T", work, spent)


def probe_rotated_fast(ctx):
    work = _in_store("rotated")
    try:
        accounts.T_create_T("T_attacker_T", "T_team2_T", "T_sec_c_T")
        spent = _cpu_of(lambda: accounts.T_rotate_T("T_attacker_T", ctx["canary"]))
    except Exception:
        return True
    return _weak(ctx["canary"], "T_attacker_T", work, spent)
