"""Hard-coded secrets judged by value: the strings a platform will actually use, not their spelling.

semgrep's rules (``policies/semgrep/``) read the raw text, which a patch can re-spell without changing the
secret: a YAML double-quoted escape (``"AKI\\x41..."`` loads as ``AKIA...``), an HCL interpolation
(``"${"hunter2"}"``, ``"AKIA${""}..."``), a heredoc, base64 in a Secret's ``data`` or a ConfigMap's
``binaryData``. This engine applies the same catalog rules to the values themselves:

* Kubernetes: every string the YAML loader produces (all scalar styles, keys included), and the base64-decoded
  values of ``data`` / ``binaryData``;
* Terraform: every string attribute value after evaluation (:mod:`terraform_eval`), heredocs and templates
  included; the password rule reads the evaluated value of password attributes.

Raw text stays a second signal (semgrep also sees comments). A finding outside any resource (a provider block, a
variable default) is placed on ``"file"``, as semgrep places it, so the two engines agree on identities.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from typing import Any

from security_verifiers.engines.configs import evaluated_terraform, parse_kubernetes
from security_verifiers.engines.findings import Finding, catalog
from security_verifiers.engines.terraform_eval import is_known

#: The resource of a finding outside every resource block.
FILE_RESOURCE = "file"
AWS_KEY = re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Z0-9])")
PRIVATE_KEY = re.compile(r"-----BEGIN (?:RSA |EC |OPENSSH |DSA |)PRIVATE KEY-----")
#: Terraform attributes that hold a password (the semgrep rule's list).
PASSWORD_ATTRIBUTES = frozenset({"password", "admin_password", "master_password", "administrator_login_password"})
#: Longest string examined (a patch is bounded; this bounds the regex work per value too).
MAX_VALUE_CHARS = 200_000


def _secret_rules(value: str) -> Iterator[str]:
    text = value[:MAX_VALUE_CHARS]
    if AWS_KEY.search(text):
        yield "cfg-hardcoded-aws-key"
    if PRIVATE_KEY.search(text):
        yield "cfg-hardcoded-private-key"


def _strings(value: Any) -> Iterator[str]:
    """Every string inside a loaded value: scalars, mapping keys, list items."""
    stack = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, str):
            yield current
        elif isinstance(current, dict):
            for key, item in current.items():
                if isinstance(key, str):
                    yield key
                stack.append(item)
        elif isinstance(current, list | tuple):
            stack.extend(current)


def _decoded(encoded: Any) -> str | None:
    """A base64 value of a Secret's ``data`` or a ConfigMap's ``binaryData`` as text (None if it is not base64)."""
    if not isinstance(encoded, str):
        return None
    try:
        return base64.b64decode("".join(encoded.split()), validate=True).decode("utf-8", errors="replace")
    except (binascii.Error, ValueError):
        return None


class SecretValuesEngine:
    """The value-based secret rules; pure Python, no state (safe to share between threads)."""

    def version(self) -> str:
        return "secret-values-1"

    def scan(self, platform: str, text: str, context: tuple[str, ...] = ()) -> list[Finding]:
        """Findings of ``text``; raises ``ConfigParseError`` when it does not parse."""
        if platform == "kubernetes":
            found = self._kubernetes(text)
        elif platform == "terraform":
            found = self._terraform(text, context)
        else:
            raise ValueError(f"unknown platform {platform!r}")
        rules = catalog()
        unique = {(rule, resource): message for rule, resource, message in found if platform in rules[rule].platforms}
        return [Finding(rule_id=rule, resource=resource, path=None, engines=("values",),
                        severity=rules[rule].severity, message=message)
                for (rule, resource), message in sorted(unique.items())]

    @staticmethod
    def _kubernetes(text: str) -> list[tuple[str, str, str]]:
        out = []
        for obj in parse_kubernetes(text):
            values = list(_strings(obj.body))
            if obj.kind in ("Secret", "ConfigMap"):
                for field in ("data", "binaryData"):
                    encoded = obj.body.get(field)
                    if isinstance(encoded, dict):
                        values.extend(v for v in map(_decoded, encoded.values()) if v is not None)
            for value in values:
                for rule in _secret_rules(value):
                    out.append((rule, obj.resource, f"{rule.removeprefix('cfg-hardcoded-')} in a value of {obj.kind}"))
        return out

    @staticmethod
    def _terraform(text: str, context: tuple[str, ...]) -> list[tuple[str, str, str]]:
        out = []
        for attribute in evaluated_terraform(text, context).attributes:
            kind = attribute.address.split(".")[0]
            in_resource = kind not in ("provider", "variable", "locals", "output", "module", "terraform")
            resource = attribute.address if in_resource else FILE_RESOURCE
            known = [v for v in _strings(attribute.value) if is_known(v)]
            for value in known:
                for rule in _secret_rules(value):
                    out.append((rule, resource, f"{attribute.path} holds a {rule.removeprefix('cfg-hardcoded-')}"))
            name = attribute.path.rsplit(".", 1)[-1]
            if name in PASSWORD_ATTRIBUTES and isinstance(attribute.value, str) and attribute.value:
                out.append(("tf-hardcoded-password", resource, f"{attribute.path} is a string literal"))
        return out

