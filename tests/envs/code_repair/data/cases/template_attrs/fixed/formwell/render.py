"""Public form pages of the Formwell form builder.

Tenants design their forms in the builder: each field has a name, a label, an input type and optional extra HTML
attributes (placeholder, pattern, data-*, aria-*...). Visitors see the form rendered by these templates.
"""

import re

from jinja2 import DictLoader, Environment
from markupsafe import Markup, escape

TEMPLATES = {
    "field.html": '<p><label for="f-{{ field.name }}">{{ field.label }}</label>'
                  '<input id="f-{{ field.name }}" name="{{ field.name }}" type="{{ field.type }}"'
                  '{{ field.attrs|html_attrs }}></p>',
    "form.html": '<form method="post" action="{{ action }}">'
                 '{% for field in fields %}{% include "field.html" %}{% endfor %}'
                 '<button type="submit">{{ submit }}</button></form>',
}
TYPES = ("text", "email", "number", "date", "tel", "url", "checkbox", "password")
_FIELD_NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
#: An attribute name: no space, '/', '>', '=', quote or control character can end it and start another.
_ATTR_NAME = re.compile(r"[A-Za-z_:][A-Za-z0-9_:.-]*")


def html_attrs(attrs: dict | None) -> Markup:
    """A field's extra attributes as HTML: ` name="value"` each, values escaped; None or False leaves an attribute
    out and True writes it bare (`required`)."""
    parts = []
    for key, value in (attrs or {}).items():
        if not _ATTR_NAME.fullmatch(key):
            raise ValueError(f"invalid attribute name {key!r}")
        if value is None or value is False:
            continue
        if value is True:
            parts.append(str(escape(key)))
        else:
            parts.append(f'{escape(key)}="{escape(value)}"')
    return Markup("".join(" " + part for part in parts))


ENV = Environment(loader=DictLoader(TEMPLATES), autoescape=True)
ENV.filters["html_attrs"] = html_attrs


def field(spec: dict) -> dict:
    """A field of a form design, checked: name, label, type and extra attributes."""
    name = spec.get("name", "")
    if not isinstance(name, str) or not _FIELD_NAME.match(name):
        raise ValueError(f"bad field name {name!r}")
    kind = spec.get("type", "text")
    if kind not in TYPES:
        raise ValueError(f"field {name!r} has an unknown type {kind!r}")
    attrs = spec.get("attrs") or {}
    if not isinstance(attrs, dict) or not all(isinstance(key, str) and key for key in attrs):
        raise ValueError(f"field {name!r}: attributes are a mapping of names to values")
    return {"name": name, "label": str(spec.get("label", name)), "type": kind, "attrs": attrs}


def render_form(action: str, fields: list, submit: str = "Send") -> str:
    """The HTML of a form: its fields in order, then its submit button."""
    return ENV.get_template("form.html").render(action=action, fields=[field(spec) for spec in fields],
                                                submit=submit)
