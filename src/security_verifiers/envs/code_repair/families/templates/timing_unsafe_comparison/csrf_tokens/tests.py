import html
import re

import T_pkg_T.settings as settings


def _session(user, email):
    sid = settings.start_session(user, email)
    token = html.unescape(re.search(r'name="csrf_token" value="([^"]*)"', settings.csrf_field(sid)).group(1))
    return sid, token


def probe_change(ctx):
    sid, token = _session("T_user_T", "T_email_T")
    return [settings.T_change_T(sid, {"csrf_token": token, "email": " T_new_email_T "}), settings.account(sid)]


def probe_bad_token(ctx):
    sid, token = _session("T_user_T", "T_email_T")
    _, foreign = _session("T_other_T", "T_other_T@T_domain_T")
    forms = [{"email": "T_new_email_T"}, {"csrf_token": foreign, "email": "T_new_email_T"},
             {"csrf_token": token[:-1], "email": "T_new_email_T"}]
    return [settings.T_change_T(sid, form) for form in forms] + [settings.account(sid)["email"]]


def probe_no_session(ctx):
    _, token = _session("T_user_T", "T_email_T")
    return [settings.T_change_T("nope", {"csrf_token": token, "email": "T_new_email_T"}),
            settings.T_close_T("nope", {"csrf_token": token, "confirm": "T_user_T"})]


def probe_bad_email(ctx):
    sid, token = _session("T_user_T", "T_email_T")
    return settings.T_change_T(sid, {"csrf_token": token, "email": "T_user_T at T_domain_T"})


def probe_close(ctx):
    sid, token = _session("T_other_T", "T_other_T@T_domain_T")
    first = settings.T_close_T(sid, {"csrf_token": token, "confirm": "T_user_T"})
    return [first, settings.T_close_T(sid, {"csrf_token": token, "confirm": "T_other_T"}), settings.account(sid)]


def probe_page(ctx):
    sid, token = _session("T_user_T", "T_email_T")
    page = settings.settings_page(sid)
    return [page.count('name="csrf_token"'), token in page, "T_email_T" in page]


def probe_forged_change(ctx):
    T_static_T


def probe_forged_close(ctx):
    T_static_T
