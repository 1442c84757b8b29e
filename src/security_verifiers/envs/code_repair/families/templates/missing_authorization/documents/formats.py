"""The download formats of a T_noun_T: Markdown, JSON, and XML for the archive system."""

import json
import xml.etree.ElementTree as ET


def render(title: str, body: str, fmt: str = "markdown") -> str:
    if fmt == "json":
        return json.dumps({"title": title, "body": body}, sort_keys=True)
    if fmt == "markdown":
        return f"# {title}\n\n{body}\n"
    if fmt == "xml":
        root = ET.Element("T_noun_T")
        ET.SubElement(root, "title").text = title
        ET.SubElement(root, "body").text = body
        return ET.tostring(root, encoding="unicode")
    raise ValueError(f"unknown format: {fmt}")
