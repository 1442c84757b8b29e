import json

import T_pkg_T.formulas as amounts
import T_pkg_T.invoices as invoices

SECRET = ROOT + "/T_relative_T"


def _attempt(expression):
    try:
        return amounts.T_calc_T(expression)
    except Exception as error:
        return type(error).__name__ + ": " + str(error)


def probe_formula(ctx):
    return amounts.T_calc_T("T_qty_T * T_price_T")


def probe_functions(ctx):
    return [amounts.T_calc_T("max(T_cap_T, T_qty_T * 25)"), amounts.T_calc_T("round(T_price_T / 3, 1)"),
            amounts.T_calc_T("-(T_extra_T - 2 ** 3) % 7")]


def probe_totals(ctx):
    return invoices.totals(T_lines_T, "T_region_T")


def probe_summary(ctx):
    return invoices.summary(T_lines_T, "T_region_T")


def probe_draft(ctx):
    return json.loads(invoices.draft(T_lines_T, "T_region_T"))["totals"]


def probe_split(ctx):
    return invoices.T_split_T(amounts.T_calc_T("T_price_T + T_extra_T"), T_parts_T)


def probe_not_amount(ctx):
    try:
        amounts.T_calc_T("T_qty_T > 1")
    except ValueError:
        return "refused"
    return "accepted"


def probe_read_secret(ctx):
    return _attempt(T_walk_T + "['__builtins__']['open']('" + SECRET + "').read()")


def probe_run_command(ctx):
    return [_attempt(T_walk_T + "['system']('touch " + ctx["marker"] + "')")]
