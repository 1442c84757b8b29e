import json

import T_pkg_T.T_mod_T as api

T_classify_T

def _configure(secret):
    world.reset()
    environ = program_module("os").environ
    environ["T_prefix_T_API_URL"] = "T_base_T/"
    if secret is None:
        environ.pop("T_prefix_T_API_TOKEN", None)
    else:
        environ["T_prefix_T_API_TOKEN"] = secret


def _seen():
    return [[r["method"], r["url"], json.loads(r["body"]) if r["body"] else None] for r in world.requests()]


def probe_rate(ctx):
    _configure("tok-T_word_T")
    return [api.rate("T_origin_T", "T_destination_T", T_grams_T), _seen()]


def probe_label(ctx):
    _configure("tok-T_word_T")
    return [api.create_label("T_order_T", {"name": "T_name_T", "zip": "T_destination_T"}), _seen()]


def probe_tracking(ctx):
    _configure("tok-T_word_T")
    return [api.tracking("T_tracking_no_T"), _seen()]


def _token(ctx, secret):
    _configure(secret)
    try:
        api.rate("T_origin_T", "T_destination_T", 500)
    except Exception:
        return _classify(ctx, True)
    return _classify(ctx, False)


def probe_configured_token(ctx):
    return _token(ctx, ctx["canary"])


def probe_no_token(ctx):
    return _token(ctx, None)
