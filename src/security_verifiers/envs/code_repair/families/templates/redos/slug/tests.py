import T_pkg_T.slugs as slugs
T_attempt_T


def probe_suggest(ctx):
    return slugs.T_suggest_fn_T(T_title_T)


def probe_valid(ctx):
    return [slugs.T_valid_fn_T(slug) for slug in T_samples_T]


def probe_publish(ctx):
    slugs._db = None
    slugs.publish("T_suggestion_T", T_title_T)
    return [slugs.title_of("T_suggestion_T"), slugs.title_of("missing")]


def probe_refused(ctx):
    slugs._db = None
    try:
        slugs.publish("Not A Slug", "x")
    except ValueError:
        return "refused"
    return "published"


def probe_near_miss(ctx):
    return _attempt(slugs.T_valid_fn_T, "T_payload1_T")


def probe_publish_near_miss(ctx):
    slugs._db = None
    return _attempt(slugs.publish, "T_payload2_T", "A title")
