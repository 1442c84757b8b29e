import base64
import os
import pickle

import T_pkg_T.cart as cart
import T_pkg_T.T_mod_T as sessions

PRICES = T_prices_T
T_payloads_T

def _load(data):
    try:
        return sessions.load_session(base64.urlsafe_b64encode(data).decode())
    except Exception as error:
        return type(error).__name__


def probe_round_trip(ctx):
    session = {"user": "T_user_T", "cart": {"T_sku0_T": 2}, "theme": "dark", "seen": ["T_sku1_T", "T_sku2_T"]}
    return sessions.load_session(sessions.dump_session(session))


def probe_new(ctx):
    session = sessions.load_session(sessions.dump_session(sessions.new_session("T_user_T")))
    return [sorted(session), session["user"], len(session["csrf"]), session["cart"]]


def probe_cart(ctx):
    cookie = sessions.dump_session(sessions.new_session("T_user_T"))
    cookie = cart.T_add_T(cookie, "T_sku1_T")
    cookie = cart.T_add_T(cookie, "T_sku0_T", 3)
    cookie = cart.T_add_T(cookie, "T_sku1_T", 2)
    return cart.cart_lines(cookie, PRICES)


def probe_signed_out(ctx):
    try:
        cart.T_add_T(None, "T_sku0_T")
    except PermissionError:
        return "refused"
    return "added"


def probe_damaged(ctx):
    return [sessions.load_session(None), sessions.load_session(""), sessions.load_session("%%%"),
            sessions.load_session("bm90IGEgc2Vzc2lvbg=="), cart.cart_lines("%%%", PRICES)]


def probe_header(ctx):
    header = sessions.set_cookie(sessions.new_session("T_user_T"))
    return [header.startswith("T_org_T_session="), header.endswith("; Path=/; HttpOnly; Secure; SameSite=Lax")]


def probe_open(ctx):
    return _load(_open(ctx["marker"]))


def probe_system(ctx):
    return _load(_system(ctx["marker"]))


def probe_exec_cart(ctx):
    cookie = base64.urlsafe_b64encode(_exec(ctx["marker"])).decode()
    try:
        return cart.cart_lines(cookie, PRICES)
    except Exception as error:
        return type(error).__name__
