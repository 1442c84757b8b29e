"""E-mail templates of the T_org_T notifier: every kind of message has a template file under TEMPLATE_DIR."""

import html
import os
from pathlib import Path
from string import Template

TEMPLATE_DIR = "/srv/T_org_T/templates"


def template_path(name: str) -> str:
    """The file of the template ``name``, a path relative to TEMPLATE_DIR (templates sit in sub-folders)."""
    path = os.path.normpath(os.path.join(TEMPLATE_DIR, name))
    if not path.startswith(TEMPLATE_DIR):
        raise PermissionError(f"not a template: {name}")
    return path


def load(name: str) -> str:
    with open(template_path(name), encoding="utf-8") as handle:
        return handle.read()


def T_render_T(template: str, **values: object) -> str:
    """The template filled with ``values``, HTML-escaped; placeholders without a value stay as they are."""
    escaped = {key: html.escape(str(value)) for key, value in values.items()}
    return Template(load(template)).safe_substitute(escaped)


def available() -> list[str]:
    """The templates, as names relative to TEMPLATE_DIR, sorted."""
    root = Path(TEMPLATE_DIR)
    return sorted(path.relative_to(root).as_posix() for path in root.rglob("*.txt"))
