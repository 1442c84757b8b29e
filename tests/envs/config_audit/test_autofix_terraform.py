"""The Terraform autofixer on what the generator produces and on the Checkov-only rules it now repairs.

* every operator applied to a secure base, then fixed from the oracle's findings: the result is valid, keeps every
  resource, and the whole oracle finds nothing (the fixer set covers every rule the generator injects);
* table-driven edits of the Checkov-rule fixers on small inputs (what the fix writes, not only that it passes).
"""

from __future__ import annotations

import random
import textwrap
import zlib
from typing import Any

import pytest

from security_verifiers.engines.configs import inventory, parse_terraform
from security_verifiers.engines.findings import Finding, catalog
from security_verifiers.envs.config_audit.autofix import autofix, fixable_rules
from security_verifiers.envs.config_audit.autofix.terraform_checkov import CHECKOV_FIXERS
from security_verifiers.envs.config_audit.generation.mutations_tf import terraform_operators
from security_verifiers.envs.config_audit.generation.templates_tf import TF_TEMPLATES


def K(text: str) -> str:  # noqa: N802 - reads as a literal marker in the tables below
    return textwrap.dedent(text).lstrip("\n")


@pytest.fixture(scope="module")
def oracle() -> Any:
    oracle_module = pytest.importorskip("security_verifiers.engines.oracle")
    try:
        return oracle_module.get_oracle()
    except oracle_module.EngineUnavailable as err:  # pragma: no cover - depends on the installation
        pytest.skip(f"the oracle's engines are not available: {err}")


def test_checkov_fixers_are_terraform_rules_of_the_catalog() -> None:
    rules = catalog()
    assert all(rule in rules and "terraform" in rules[rule].platforms for rule in CHECKOV_FIXERS)
    assert set(CHECKOV_FIXERS) <= fixable_rules("terraform")


def test_every_rule_a_terraform_operator_injects_has_a_fixer() -> None:
    injected = {rule for op in terraform_operators() for rule in op.rules}
    assert injected <= fixable_rules("terraform"), sorted(injected - fixable_rules("terraform"))


def test_every_generated_misconfiguration_is_fixed_for_the_whole_oracle(oracle: Any) -> None:
    """Each operator on its first target of each scenario (seed 0): fixing the oracle's findings leaves none."""
    texts = []
    for name in sorted(TF_TEMPLATES):
        base = TF_TEMPLATES[name](random.Random(0))
        for op in terraform_operators():
            for resource in op.targets(base)[:1]:
                mutated = base.copy()
                op.apply(mutated, resource, random.Random(zlib.crc32(f"{name}:{op.rule_id}".encode())))
                texts.append((f"{op.rule_id} on {resource} ({name})", mutated.render()))
    before = oracle.scan_many([("terraform", text) for _, text in texts])
    results = [autofix("terraform", text, b.findings) for (_, text), b in zip(texts, before, strict=True)]
    after = oracle.scan_many([("terraform", r.text) for r in results])
    problems = []
    for (label, text), result, verdict in zip(texts, results, after, strict=True):
        old, new = inventory("terraform", text)["objects"], inventory("terraform", result.text)["objects"]
        lost = sorted(k for k, v in old.items() if new.get(k) != v)
        if verdict.keys or not verdict.valid or lost:
            problems.append(f"{label}: left {sorted(verdict.keys)}, valid={verdict.valid}, lost={lost}")
    assert problems == []


def _fix(rule_id: str, resource: str, text: str) -> str:
    result = autofix("terraform", text, [Finding(rule_id=rule_id, resource=resource)])
    assert result.fixed_rules == (rule_id,), result.skipped
    parse_terraform(result.text)
    assert set(inventory("terraform", text)["objects"]) <= set(inventory("terraform", result.text)["objects"])
    return result.text


