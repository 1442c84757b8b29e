from pathlib import Path
from urllib.parse import quote

import T_pkg_T.T_mod_T as attachments

attachments.ATTACHMENT_ROOT = ROOT + "/data/attachments"
Path(WORK, "data/attachments", "T_ticket_T", "T_spaced_T").write_text(T_spaced_text_T, encoding="utf-8")


def _get(url):
    try:
        return list(attachments.T_serve_T(url))
    except Exception as error:
        return type(error).__name__


def probe_plain(ctx):
    return _get("/files/T_plain_T")


def probe_encoded_name(ctx):
    return _get("/files/T_spaced_url_T")


def probe_sub_folder(ctx):
    return _get("/files/T_scan_T?download=1")


def probe_missing(ctx):
    return [_get("/files/T_ticket_T/nothing.txt"), _get("/files/T_ticket_T/"), _get("/downloads/T_plain_T")]


def probe_index(ctx):
    return attachments.index_page("T_ticket_T")


def probe_encoded_dotdot(ctx):
    return _get("/files/T_ticket_T/..%2f..%2f..%2fsecret%2fT_secret_T")


def probe_encoded_dots(ctx):
    return _get("/files/T_ticket_T/%2e%2e/%2e%2e/%2E%2E/secret/T_secret_T")


def probe_encoded_absolute(ctx):
    return _get("/files/T_ticket_T/" + quote(ROOT + "/secret/T_secret_T", safe=""))
