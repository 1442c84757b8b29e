"""Secrets judged by value: re-spelling a secret (YAML escapes, HCL interpolation, heredocs, base64 in a Secret's
data) does not hide it; a value that is not a literal is not a finding."""

from __future__ import annotations

import base64

import pytest

from security_verifiers.engines.secret_values import SecretValuesEngine

ENGINE = SecretValuesEngine()
KEY = "AKIAQZ7XWV2MBC3NDF4P"
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\n"


def keys(platform: str, text: str) -> set[tuple[str, str]]:
    return {f.key for f in ENGINE.scan(platform, text)}


def pod(env_value: str) -> str:
    return ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: x:1\n"
            f"    env:\n    - name: K\n      value: {env_value}\n")


@pytest.mark.parametrize(("text", "expected"), [
    # the key written plainly, as a double-quoted escape, as a single-quoted or a block scalar
    (pod(KEY), {("cfg-hardcoded-aws-key", "Pod/p")}),
    (pod('"AKI\\x41' + KEY[4:] + '"'), {("cfg-hardcoded-aws-key", "Pod/p")}),
    (pod('"\\u0041KIA' + KEY[4:] + '"'), {("cfg-hardcoded-aws-key", "Pod/p")}),
    (pod(f"'{KEY}'"), {("cfg-hardcoded-aws-key", "Pod/p")}),
    # a private key whose header is escaped
    (pod('"-----BEGIN RSA PRIVATE\\x20KEY-----\\nMIIB"'), {("cfg-hardcoded-private-key", "Pod/p")}),
    # base64 in a Secret's data and a ConfigMap's binaryData
    ("apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\ndata:\n  key: " + base64.b64encode(KEY.encode()).decode()
     + "\n", {("cfg-hardcoded-aws-key", "Secret/s")}),
    ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\nbinaryData:\n  tls.key: "
     + base64.b64encode(PEM.encode()).decode() + "\n", {("cfg-hardcoded-private-key", "ConfigMap/c")}),
    # not secrets: another string, base64 that is not a key, a longer token containing the prefix
    (pod("hello"), set()),
    ("apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\ndata:\n  key: aGVsbG8=\n", set()),
    (pod("XAKIAQZ7XWV2MBC3NDF4PX"), set()),
])
def test_kubernetes_values(text: str, expected: set) -> None:
    assert keys("kubernetes", text) == expected


def db(password: str, extra: str = "") -> str:
    return f'{extra}resource "aws_db_instance" "main" {{\n  engine   = "postgres"\n  password = {password}\n}}\n'


@pytest.mark.parametrize(("text", "expected"), [
    (db('"hunter2"'), {("tf-hardcoded-password", "aws_db_instance.main")}),
    (db('"${"hunter2"}"'), {("tf-hardcoded-password", "aws_db_instance.main")}),  # interpolation of a literal
    (db('"hun${"ter"}2"'), {("tf-hardcoded-password", "aws_db_instance.main")}),
    (db("local.p", 'locals {\n  p = "hunter2"\n}\n'), {("tf-hardcoded-password", "aws_db_instance.main")}),
    (db("var.p", 'variable "p" {\n  default = "hunter2"\n}\n'), {("tf-hardcoded-password", "aws_db_instance.main")}),
    (db("var.p", 'variable "p" {\n  sensitive = true\n}\n'), set()),  # no default: not a literal
    (db('""'), set()),  # empty
    # an AWS key spelled across an interpolation, in a provider block (placed on "file", as semgrep does)
    ('provider "aws" {\n  access_key = "AKIA${""}' + KEY[4:] + '"\n}\n', {("cfg-hardcoded-aws-key", "file")}),
    # a private key in a heredoc of a resource
    ('resource "aws_instance" "vm" {\n  user_data = <<-EOT\n    ' + PEM.replace("\n", "\n    ") + "EOT\n}\n",
     {("cfg-hardcoded-private-key", "aws_instance.vm")}),
])
def test_terraform_values(text: str, expected: set) -> None:
    assert keys("terraform", text) == expected
