import hashlib

import T_pkg_T.T_mod_T as store
import T_pkg_T.database as database

ROWS = T_rows_T


def _fresh(ctx):
    database.DB_PATH = ":memory:"
    database._conn = None
    db = database.db()
    db.executemany("INSERT INTO T_table_T (owner, label, T_col_T) VALUES (?, ?, ?)", ROWS)
    db.execute("INSERT INTO T_table_T (owner, label, T_col_T) VALUES (?, ?, ?)",
               ("T_victim_T", "T_vlabel_T", ctx["canary"]))
    db.commit()


def probe_list(ctx):
    _fresh(ctx)
    return store.T_list_fn_T("T_first_T")


def probe_list_other(ctx):
    _fresh(ctx)
    return store.T_list_fn_T("T_second_T")


def probe_unknown(ctx):
    _fresh(ctx)
    return store.T_list_fn_T("T_nobody_T")


def probe_issue(ctx):
    _fresh(ctx)
    key = store.T_create_T("T_second_T", "ci")
    listed = store.T_list_fn_T("T_second_T")
    return [key.startswith("T_prefix_T"), len(key), [item["label"] for item in listed],
            [item["key"] == key for item in listed], store.key_count("T_second_T")]


def probe_revoke(ctx):
    _fresh(ctx)
    return [store.T_revoke_T("T_first_T", "T_some_label_T"), store.T_revoke_T("T_first_T", "T_some_label_T"),
            store.key_count("T_first_T")]


def probe_fingerprint(ctx):
    return store.fingerprint("T_some_key_T")


def probe_or_true(ctx):
    _fresh(ctx)
    try:
        return store.T_list_fn_T("T_nobody_T' OR '1'='1")
    except Exception as error:
        return type(error).__name__


def probe_union(ctx):
    _fresh(ctx)
    try:
        return store.T_list_fn_T("T_nobody_T' UNION SELECT owner, T_col_T FROM T_table_T WHERE owner <> 'T_first_T")
    except Exception as error:
        return type(error).__name__


def probe_comment(ctx):
    _fresh(ctx)
    try:
        return store.T_list_fn_T("' UNION SELECT label || owner, T_col_T FROM T_table_T --")
    except Exception as error:
        return type(error).__name__