# (rule, resource, input, snippets the fixed text holds)
EDITS = [
    ("tf-aws-ec2-imdsv1-allowed", "aws_instance.web", 'resource "aws_instance" "web" {\n  ami = "ami-1"\n}\n',
     ["metadata_options {", 'http_tokens = "required"']),
    ("tf-aws-ec2-public-ip", "aws_instance.web",
     'resource "aws_instance" "web" {\n  associate_public_ip_address = true\n}\n',
     ["associate_public_ip_address = false"]),
    ("tf-aws-eks-endpoint-open-to-internet", "aws_eks_cluster.c", K('''
        resource "aws_eks_cluster" "c" {
          vpc_config {
            endpoint_public_access = true
          }
        }
        '''), ["endpoint_public_access = false", "endpoint_private_access = true"]),
    ("tf-aws-eks-secrets-encryption-off", "aws_eks_cluster.c", K('''
        resource "aws_kms_key" "k" {}
        resource "aws_eks_cluster" "c" {
          name = "c"
        }
        '''), ['resources = ["secrets"]', "key_arn = aws_kms_key.k.arn"]),
    ("tf-aws-ebs-no-cmk", "aws_ebs_volume.v", 'resource "aws_ebs_volume" "v" {\n  encrypted = true\n}\n',
     ["kms_key_id = var.v_kms_key", 'variable "v_kms_key"']),
    ("tf-aws-iam-policy-full-iam-access", "data.aws_iam_policy_document.p", K('''
        data "aws_iam_policy_document" "p" {
          statement {
            actions   = ["s3:GetObject", "iam:*"]
            resources = ["arn:aws:s3:::b/*"]
          }
        }
        '''), ['actions   = ["s3:GetObject"]']),
    ("tf-aws-s3-no-lifecycle", "aws_s3_bucket.b", 'resource "aws_s3_bucket" "b" {\n  bucket = "b"\n}\n',
     ['resource "aws_s3_bucket_lifecycle_configuration" "b"', "abort_incomplete_multipart_upload"]),
    ("tf-aws-s3-not-kms-encrypted", "aws_s3_bucket.b", K('''
        resource "aws_s3_bucket" "b" {
          bucket = "acme-b"
        }
        resource "aws_s3_bucket_server_side_encryption_configuration" "b" {
          bucket = "acme-b"
          rule {
            apply_server_side_encryption_by_default {
              sse_algorithm = "AES256"
            }
          }
        }
        '''), ['sse_algorithm = "aws:kms"', "bucket = aws_s3_bucket.b.id"]),  # the literal name is relinked too
    ("tf-gcp-compute-public-ip", "google_compute_instance.vm", K('''
        resource "google_compute_instance" "vm" {
          network_interface {
            subnetwork = "default"
            access_config {}
          }
        }
        '''), ['subnetwork = "default"']),
    ("tf-gcp-sql-public-ip", "google_sql_database_instance.db", K('''
        resource "google_sql_database_instance" "db" {
          settings {
            ip_configuration {
              ipv4_enabled = true
            }
          }
        }
        '''), ["ipv4_enabled = false", "private_network = var.db_private_network"]),
    ("tf-gcp-sql-pg-pgaudit-off", "google_sql_database_instance.db", K('''
        resource "google_sql_database_instance" "db" {
          database_version = "POSTGRES_18"
        }
        '''), ["database_flags {", 'name  = "cloudsql.enable_pgaudit"', 'value = "on"']),
    ("tf-gcp-subnet-flow-logs-off", "google_compute_subnetwork.s",
     'resource "google_compute_subnetwork" "s" {\n  name = "s"\n}\n', ["log_config {", "flow_sampling"]),
    ("tf-azure-aks-api-unrestricted", "azurerm_kubernetes_cluster.k",
     'resource "azurerm_kubernetes_cluster" "k" {\n  name = "k"\n}\n', ["private_cluster_enabled = true"]),
    ("tf-azure-vm-password-auth", "azurerm_linux_virtual_machine.vm", K('''
        resource "azurerm_linux_virtual_machine" "vm" {
          admin_username                  = "ops"
          admin_password                  = var.pw
          disable_password_authentication = false
        }
        '''), ["disable_password_authentication = true", "admin_ssh_key {", 'username   = "ops"']),
    ("tf-azure-storage-no-private-endpoint", "azurerm_storage_account.sa", K('''
        resource "azurerm_storage_account" "sa" {
          name                = "acmedata"
          location            = "westeurope"
          resource_group_name = "rg"
        }
        '''), ['resource "azurerm_private_endpoint" "sa"', 'subresource_names              = ["blob"]',
               "private_connection_resource_id = azurerm_storage_account.sa.id"]),
    ("tf-azure-functionapp-old-tls", "azurerm_linux_function_app.f", K('''
        resource "azurerm_linux_function_app" "f" {
          site_config {
            minimum_tls_version = "1.0"
          }
        }
        '''), ['minimum_tls_version = "1.2"']),
]


@pytest.mark.parametrize(("rule_id", "resource", "text", "expected"), EDITS, ids=[e[0] for e in EDITS])
def test_checkov_fixers_write_the_secure_setting(rule_id: str, resource: str, text: str, expected: list[str]) -> None:
    fixed = _fix(rule_id, resource, text)
    for snippet in expected:
        assert snippet in fixed, fixed


def test_compute_public_ip_fix_removes_the_access_config() -> None:
    text = EDITS[[e[0] for e in EDITS].index("tf-gcp-compute-public-ip")][2]
    assert "access_config" not in _fix("tf-gcp-compute-public-ip", "google_compute_instance.vm", text)


def test_a_fix_that_needs_an_input_declares_it_once() -> None:
    text = K('''
        resource "aws_s3_bucket" "a" {
          bucket = "a"
        }
        resource "aws_s3_bucket" "b" {
          bucket = "b"
        }
        ''')
    findings = [Finding(rule_id="tf-aws-s3-no-cross-region-replication", resource=f"aws_s3_bucket.{b}") for b in "ab"]
    fixed = autofix("terraform", text, findings).text
    assert fixed.count('variable "replication_role_arn"') == 1  # a second declaration would not parse
    assert fixed.count('resource "aws_s3_bucket_replication_configuration"') == 2
    parse_terraform(fixed)
