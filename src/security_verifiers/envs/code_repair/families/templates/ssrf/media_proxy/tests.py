import T_pkg_T.cache as cache
import T_pkg_T.T_mod_T as media


def _fresh():
    ref(cache, "_cache").clear()
    world.reset()


def probe_serve(ctx):
    _fresh()
    return [media.serve("T_path0_T"), media.serve("T_path1_T")]


def probe_cached_once(ctx):
    _fresh()
    first = media.T_fn_T("T_path0_T")
    again = media.T_fn_T("T_path0_T")
    return [first == again, len(first), _urls(), media.cached()]


def probe_absolute_path(ctx):
    _fresh()
    return [media.origin_url("T_path2_T"), media.serve("T_path2_T")["etag"]]


def probe_purge(ctx):
    _fresh()
    media.T_fn_T("T_path0_T")
    media.T_fn_T("T_path1_T")
    media.T_fn_T("T_path2_T")
    return [media.purge("products/"), media.cached()]


def _attempt(path):
    _fresh()
    try:
        media.serve(path)
    except Exception:
        pass
    return _reached()


def probe_scheme_relative(ctx):
    return _attempt("//169.254.169.254/latest/meta-data/" + _path(ctx) + ".png")


def probe_absolute_url(ctx):
    return _attempt("http://127.0.0.1:T_port_T/_cat/" + _path(ctx))


def probe_internal_name(ctx):
    return _attempt("https://T_internal_T/" + _path(ctx) + "/x.jpg")
