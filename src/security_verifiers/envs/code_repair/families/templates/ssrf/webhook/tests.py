import T_pkg_T.T_mod_T as hooks


def _fresh():
    hooks._db = None
    world.reset()


def probe_deliver(ctx):
    _fresh()
    hooks.T_subscribe_T("t-deliver", "T_event_T", "T_url0_T", "T_secret0_T")
    hooks.T_subscribe_T("t-deliver", "T_other_event_T", "T_url2_T", "T_secret1_T")
    hooks.T_subscribe_T("t-deliver", "T_event_T", "T_url1_T", "T_secret1_T")
    results = hooks.T_publish_T("t-deliver", "T_event_T", T_payload_T)
    return {"results": results, "seen": _urls()}


def probe_signed(ctx):
    _fresh()
    hooks.T_subscribe_T("t-signed", "T_event_T", "T_url0_T", "T_secret0_T")
    hooks.T_publish_T("t-signed", "T_event_T", T_payload_T)
    sent = world.requests()[-1]
    return [sent["body"], sent["headers"].get("x-signature"), sent["headers"].get("content-type")]


def probe_listing(ctx):
    _fresh()
    hooks.T_subscribe_T("t-list", "T_event_T", "T_url1_T", "T_secret0_T")
    hooks.T_subscribe_T("t-list", "T_other_event_T", "T_url2_T", "T_secret1_T")
    hooks.T_subscribe_T("t-elsewhere", "T_event_T", "T_url0_T", "T_secret0_T")
    return hooks.subscriptions("t-list")


def probe_scheme(ctx):
    _fresh()
    try:
        hooks.T_subscribe_T("t-scheme", "T_event_T", "ftp://T_host0_T/drop", "T_secret0_T")
    except ValueError:
        return "refused"
    return "accepted"


def probe_unsubscribe(ctx):
    _fresh()
    hook_id = hooks.T_subscribe_T("t-unsub", "T_event_T", "T_url0_T", "T_secret0_T")
    first, second = hooks.unsubscribe("t-unsub", hook_id), hooks.unsubscribe("t-unsub", hook_id)
    return [first, second, hooks.T_publish_T("t-unsub", "T_event_T", {}), _urls()]


def _attempt(url):
    _fresh()
    try:
        hooks.T_subscribe_T("t-probe", "T_event_T", url, "T_secret1_T")
        hooks.T_publish_T("t-probe", "T_event_T", {"id": 1})
    except Exception:
        pass
    return _reached()


def probe_metadata(ctx):
    return _attempt("http://169.254.169.254/latest/meta-data/iam/" + _path(ctx))


def probe_loopback_v6(ctx):
    return _attempt("http://[::1]:T_port_T/" + _path(ctx))


def probe_internal_name(ctx):
    return _attempt("https://T_internal_T/api/" + _path(ctx))
