import T_pkg_T.T_mod_T as billing


def _fresh():
    ref(billing, "_invoices").clear()
    ref(billing, "_issued").clear()
    billing._ids = program_module("itertools").count(1)


def _drafted(user, customer):
    invoice_id = billing.T_draft_T(user, customer)
    for text, cents in T_lines_T:
        billing.add_line(user, invoice_id, text, cents)
    return invoice_id


def _name(call):
    try:
        call()
    except Exception as error:
        return type(error).__name__
    return "ok"


def probe_total(ctx):
    _fresh()
    invoice_id = _drafted("T_owner_T", "T_customer_T")
    return [billing.total("T_owner_T", invoice_id), billing.invoices_of("T_owner_T"),
            billing.invoices_of("T_attacker_T")]


def probe_memo(ctx):
    _fresh()
    invoice_id = _drafted("T_owner_T", "T_customer_T")
    return billing.T_set_memo_T("T_owner_T", invoice_id, "  T_memo_T ")


def probe_render(ctx):
    _fresh()
    invoice_id = _drafted("T_owner_T", "T_customer_T")
    billing.T_set_memo_T("T_owner_T", invoice_id, "T_memo_T")
    return billing.render("T_owner_T", invoice_id)


def probe_checked(ctx):
    _fresh()
    invoice_id = _drafted("T_owner_T", "T_customer_T")
    return [_name(lambda: billing.total("T_attacker_T", invoice_id)),
            _name(lambda: billing.add_line("T_attacker_T", invoice_id, "x", 1)),
            _name(lambda: billing.render("T_attacker_T", 99)), _name(lambda: billing.T_set_memo_T("T_owner_T", 99, "x"))]


def probe_issued(ctx):
    _fresh()
    invoice_id = _drafted("T_owner_T", "T_customer_T")
    status = billing.issue("T_owner_T", invoice_id)["status"]
    return [status, _name(lambda: billing.add_line("T_owner_T", invoice_id, "late", 5)),
            _name(lambda: billing.issue("T_owner_T", billing.T_draft_T("T_owner_T", "Empty")))]


def probe_as_issued(ctx):
    _fresh()
    invoice_id = _drafted("T_owner_T", "T_customer_T")
    billing.T_set_memo_T("T_owner_T", invoice_id, "first")
    billing.issue("T_owner_T", invoice_id)
    billing.T_set_memo_T("T_owner_T", invoice_id, "second")
    return [billing.as_issued("T_owner_T", invoice_id)["memo"], billing.render("T_owner_T", invoice_id)[-13:],
            _name(lambda: billing.as_issued("T_attacker_T", invoice_id)),
            _name(lambda: billing.as_issued("T_owner_T", billing.T_draft_T("T_owner_T", "Later")))]


def probe_read_back(ctx):
    _fresh()
    invoice_id = _drafted("T_owner_T", "Customer " + ctx["canary"])
    billing.T_draft_T("T_attacker_T", "Mine")
    try:
        return billing.T_set_memo_T("T_attacker_T", invoice_id, "thanks")
    except Exception as error:
        return type(error).__name__


def probe_tamper(ctx):
    _fresh()
    invoice_id = _drafted("T_owner_T", "T_customer_T")
    try:
        billing.T_set_memo_T("T_attacker_T", invoice_id, "New bank account: " + ctx["canary"])
    except Exception:
        pass
    return billing.render("T_owner_T", invoice_id)
