"""Release versions of T_org_T plugins: authors upload releases, clients install the newest one."""

import re

VERSION = re.compile(r"^v?(\d+\.?)*\d+(-[0-9A-Za-z.]+)?$")
MAX_VERSION = 64


def T_parse_fn_T(text: str) -> dict:
    """The numbers and the pre-release tag of a version such as 2.10.1 or v1.4.0-rc.1."""
    text = text.strip()
    if len(text) > MAX_VERSION or not VERSION.match(text):
        raise ValueError(f"not a version: {text!r}")
    core, _, pre = text.removeprefix("v").partition("-")
    return {"numbers": [int(part) for part in core.split(".")], "pre": pre or None}


def sort_key(text: str) -> tuple:
    """Orders versions by their numbers; a pre-release comes before its release."""
    parts = T_parse_fn_T(text)
    return parts["numbers"], parts["pre"] is None, parts["pre"] or ""


def T_newest_fn_T(versions: list[str], pre_releases: bool = False) -> str | None:
    """The newest of the versions (pre-releases only when asked for), None when there is none."""
    chosen = [v for v in versions if pre_releases or T_parse_fn_T(v)["pre"] is None]
    return max(chosen, key=sort_key, default=None)


def upgrades(installed: str, versions: list[str]) -> list[str]:
    """The releases newer than the installed version with its major number, oldest first."""
    current, major = sort_key(installed), T_parse_fn_T(installed)["numbers"][0]
    found = []
    for version in versions:
        parts = T_parse_fn_T(version)
        if parts["pre"] is None and parts["numbers"][0] == major and sort_key(version) > current:
            found.append(version)
    return sorted(found, key=sort_key)

