"""Comment threads under the posts of the T_org_T blog, as HTML."""

import html
from string import Template

from T_pkg_T import store

COMMENT = Template('<article class="comment"><header>$author <time>$posted</time></header>$body</article>')


def paragraphs(text: str) -> str:
    """A comment's text as HTML paragraphs: blank lines separate them."""
    blocks = [block.strip() for block in text.split("\n\n") if block.strip()]
    return "".join(f"<p>{block}</p>" for block in blocks)


def render_comment(author: str, body: str, posted: str) -> str:
    return COMMENT.substitute(author=html.escape(author), posted=posted, body=paragraphs(body))


def T_thread_fn_T(post: str) -> str:
    """The HTML of a post's comment thread, oldest comment first."""
    rows = store.thread(post)
    items = "".join(render_comment(*row) for row in rows)
    return f'<section class="comments" data-count="{len(rows)}">{items}</section>'
