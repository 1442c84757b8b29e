"""Logins of the T_org_T team wiki, kept in a passwd-style text file: one ``name:{SCHEME}hash`` line each.

The file is read by the wiki and by the backup job; lines starting with # are comments.
"""

import base64
import hashlib
import hmac
import os
import re
from pathlib import Path

PASSWD_FILE = Path("/srv/wiki/T_org_T/passwd")
NAME = re.compile(r"[a-z][a-z0-9._-]{1,31}")


def _entries() -> dict[str, str]:
    """Name -> stored password field, in file order."""
    if not PASSWD_FILE.exists():
        return {}
    entries = {}
    for line in PASSWD_FILE.read_text(encoding="utf-8").splitlines():
        name, sep, field = line.partition(":")
        if sep and not line.startswith("#"):
            entries[name] = field
    return entries


def _write(entries: dict[str, str]) -> None:
    partial = PASSWD_FILE.with_name(PASSWD_FILE.name + ".partial")
    partial.write_text("".join(f"{name}:{field}\n" for name, field in entries.items()), encoding="utf-8")
    os.replace(partial, PASSWD_FILE)


def _password_field(password: str) -> str:
    return "{SHA}" + base64.b64encode(hashlib.sha1(password.encode("utf-8")).digest()).decode("ascii")


def _field_matches(password: str, field: str) -> bool:
    return hmac.compare_digest(_password_field(password), field)


def T_add_T(name: str, password: str) -> None:
    """Add a login; ValueError for a malformed or existing name."""
    entries = _entries()
    if not NAME.fullmatch(name) or name in entries:
        raise ValueError(f"cannot add {name!r}")
    entries[name] = _password_field(password)
    _write(entries)


def T_check_T(name: str, password: str) -> bool:
    field = _entries().get(name)
    return field is not None and _field_matches(password, field)


def T_passwd_T(name: str, password: str) -> bool:
    """Set a login's password; False for an unknown name."""
    entries = _entries()
    if name not in entries:
        return False
    entries[name] = _password_field(password)
    _write(entries)
    return True


def T_remove_T(name: str) -> bool:
    entries = _entries()
    if entries.pop(name, None) is None:
        return False
    _write(entries)
    return True


def logins() -> list[str]:
    return sorted(_entries())
