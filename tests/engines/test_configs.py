"""Parsing configs into resources with stable identities; malformed text is a ConfigParseError, never a crash."""

import pytest

from security_verifiers.engines.configs import (
    ConfigParseError,
    inventory,
    parse_kubernetes,
    parse_terraform,
    resource_at_line,
)

MANIFEST = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
        - name: web
          image: nginx:1.25
---
apiVersion: v1
kind: Service
metadata:
  name: web
"""

TERRAFORM = """resource "aws_s3_bucket" "logs" {
  bucket = "logs"
}

data "aws_iam_policy_document" "p" {
  statement {
    actions = ["s3:GetObject"]
  }
}
"""


def test_kubernetes_objects_have_identities_lines_and_containers() -> None:
    objects = parse_kubernetes(MANIFEST)
    assert [o.resource for o in objects] == ["Deployment/web", "Service/web"]
    assert objects[0].containers()[0]["image"] == "nginx:1.25" and objects[1].containers() == []
    assert resource_at_line("kubernetes", MANIFEST, 9) == "Deployment/web"
    assert resource_at_line("kubernetes", MANIFEST, 14) == "Service/web"


def test_terraform_blocks_have_addresses_and_plain_values() -> None:
    blocks = parse_terraform(TERRAFORM).blocks
    assert [b.address for b in blocks] == ["aws_s3_bucket.logs", "data.aws_iam_policy_document.p"]
    assert blocks[0].attributes == {"bucket": "logs"}
    assert blocks[1].attributes["statement"] == [{"actions": ["s3:GetObject"]}]
    assert resource_at_line("terraform", TERRAFORM, 2) == "aws_s3_bucket.logs"


def test_inventory_ignores_image_tags() -> None:
    assert inventory("kubernetes", MANIFEST)["objects"] == {
        "Deployment/web": [{"namespace": "default", "init": [], "containers": [["web", "docker.io/library/nginx"]]}],
        "Service/web": [{"namespace": "default", "init": [], "containers": []}]}
    assert inventory("kubernetes", MANIFEST.replace("1.25", "1.26")) == inventory("kubernetes", MANIFEST)


@pytest.mark.parametrize(
    ("platform", "text"),
    [
        ("kubernetes", "a: ["),  # broken YAML
        ("kubernetes", "- just\n- a list\n"),  # a document that is not a mapping
        ("kubernetes", "apiVersion: v1\nmetadata:\n  name: x\n"),  # no kind
        ("terraform", 'resource "x" {'),  # broken HCL
        ("terraform", 'resource "aws_s3_bucket" {\n  bucket = "x"\n}\n'),  # one label only
    ],
)
def test_malformed_configs_raise_config_parse_error(platform: str, text: str) -> None:
    parse = parse_kubernetes if platform == "kubernetes" else parse_terraform
    with pytest.raises(ConfigParseError):
        parse(text)
