import T_pkg_T.T_mod_T as hr

STAFF = T_rows_T


def _fresh(ctx):
    hr.DB_PATH = ":memory:"
    hr._conn = None
    for index, row in enumerate(STAFF):
        hr.hire(*row[:6], ctx["canary"] if index == T_victim_T else row[6])


def probe_rows(ctx):
    _fresh(ctx)
    return hr.T_rows_fn_T("T_team_T", ["name", "title"])


def probe_default(ctx):
    _fresh(ctx)
    return hr.T_rows_fn_T("T_other_T")


def probe_csv(ctx):
    _fresh(ctx)
    return hr.export_csv("T_team_T", ("office", "name", "phone"))


def probe_teams(ctx):
    _fresh(ctx)
    return hr.teams()


def probe_xml(ctx):
    _fresh(ctx)
    return hr.export_xml("T_team_T", ["name", "office"])


def probe_unknown_column(ctx):
    _fresh(ctx)
    try:
        hr.T_rows_fn_T("T_team_T", ["name", "nickname"])
    except Exception:
        return "refused"
    return "exported"


def probe_hidden_column(ctx):
    _fresh(ctx)
    try:
        return hr.T_rows_fn_T("T_team_T", ["name", "T_secret_T"])
    except Exception as error:
        return type(error).__name__


def probe_subquery(ctx):
    _fresh(ctx)
    try:
        return hr.T_rows_fn_T("T_other_T", ["name", "(SELECT group_concat(T_secret_T, ' ') FROM staff)"])
    except Exception as error:
        return type(error).__name__


def probe_csv_columns(ctx):
    _fresh(ctx)
    try:
        return hr.export_csv("T_team_T", ["name", "salary || ' ' || T_secret_T"])
    except Exception as error:
        return type(error).__name__
