"""News for the T_org_T intranet: reads the RSS 2.0 feeds of partner sites item by item."""

import urllib.parse
import xml.sax
import xml.sax.handler
from xml.dom import pulldom


def _child_text(node, tag: str) -> str:
    for child in node.getElementsByTagName(tag):
        return "".join(part.data for part in child.childNodes if part.nodeType == part.TEXT_NODE).strip()
    return ""


def T_items_fn_T(feed: str, limit: int = 20) -> list[dict]:
    """The first limit items of an RSS document: title, link and publication date."""
    parser = xml.sax.make_parser()
    T_feature_on_T
    events = pulldom.parseString(feed, parser=parser)
    found = []
    for event, node in events:
        if event == pulldom.START_ELEMENT and node.tagName == "item":
            events.expandNode(node)
            found.append({"title": _child_text(node, "title"), "link": _child_text(node, "link"),
                          "published": _child_text(node, "pubDate")})
            if len(found) == limit:
                break
    return found


def T_merge_fn_T(feeds: dict[str, str], limit: int = 10) -> list[str]:
    """The newest titles of several feeds (site -> RSS text), newest first, with their site."""
    dated = []
    for site, feed in feeds.items():
        for item in T_items_fn_T(feed):
            host = urllib.parse.urlsplit(item["link"]).hostname or site
            dated.append((item["published"], f"{item['title']} ({host})"))
    return [text for _, text in sorted(dated, reverse=True)[:limit]]


def published_since(feed: str, day: str) -> list[str]:
    """Titles of the items of a feed published on or after day (YYYY-MM-DD)."""
    return [item["title"] for item in T_items_fn_T(feed) if item["published"] >= day]
