import json

import T_pkg_T.ranking as ranking
import T_pkg_T.reports as reports
T_active_T

ORDERS = T_orders_T


def _with_customer(name):
    return ORDERS + [{"customer": name, "amount": 100000}]


def _embedded(page):
    return json.loads(page.split("window.REPORT = ", 1)[1].split(";</script>", 1)[0])


def probe_page(ctx):
    return reports.T_render_fn_T("T_title_T", ORDERS)


def probe_ranking(ctx):
    return ranking.T_top_fn_T(ORDERS, 2)


def probe_export(ctx):
    return ranking.revenue_csv(ORDERS)


def probe_last(ctx):
    reports.T_render_fn_T("T_title_T", ORDERS)
    reports.T_render_fn_T("T_title_T", _with_customer(T_odd_T))
    return [reports.last_state("T_title_T"), reports.last_state("nothing yet")]


def probe_embedded(ctx):
    return _embedded(reports.T_render_fn_T("T_title_T", _with_customer(T_odd_T)))


def probe_script(ctx):
    customer = "</script><script>" + ctx["canary"] + "</script>"
    return active(reports.T_render_fn_T, "T_title_T", _with_customer(customer))


def probe_image(ctx):
    customer = "</SCRIPT><img src=x onerror=" + ctx["canary"] + ">"
    return active(reports.T_render_fn_T, "T_title_T", _with_customer(customer))
