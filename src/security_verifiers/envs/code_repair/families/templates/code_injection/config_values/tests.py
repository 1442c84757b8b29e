import T_pkg_T.settings as settings

SECRET = ROOT + "/T_relative_T"

TEXT = T_text_T


def _attempt(text):
    try:
        return settings.T_parse_T(text)
    except Exception as error:
        return type(error).__name__


def probe_parse(ctx):
    return settings.T_parse_T(TEXT)


def probe_defaults(ctx):
    return settings.T_parse_T("# nothing set\n")


def probe_changed(ctx):
    return settings.changed(settings.T_parse_T(""), settings.T_parse_T(TEXT))


def probe_fingerprint(ctx):
    return settings.fingerprint(TEXT)


def probe_bad_line(ctx):
    try:
        settings.T_parse_T("page_size 10\n")
    except ValueError as error:
        return str(error)
    return "parsed"


def probe_read_secret(ctx):
    return _attempt("theme = 'dark'\nmotto = open('" + SECRET + "').read()\n")


def probe_no_builtins(ctx):
    return _attempt("motto = " + T_walk_T + "['__builtins__']['open']('" + SECRET + "').read()\n")


def probe_command(ctx):
    return _attempt("page_size = __import__('os').system('touch " + ctx["marker"] + "')\n")
