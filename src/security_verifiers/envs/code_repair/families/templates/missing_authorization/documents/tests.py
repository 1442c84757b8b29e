import T_pkg_T.T_mod_T as store
import T_pkg_T.database as database


def _fresh():
    database.DB_PATH = ":memory:"
    database._conn = None


def _ids():
    return [store.T_create_T("T_owner_T", title, body) for title, body in T_docs_T]


def probe_markdown(ctx):
    _fresh()
    ids = _ids()
    return [store.T_export_T("T_owner_T", ids[0]), store.T_export_T("T_owner_T", ids[2], fmt="markdown")]


def probe_json(ctx):
    _fresh()
    ids = _ids()
    return store.T_export_T("T_owner_T", ids[1], "json")


def probe_xml(ctx):
    _fresh()
    ids = _ids()
    return store.T_export_T("T_owner_T", ids[0], "xml")


def probe_titles(ctx):
    _fresh()
    ids = _ids()
    store.rename("T_owner_T", ids[2], "Zz old")
    store.T_create_T("T_attacker_T", "Mine", "x")
    return [store.titles("T_owner_T"), store.titles("T_attacker_T"), store.T_get_T("T_owner_T", ids[2])["title"]]


def probe_checked(ctx):
    _fresh()
    ids = _ids()
    out = []
    for call in (lambda: store.T_get_T("T_attacker_T", ids[0]), lambda: store.rename("T_attacker_T", ids[0], "x"),
                 lambda: store.T_export_T("T_owner_T", 999), lambda: store.T_export_T("T_owner_T", ids[0], "pdf")):
        try:
            call()
            out.append("ok")
        except Exception as error:
            out.append(type(error).__name__)
    return out


def probe_other_users(ctx):
    _fresh()
    doc_id = store.T_create_T("T_owner_T", "T_leak_title_T", "figures: " + ctx["canary"])
    try:
        return store.T_export_T("T_attacker_T", doc_id)
    except Exception as error:
        return type(error).__name__


def probe_enumerate(ctx):
    _fresh()
    store.T_create_T("T_owner_T", "Salary review " + ctx["canary"], "confidential")
    store.T_create_T("T_attacker_T", "My own", "")
    found = []
    for doc_id in range(1, 12):
        try:
            found.append(store.T_export_T("T_attacker_T", doc_id, "json"))
        except Exception as error:
            found.append(type(error).__name__)
    return found
