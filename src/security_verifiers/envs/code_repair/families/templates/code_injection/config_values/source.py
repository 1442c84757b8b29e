"""Tenant settings of the T_org_T platform: each tenant uploads a plain-text settings file of
``key = value`` lines; values are Python-style literals (numbers, strings, lists, dicts, True/False)."""

import hashlib

DEFAULTS = {"theme": "T_theme_T", "page_size": 25, "locales": ["en"]}


def parse_value(raw: str):
    """A setting's value: the literal it spells, or the bare text when it is not a literal."""
    raw = raw.strip()
    try:
        return eval(raw)
    except (NameError, SyntaxError):
        return raw


def T_parse_T(text: str) -> dict:
    """The tenant's settings: the defaults, overridden by the lines of text (# starts a comment)."""
    settings = dict(DEFAULTS)
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip().isidentifier():
            raise ValueError(f"line {number}: expected key = value")
        settings[key.strip()] = parse_value(value)
    return settings


def changed(old: dict, new: dict) -> list[str]:
    """The keys whose values differ between two versions of the settings."""
    return sorted(key for key in old.keys() | new.keys() if old.get(key) != new.get(key))


def fingerprint(text: str) -> str:
    """A short content hash of a settings file, shown next to each uploaded version."""
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:12]
