import T_pkg_T.T_mod_T as wiki

TITLES = T_titles_T


def _fresh(ctx):
    wiki.DB_PATH = ":memory:"
    wiki._conn = None
    ids = [wiki.create_page(title) for title in TITLES]
    wiki.create_page("Board minutes", draft=ctx["canary"])
    return ids


def probe_add(ctx):
    ids = _fresh(ctx)
    return [wiki.T_add_T(ids[0], T_mixed_T), wiki.tags_of(ids[0])]


def probe_again(ctx):
    ids = _fresh(ctx)
    wiki.T_add_T(ids[1], ["T_t0_T", "T_t1_T"])
    return [wiki.T_add_T(ids[1], ["T_t1_T", "two  words"]), wiki.tags_of(ids[1])]


def probe_browse(ctx):
    ids = _fresh(ctx)
    for page in ids:
        wiki.T_add_T(page, ["T_t2_T"])
    wiki.T_add_T(ids[0], ["T_t0_T"])
    return [wiki.T_tagged_T("T_t2_T"), wiki.T_tagged_T("T_t0_T"), wiki.T_tagged_T("nothing")]


def probe_empty(ctx):
    ids = _fresh(ctx)
    return [wiki.T_add_T(ids[2], [" ", ""]), wiki.tags_of(ids[2])]


def probe_stacked_insert(ctx):
    ids = _fresh(ctx)
    try:
        payload = "x'); INSERT INTO tags (page_id, tag) SELECT %d, draft FROM pages WHERE draft <> ''; --"
        wiki.T_add_T(ids[0], [payload % ids[0]])
    except Exception as error:
        return type(error).__name__
    return wiki.tags_of(ids[0])


def probe_stacked_update(ctx):
    ids = _fresh(ctx)
    payload = "x'); UPDATE pages SET title = (SELECT group_concat(draft) FROM pages) WHERE id = %d; --" % ids[1]
    try:
        wiki.T_add_T(ids[1], ["news", payload])
    except Exception as error:
        return type(error).__name__
    return wiki.T_tagged_T("news")


def probe_values_tuple(ctx):
    ids = _fresh(ctx)
    payload = "x'), (%d, (SELECT group_concat(draft) FROM pages) || '" % ids[2]
    try:
        wiki.T_add_T(ids[2], [payload])
    except Exception as error:
        return type(error).__name__
    return wiki.tags_of(ids[2])
