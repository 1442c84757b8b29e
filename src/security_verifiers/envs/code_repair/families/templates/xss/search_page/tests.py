import T_pkg_T.search as search
T_active_T


def probe_results(ctx):
    return search.T_page_fn_T("T_lower_T")


def probe_none(ctx):
    return search.T_page_fn_T("T_missing_T")


def probe_empty(ctx):
    return search.T_page_fn_T("")


def probe_rows(ctx):
    return [list(row) for row in search.T_search_fn_T("T_term_T", limit=2)]


def probe_script(ctx):
    return active(search.T_page_fn_T, "<script>" + ctx["canary"] + "</script>")


def probe_attribute(ctx):
    return active(search.T_page_fn_T, 'T_term_T" autofocus onfocus="' + ctx["canary"])


def probe_svg(ctx):
    return active(search.T_page_fn_T, "T_term_T <svg onload=" + ctx["canary"] + ">")
