"""The shared fragments of the T_org_T single sign-on's metadata (signing certificates and the like):
administrators publish them to FRAGMENTS, providers' metadata includes them with XInclude."""

import os
import shutil
from xml.etree import ElementInclude

FRAGMENTS = os.environ.get("SSO_FRAGMENTS", "/srv/sso/fragments")


def load_fragment(href: str, parse: str, encoding: str | None = None):
    """Load one included fragment (hrefs are relative to FRAGMENTS)."""
    return ElementInclude.default_loader(os.path.join(FRAGMENTS, href), parse, encoding)


def publish(source: str, name: str) -> str:
    """Copy an approved certificate file into FRAGMENTS under name; returns its href."""
    if not name.endswith(".pem") or os.sep in name:
        raise ValueError("fragments are .pem files directly in FRAGMENTS")
    shutil.copyfile(source, os.path.join(FRAGMENTS, name))
    return name
