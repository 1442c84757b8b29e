import T_pkg_T.T_mod_T as mail

mail.TEMPLATE_DIR = ROOT + "/data/templates"


def _load(name):
    try:
        return mail.load(name)
    except Exception as error:
        return type(error).__name__


def probe_welcome(ctx):
    return mail.T_render_T("welcome.txt", name="T_person_T")


def probe_escaped(ctx):
    return mail.T_render_T("T_noun_T/reminder.txt", name="<b>T_person_T</b>", number="T_number_T")


def probe_available(ctx):
    return mail.available()


def probe_outside(ctx):
    return [_load("../../secret/T_secret_T"), _load("T_noun_T/../welcome.txt")]


def probe_missing(ctx):
    return _load("T_noun_T/nothing.txt")


def probe_sibling(ctx):
    return _load("../T_sibling_T/T_secret_T")


def probe_absolute(ctx):
    return _load(ROOT + "/data/T_sibling_T/T_secret_T")


def probe_render_sibling(ctx):
    try:
        return mail.T_render_T("T_noun_T/../../T_sibling_T/./T_secret_T", name="x")
    except Exception as error:
        return type(error).__name__
