"""Signatures of the T_vendor_T webhooks the T_org_T billing service receives.

T_vendor_T signs every delivery with our shared secret: the T_header_T header holds an HMAC-SHA256 of
the raw request body.
"""

import hashlib
import hmac
import os

WEBHOOK_SECRET = os.environ.get("T_upper_T_WEBHOOK_SECRET", "").encode()
SIGNATURE_HEADER = "T_header_T"


def sign(body: bytes) -> str:
    """The signature T_vendor_T sends with ``body``."""
    mac = hmac.new(WEBHOOK_SECRET, body, hashlib.sha256)
    return T_expr_T


def T_verify_T(body: bytes, signature: str) -> bool:
    """Whether ``signature`` is the one our secret gives for ``body``."""
    T_compare_T
