from pathlib import Path

import T_pkg_T.counts as counts

counts.EXPORT_DIR = Path(ROOT + "/data/exports")


def probe_rows(ctx):
    return counts.rows("T_first_T")


def probe_dashboard(ctx):
    return [list(pair) for pair in counts.dashboard(T_names_T)]


def probe_total(ctx):
    return counts.total("T_first_T")


def probe_reports(ctx):
    return counts.reports()


def probe_not_csv(ctx):
    try:
        counts.rows("T_first_T.txt")
    except ValueError:
        return "refused"
    return "accepted"


def probe_chain(ctx):
    try:
        counts.rows("x.csv; touch " + ctx["marker"] + " #.csv")
    except Exception as error:
        return type(error).__name__
    return "ran"


def probe_backticks(ctx):
    try:
        counts.rows("`touch " + ctx["marker"] + "`.csv")
    except Exception as error:
        return type(error).__name__
    return "ran"
