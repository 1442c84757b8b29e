"""Settings of the T_org_T shop's T_vendor_T client.

The API's address is configured in the environment (T_prefix_T_API_URL).
"""

import os

API_TOKEN = "T_literal_T"


def base_url() -> str:
    return os.environ.get("T_prefix_T_API_URL", "T_base_T").rstrip("/")


def api_token() -> str:
    return API_TOKEN
