"""Settings of the T_org_T portal's download area."""

import os

DOWNLOAD_ROOT = os.environ.get("T_upper_T_DOWNLOADS", "/srv/T_org_T/downloads")
CONTENT_TYPES = {".txt": "text/plain", ".md": "text/markdown", ".csv": "text/csv", ".pdf": "application/pdf"}
#: How many downloads the portal's landing page features.
FEATURED = 2


def content_type(name: str) -> str:
    return CONTENT_TYPES.get(os.path.splitext(name)[1].lower(), "application/octet-stream")
