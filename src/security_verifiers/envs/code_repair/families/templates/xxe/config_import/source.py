"""Import of T_org_T application settings from the XML file that another installation exported."""

import io
import xml.sax
import xml.sax.handler
from xml.sax.saxutils import escape, quoteattr

CONVERTERS = {
    "str": str,
    "int": int,
    "bool": lambda text: text.lower() in ("1", "true", "yes"),
    "list": lambda text: [item.strip() for item in text.split(",") if item.strip()],
}


class SettingsHandler(xml.sax.handler.ContentHandler):
    """Collects <setting name="..." type="...">value</setting> elements."""

    def __init__(self):
        super().__init__()
        self.settings = {}
        self._name = None
        self._type = "str"
        self._text = []

    def startElement(self, name, attrs):
        if name == "setting":
            self._name, self._type, self._text = attrs.get("name"), attrs.get("type", "str"), []

    def characters(self, content):
        if self._name is not None:
            self._text.append(content)

    def endElement(self, name):
        if name == "setting" and self._name:
            if self._type not in CONVERTERS:
                raise ValueError(f"setting {self._name}: unknown type {self._type!r}")
            self.settings[self._name] = CONVERTERS[self._type]("".join(self._text).strip())
            self._name = None


def T_read_fn_T(data: bytes) -> dict:
    """The settings in an exported settings document."""
    parser = xml.sax.make_parser()
    T_feature_on_T
    handler = SettingsHandler()
    parser.setContentHandler(handler)
    parser.parse(io.BytesIO(data))
    return handler.settings


def export(settings: dict) -> bytes:
    """The document T_read_fn_T reads back (str, int, bool and list-of-str values)."""
    lines = ['<?xml version="1.0" encoding="utf-8"?>', '<settings version="2">']
    for name, value in settings.items():
        kind = {bool: "bool", int: "int", list: "list"}.get(type(value), "str")
        text = ", ".join(value) if kind == "list" else str(value).lower() if kind == "bool" else str(value)
        lines.append(f"  <setting name={quoteattr(name)} type=\"{kind}\">{escape(text)}</setting>")
    return ("\n".join(lines) + "\n</settings>\n").encode("utf-8")
