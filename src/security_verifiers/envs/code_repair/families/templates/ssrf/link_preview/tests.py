import T_pkg_T.T_mod_T as chat


def probe_preview(ctx):
    return chat.preview("T_url0_T")


def probe_message(ctx):
    return [[item["site"], item["title"]] for item in chat.T_fn_T(T_message_T)]


def probe_card(ctx):
    return [chat.card_html(chat.preview("T_url1_T")), chat.card_html(chat.preview("T_url2_T"))]


def probe_not_web(ctx):
    try:
        chat.fetch("file:///etc/passwd")
    except ValueError:
        return "refused"
    return "fetched"


def probe_blocked(ctx):
    world.reset()
    return [chat.T_fn_T("http://localhost:8080/ and http://10.0.0.1/x"), _urls()]


def _attempt(url):
    world.reset()
    try:
        chat.T_fn_T("look: " + url + " !")
        chat.preview(url)
    except Exception:
        pass
    return _reached()


def probe_decimal_ip(ctx):
    return _attempt("http://2130706433/" + _path(ctx))


def probe_hex_ip(ctx):
    return _attempt("http://0x7f.0.0.1:T_port_T/v1/kv/" + _path(ctx))


def probe_internal_name(ctx):
    return _attempt("http://T_internal_T/d/" + _path(ctx))
