
from html.parser import HTMLParser


class _Active(HTMLParser):
    """What a browser would run in a page: script bodies and event-handler or javascript: attributes."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found = []
        self.in_script = False

    def handle_starttag(self, tag, attrs):
        self.in_script = tag == "script"
        for name, value in attrs:
            if name.startswith("on") or (value or "").strip().lower().startswith("javascript:"):
                self.found.append(f"{tag}[{name}]={value}")

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        self.in_script = False

    def handle_endtag(self, tag):
        if tag == "script":
            self.in_script = False

    def handle_data(self, data):
        if self.in_script:
            self.found.append("script:" + data.strip())


def active(render, *args):
    """The active content of the page render(*args) returns (or the error it raised)."""
    try:
        page = render(*args)
        parser = _Active()
        parser.feed(page)
        parser.close()
    except Exception as error:
        return type(error).__name__
    return parser.found
