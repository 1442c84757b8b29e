"""Attachments of the T_org_T helpdesk, which the support site serves at /files/<ticket>/<name>."""

import html
import os
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

ATTACHMENT_ROOT = "/srv/helpdesk/attachments"
NOT_FOUND = (404, "not found")


def parse(url: str) -> tuple[str, str]:
    """The ticket number and the attachment's name (it may hold sub-folders) of an attachment URL."""
    parts = urlsplit(url).path.split("/", 3)
    if len(parts) != 4 or parts[1] != "files" or not parts[2].isdigit() or not parts[3]:
        raise LookupError(url)
    return parts[2], unquote(parts[3])


def T_serve_T(url: str) -> tuple[int, str]:
    """The status and the body of the response to a GET of ``url``."""
    try:
        ticket, name = parse(url)
    except LookupError:
        return NOT_FOUND
    path = os.path.join(ATTACHMENT_ROOT, ticket, name)
    if not os.path.isfile(path):
        return NOT_FOUND
    with open(path, encoding="utf-8", errors="replace") as handle:
        return 200, handle.read()


def index_page(ticket: str) -> str:
    """The HTML list of a ticket's attachments (those directly in its folder), linked."""
    if not ticket.isdigit():
        raise ValueError("ticket numbers are digits")
    folder = Path(ATTACHMENT_ROOT, ticket)
    names = sorted(entry.name for entry in folder.iterdir() if entry.is_file()) if folder.is_dir() else []
    items = "".join(f'<li><a href="/files/{ticket}/{quote(name)}">{html.escape(name)}</a></li>'
                    for name in names)
    return f"<ul>{items}</ul>"
