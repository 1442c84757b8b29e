import T_pkg_T.comments as comments
import T_pkg_T.store as store
T_active_T

COMMENTS = T_comments_T
#: The program's date class: the store takes a day as a date of the program's own.
DATE = program_module("datetime").date


def _fresh():
    store._db = None
    for author, body, posted in COMMENTS:
        store.T_add_fn_T("T_post_T", author, body, DATE.fromisoformat(posted))


def _page_with(body):
    _fresh()
    store.T_add_fn_T("T_post_T", "T_author_T", body, DATE(2026, 1, 2))
    return comments.T_thread_fn_T("T_post_T")


def probe_thread(ctx):
    _fresh()
    return comments.T_thread_fn_T("T_post_T")


def probe_other_post(ctx):
    _fresh()
    store.T_add_fn_T("elsewhere", "T_author_T", "Hello there", DATE(2026, 2, 3))
    return comments.T_thread_fn_T("elsewhere")


def probe_paragraphs(ctx):
    return comments.paragraphs("First part\n\n\nSecond part\n\n")


def probe_empty(ctx):
    try:
        store.T_add_fn_T("T_post_T", "T_author_T", "   ", DATE(2026, 1, 1))
    except ValueError:
        return "refused"
    return "stored"


def probe_script(ctx):
    return active(_page_with, "Great post!<script>" + ctx["canary"] + "</script>")


def probe_image(ctx):
    return active(_page_with, "See <img src=x onerror=" + ctx["canary"] + ">\n\nthanks")


def probe_svg(ctx):
    return active(_page_with, "Nice\n\n<svg onload=" + ctx["canary"] + ">")
