"""Authentication of calls between T_org_T's internal services, with a static key per service.

A caller names itself in the X-Service header and presents its key in X-Service-Key; the keys are kept in
a JSON file the deployment writes (services can be disabled there without removing their key).
"""

import json
import logging
from pathlib import Path

KEYS_FILE = Path("/etc/T_org_T/service-keys.json")
log = logging.getLogger(__name__)
_keys: dict[str, str] | None = None


def service_keys() -> dict[str, str]:
    """The keys of the enabled services, by name (the file is read once)."""
    global _keys
    if _keys is None:
        with open(KEYS_FILE, encoding="utf-8") as handle:
            services = json.load(handle)["services"]
        _keys = {name: entry["key"] for name, entry in services.items() if entry.get("enabled", True)}
    return _keys


def reload() -> None:
    """Forget the keys read so far (after the file changed)."""
    global _keys
    _keys = None


def T_auth_T(service: str, key: str) -> bool:
    """Whether ``key`` is the key of the enabled service ``service``."""
    expected = service_keys().get(service)
    if expected is None:
        log.info("unknown service %s", service)
        return False
    T_compare_T


def T_authorize_T(headers: dict[str, str], allowed: set[str]) -> str:
    """The calling service, if it authenticates and may call this endpoint; PermissionError otherwise."""
    service, key = headers.get("X-Service", ""), headers.get("X-Service-Key", "")
    if not T_auth_T(service, key):
        raise PermissionError(f"service {service!r} did not authenticate")
    if service not in allowed:
        raise PermissionError(f"service {service!r} may not call this endpoint")
    return service


def known_services() -> list[str]:
    return sorted(service_keys())
