import T_pkg_T.feeds as feeds

SECRET = ROOT + "/T_relative_T"

FEEDS = T_texts_T


def _attempt(feed):
    try:
        return feeds.T_items_fn_T(feed)
    except Exception as error:
        return type(error).__name__


def probe_items(ctx):
    return feeds.T_items_fn_T(FEEDS["T_first_T"])


def probe_limit(ctx):
    return [item["title"] for item in feeds.T_items_fn_T(FEEDS["T_first_T"], limit=2)]


def probe_merged(ctx):
    return feeds.T_merge_fn_T(FEEDS, limit=4)


def probe_since(ctx):
    return feeds.published_since(FEEDS["T_first_T"], "T_day_T")


def probe_title(ctx):
    return _attempt(T_attack_url_T)


def probe_link(ctx):
    return _attempt(T_attack_path_T)
