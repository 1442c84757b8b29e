"""What the Kubernetes and Terraform autofixers share: the record of a skipped finding and the secret patterns.

Kept apart from the package (:mod:`.`) so that :mod:`.kubernetes` and :mod:`.terraform` can import it without
an import cycle (the package imports both of them).
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass

#: A PEM private key header, as a secret scanner sees it in a config file.
PRIVATE_KEY_RE = re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----")
#: An AWS access key id (long-term AKIA or temporary ASIA).
AWS_KEY_ID_RE = re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Z0-9])")
#: Names that say "this holds a secret" (env vars, ConfigMap keys): the Rego rules' list (matched after "-" and
#: "." become "_") plus CREDENTIAL. A false positive only moves a harmless value into a Secret.
SECRET_NAME_RE = re.compile(r"(?i)(password|passwd|secret|token|api[_.-]?key|apikey|private[_.-]?key|access[_.-]?key|"
                            r"credential)")
#: Terraform attribute names whose literal value is a password: ``password``, ``admin_password``,
#: ``administrator_login_password`` ... (not ``password_length`` or ``password_policy``).
PASSWORD_KEY_RE = re.compile(r"(?i)^(\w+_)?(password|passwd)$")
#: The attribute of an AWS secret access key (its value has no recognisable prefix, so it goes by name).
AWS_SECRET_KEY_NAME_RE = re.compile(r"(?i)(aws_)?secret(_access)?_key")


@dataclass(frozen=True)
class Skipped:
    """A finding the autofixer left alone, and why (unknown rule, resource not found, nothing to change)."""

    rule_id: str
    resource: str
    reason: str


def has_secret_literal(value: str, rule_id: str) -> bool:
    """Whether ``value`` (or its base64 decoding, as in a Secret's ``data``) holds the secret ``rule_id`` is about.

    >>> rule = "cfg-hardcoded-aws-key"
    >>> has_secret_literal("AKIAABCDEFGHIJKLMNOP", rule), has_secret_literal("x", rule)
    (True, False)
    """
    pattern = PRIVATE_KEY_RE if rule_id == "cfg-hardcoded-private-key" else AWS_KEY_ID_RE
    if pattern.search(value):
        return True
    compact = "".join(value.split())
    if len(compact) < 16 or len(compact) % 4:
        return False
    try:
        decoded = base64.b64decode(compact, validate=True).decode("utf-8", errors="ignore")
    except (binascii.Error, ValueError):
        return False
    return bool(pattern.search(decoded))


def slug(text: str, sep: str = "_") -> str:
    """A name fragment safe as a Terraform identifier (``sep="_"``) or a Kubernetes DNS label (``sep="-"``).

    >>> slug("My.App-1"), slug("db_Password", "-")
    ('my_app_1', 'db-password')
    """
    out = re.sub(r"[^a-z0-9]+", sep, text.lower()).strip(sep)
    return out or "value"
