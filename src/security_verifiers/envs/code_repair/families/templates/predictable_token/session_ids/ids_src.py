"""Ids of the T_org_T admin dashboard's sessions, and the fingerprints the logs show instead of them."""

import hashlib
import random


def new_session_id(T_param_T) -> str:
    """32 hex digits naming a new session."""
    T_form_T


def fingerprint(session_id: str) -> str:
    """A short digest of a session id for the logs, which never hold the id itself."""
    return hashlib.sha256(session_id.encode("ascii")).hexdigest()[:12]
