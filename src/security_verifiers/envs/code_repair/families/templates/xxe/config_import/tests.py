import T_pkg_T.settings_import as settings_import

SECRET = ROOT + "/T_relative_T"

DOCUMENT = T_document_T


def _attempt(document):
    try:
        return settings_import.T_read_fn_T(document.encode())
    except Exception as error:
        return type(error).__name__


def probe_read(ctx):
    return settings_import.T_read_fn_T(DOCUMENT.encode())


def probe_round_trip(ctx):
    return settings_import.T_read_fn_T(settings_import.export(T_odd_T))


def probe_unknown_type(ctx):
    try:
        settings_import.T_read_fn_T(b'<settings><setting name="x" type="date">2020</setting></settings>')
    except ValueError as error:
        return str(error)
    return "read"


def probe_file_url(ctx):
    return _attempt(T_attack_url_T)


def probe_bare_path(ctx):
    return _attempt(T_attack_path_T)
