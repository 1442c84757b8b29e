"""Service-provider metadata for the T_org_T single sign-on: providers upload an EntityDescriptor and
include the shared signing certificates with XInclude from the fragments directory."""

import hashlib
import xml.etree.ElementTree as ET
from xml.etree import ElementInclude

from T_pkg_T import fragments


def T_assemble_fn_T(document: str) -> ET.Element:
    """The metadata document with its includes replaced by the fragments."""
    root = ET.fromstring(document)
    ElementInclude.include(root, loader=fragments.load_fragment)
    return root


def T_summary_fn_T(document: str) -> dict:
    """What the identity provider registers: entity id, signing certificates, consumer services."""
    root = T_assemble_fn_T(document)
    if root.tag != "EntityDescriptor" or not root.get("entityID"):
        raise ValueError("not an EntityDescriptor")
    keys = [(key.text or "").strip() for key in root.iter("KeyDescriptor")
            if key.get("use", "signing") == "signing"]
    services = sorted(root.iter("AssertionConsumerService"), key=lambda s: int(s.get("index", "0")))
    return {"entity_id": root.get("entityID"), "certificates": keys,
            "consumers": [service.get("Location") for service in services]}


def short_fingerprint(certificate: str) -> str:
    """The short fingerprint administrators compare when they approve a provider's certificate."""
    digest = hashlib.sha256("".join(certificate.split()).encode("ascii")).hexdigest()
    return ":".join(digest[k:k + 2] for k in range(0, 16, 2)).upper()
