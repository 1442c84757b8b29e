import T_pkg_T.columns as columns

SECRET = ROOT + "/T_relative_T"

TEXT = T_text_T


def _attempt(formula):
    try:
        return columns.T_add_fn_T(TEXT, "extra", formula)
    except Exception as error:
        return type(error).__name__


def probe_net(ctx):
    return columns.T_add_fn_T(TEXT, "net", "round(price * quantity * (100 - discount) / 100, 2)")


def probe_compiled(ctx):
    formula = "max(price - discount, 1) * 2 + quantity % 3"
    compute = columns.T_compile_fn_T(formula, ["price", "quantity", "discount"])
    return compute(T_first_T)


def probe_rows(ctx):
    return columns.read_rows(TEXT)[0]


def probe_duplicate(ctx):
    try:
        columns.T_add_fn_T(TEXT, "price", "price")
    except ValueError:
        return "refused"
    return "added"


def probe_read_secret(ctx):
    return _attempt("open('" + SECRET + "').read()")


def probe_no_builtins(ctx):
    return _attempt(T_walk_T + "['__builtins__']['open']('" + SECRET + "').read()")


def probe_statement(ctx):
    return _attempt("0\nopen('" + ctx["marker"] + "', 'w').close()")
