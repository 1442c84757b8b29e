"""What the T_org_T plugin registry serves to clients: manifests and download links."""

import json
import random
import xml.etree.ElementTree as ET

from T_pkg_T import versions

MIRRORS = T_mirrors_T


def manifest(plugin: str, releases: list[str]) -> str:
    """The JSON manifest clients download: every version, oldest first, and the newest release."""
    ordered = sorted(releases, key=versions.sort_key)
    return json.dumps({"plugin": plugin, "versions": ordered, "latest": versions.T_newest_fn_T(releases)})


def download_urls(plugin: str, version: str) -> list[str]:
    """Where a client fetches a release: every mirror, in a random order that spreads the load."""
    versions.T_parse_fn_T(version)
    return [f"{mirror}/{plugin}/{version}.zip" for mirror in random.sample(MIRRORS, len(MIRRORS))]


def appcast(plugin: str, releases: list[str]) -> str:
    """The XML update feed older clients poll: one item per release, newest first (no pre-releases)."""
    feed = ET.Element("feed", plugin=plugin)
    for version in sorted(releases, key=versions.sort_key, reverse=True):
        if versions.T_parse_fn_T(version)["pre"] is None:
            ET.SubElement(feed, "item", version=version)
    return ET.tostring(feed, encoding="unicode")
