"""Operator accounts of the T_org_T admin console, kept in a JSON file beside the console's configuration."""

import json
import os
import shutil
from pathlib import Path

from T_pkg_T import credentials

USERS_FILE = Path(os.environ.get("T_upper_T_CONSOLE_USERS", "/etc/T_org_T/console-users.json"))
ROLES = ("viewer", "operator", "admin")


def _load() -> dict[str, dict]:
    if not USERS_FILE.exists():
        return {}
    return json.loads(USERS_FILE.read_text(encoding="utf-8"))


def _save(users: dict[str, dict]) -> None:
    """Write the users file; the version it replaces is kept as <file>.bak."""
    if USERS_FILE.exists():
        shutil.copy2(USERS_FILE, USERS_FILE.with_name(USERS_FILE.name + ".bak"))
    partial = USERS_FILE.with_suffix(".partial")
    partial.write_text(json.dumps(users, indent=2, sort_keys=True), encoding="utf-8")
    os.replace(partial, USERS_FILE)


def T_add_T(name: str, password: str, role: str = "viewer") -> None:
    """Create an operator; ValueError for an unknown role or an existing name."""
    if role not in ROLES:
        raise ValueError(f"unknown role: {role}")
    users = _load()
    if name in users:
        raise ValueError(f"operator exists: {name}")
    entry = {"role": role, "enabled": True}
    credentials.set_password(entry, password)
    users[name] = entry
    _save(users)


def T_auth_T(name: str, password: str) -> str | None:
    """The operator's role if the password is right and the account enabled, else None."""
    entry = _load().get(name)
    if entry is None or not entry["enabled"] or not credentials.check_password(entry, password):
        return None
    return entry["role"]


def T_reset_T(name: str, password: str) -> bool:
    """Give an operator a new password (an admin's action); False for an unknown name."""
    users = _load()
    if name not in users:
        return False
    credentials.set_password(users[name], password)
    _save(users)
    return True


def disable(name: str) -> bool:
    users = _load()
    if name not in users:
        return False
    users[name]["enabled"] = False
    _save(users)
    return True


def operators() -> list[list]:
    """[name, role, enabled] for every operator, by name."""
    return [[name, entry["role"], entry["enabled"]] for name, entry in sorted(_load().items())]
