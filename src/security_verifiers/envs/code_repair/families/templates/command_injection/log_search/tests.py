from pathlib import Path

import T_pkg_T.search as search

search.LOG_DIR = Path(ROOT + "/data/logs")


def probe_count(ctx):
    return search.T_fn_T("T_term_T")


def probe_other_log(ctx):
    return search.T_fn_T("T_other_T", "auth.log")


def probe_summary(ctx):
    return search.summary(["T_term_T", "no-such-term-zz"])


def probe_report(ctx):
    return search.report(["T_other_T"], "auth.log")


def probe_logs(ctx):
    return search.available_logs()


def probe_tail(ctx):
    return search.tail("auth.log", 2)


def probe_missing_log(ctx):
    try:
        search.T_fn_T("T_term_T", "nope.log")
    except FileNotFoundError:
        return "not found"
    return "found"


def probe_quote_break(ctx):
    try:
        search.T_fn_T("x' ; touch " + ctx["marker"] + " ; echo '")
    except Exception as error:
        return type(error).__name__
    return "ran"


def probe_substitution(ctx):
    try:
        search.T_fn_T("x'$(touch " + ctx["marker"] + ")'", "auth.log")
    except Exception as error:
        return type(error).__name__
    return "ran"
