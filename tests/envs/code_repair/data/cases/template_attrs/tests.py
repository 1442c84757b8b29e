from html.parser import HTMLParser

import formwell.render as render

# A mapping reaches the program with its keys in sorted order: the attributes below are listed in that order.

SIGNUP = [
    {"name": "full_name", "label": "Your name", "attrs": {"autocomplete": None, "maxlength": 80,
                                                         "placeholder": 'e.g. "Ada" & co', "required": True}},
    {"name": "email", "type": "email", "label": "E-mail <work>", "attrs": {"aria-describedby": "email-help",
                                                                          "data-validate": "strict"}},
    {"name": "news", "type": "checkbox", "label": "Newsletter", "attrs": {"checked": False, "value": "yes"}},
]


class _Active(HTMLParser):
    """Event-handler attributes of a page, as a browser would read them: tag[name]=value."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found = []

    def handle_starttag(self, tag, attrs):
        self.found += [f"{tag}[{name}]={value}" for name, value in attrs if name.startswith("on")]


def _handlers(fields):
    try:
        page = render.render_form("/f/submit", fields)
    except Exception as error:
        return type(error).__name__
    parser = _Active()
    parser.feed(page)
    parser.close()
    return parser.found


def _page(action, fields, submit="Send"):
    try:
        return render.render_form(action, fields, submit)
    except Exception as error:
        return type(error).__name__


def probe_signup(ctx):
    return _page("/f/signup?step=2&lang=en", SIGNUP, "Sign <me> up")


def probe_plain(ctx):
    return _page("/f/x", [{"name": "q"}])


def probe_bad_type(ctx):
    return [_page("/f/x", [{"name": "q", "type": "script"}]), _page("/f/x", [{"name": "Bad Name"}]),
            _page("/f/x", [{"name": "q", "attrs": ["placeholder"]}])]


def probe_values(ctx):
    return _handlers([{"name": "q", "attrs": {"title": '" onmouseover="alert(1)', "placeholder": "x' onclick='y"}}])


def probe_space(ctx):
    key = f"x onfocus={ctx['canary']} autofocus"
    return _handlers([{"name": "q", "attrs": {"placeholder": "Search", key: "1"}}])


def probe_slash(ctx):
    return _handlers([{"name": "q", "attrs": {f"data-x/onmouseover={ctx['canary']}": "y"}}])


def probe_newline(ctx):
    return _handlers([{"name": "q", "attrs": {f"aria-label\nonclick={ctx['canary']}": "Search"}}])
