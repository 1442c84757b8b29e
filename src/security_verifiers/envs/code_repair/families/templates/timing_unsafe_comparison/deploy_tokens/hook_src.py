"""The deploy hook of T_org_T's CI: an authorized request queues a deployment of a service at a git ref."""

import re

from T_pkg_T import tokens

SERVICE_NAME = re.compile(r"[a-z][a-z0-9-]{1,39}")
GIT_REF = re.compile(r"[0-9a-f]{7,40}")
_deployments: list[dict[str, str]] = []


def T_trigger_T(headers: dict[str, str], service: str, ref: str) -> int:
    """Queue a deployment; returns the HTTP status (202, 400 for a bad service or ref, 401)."""
    if not tokens.T_authorized_T(tokens.bearer(headers.get("Authorization"))):
        return 401
    if not SERVICE_NAME.fullmatch(service) or not GIT_REF.fullmatch(ref):
        return 400
    _deployments.append({"service": service, "ref": ref})
    return 202


def queued() -> list[dict[str, str]]:
    """The deployments queued so far, oldest first."""
    return [dict(entry) for entry in _deployments]
