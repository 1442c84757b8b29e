import T_pkg_T.conditions as conditions
import T_pkg_T.rules as rules

SECRET = ROOT + "/T_relative_T"

SAMPLE = T_sample_T


def _load():
    ref(rules, "RULES").clear()
    for name, condition, severity in T_rules_T:
        rules.add_rule(name, condition, severity)


def _attempt(condition):
    try:
        return conditions.T_check_T(condition, SAMPLE)
    except Exception as error:
        return type(error).__name__


def probe_preview(ctx):
    return [conditions.T_check_T(condition, SAMPLE) for _, condition, _ in T_rules_T]


def probe_arithmetic(ctx):
    return conditions.T_check_T("T_a_T * 2 - T_c_T", SAMPLE)


def probe_undo(ctx):
    _load()
    return [rules.undo(), rules.firing(SAMPLE)]


def probe_firing(ctx):
    _load()
    return rules.firing(SAMPLE)


def probe_record(ctx):
    _load()
    db = program_module("sqlite3").connect(":memory:")
    count = rules.record(db, "T_host_T", SAMPLE)
    return [count, [list(row) for row in db.execute("SELECT host, rule, severity FROM alerts ORDER BY rule")]]


def probe_read_secret(ctx):
    return _attempt("open('" + SECRET + "').read()")


def probe_no_builtins(ctx):
    return _attempt(T_walk_T + "['__builtins__']['open']('" + SECRET + "').read()")


def probe_rule_command(ctx):
    ref(rules, "RULES").clear()
    try:
        rules.add_rule("audit", "__import__('os').system('touch " + ctx["marker"] + "') == 0")
        return rules.firing(SAMPLE)
    except Exception as error:
        return type(error).__name__
