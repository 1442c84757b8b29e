import json

import T_pkg_T.registry as registry
import T_pkg_T.versions as versions

CANDIDATES = T_candidates_T


def _attempt(call, *args):
    try:
        return call(*args)
    except Exception as error:
        return type(error).__name__


def probe_parse(ctx):
    return [versions.T_parse_fn_T(text) for text in ("T_top_T", " T_pre_T ", "v12", "3.04.1")]


def probe_bad(ctx):
    return [_attempt(versions.T_parse_fn_T, text) for text in ("1..2", "1.2.", "latest", "1.2.3-", "-1")]


def probe_newest(ctx):
    return [versions.T_newest_fn_T(CANDIDATES), versions.T_newest_fn_T(CANDIDATES, True), versions.T_newest_fn_T([])]


def probe_manifest(ctx):
    return json.loads(registry.manifest("T_plugin_T", CANDIDATES))


def probe_downloads(ctx):
    urls = registry.download_urls("T_plugin_T", "T_top_T")
    return [sorted(urls), _attempt(registry.download_urls, "T_plugin_T", "1.x")]


def probe_appcast(ctx):
    return registry.appcast("T_plugin_T", CANDIDATES)


def probe_upgrades(ctx):
    return versions.upgrades("T_first_T", CANDIDATES)


def probe_digits(ctx):
    return _attempt(versions.T_parse_fn_T, "T_payload1_T")


def probe_empty_tag(ctx):
    return _attempt(versions.T_newest_fn_T, ["T_top_T", "T_payload2_T"])
