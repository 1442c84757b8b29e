"""Settings of the T_org_T monitoring's alert mail.

The relay and its account are configured in the environment (T_prefix_T_HOST, _PORT, _USER, and
T_prefix_T_RECIPIENTS), read whenever a mail is sent.
"""

import os


def settings() -> dict:
    return {
        "host": os.environ.get("T_prefix_T_HOST", "smtp.T_org_T.com"),
        "port": int(os.environ.get("T_prefix_T_PORT", "587")),
        "user": os.environ.get("T_prefix_T_USER", "monitoring@T_org_T.com"),
        "recipients": [a.strip() for a in os.environ.get("T_prefix_T_RECIPIENTS", "").split(",") if a.strip()],
    }
