"""Mutation operators for Terraform rules that Checkov alone implements, chosen for their security weight.

Each is an edit a hurried engineer makes in a real change: encryption or its customer-managed key removed,
flow logs switched off, a public endpoint, network or IP enabled, IMDSv1 allowed again, deletion protection
off, TLS lowered, image scanning disabled, ``iam:*`` added to a role's policy. An edit that necessarily
violates a second rule on the same resource says so (``also``): an EKS endpoint made public without CIDRs is
also open to 0.0.0.0/0. Every rule an operator lists in ``also`` has an operator of its own too (the public
endpoint limited to one range), so a dataset can hold each rule alone.

Why few operators per resource type: a dataset of 200 items must inject every operator at least once
(``test_balance_over_200_items``), so operators favour resource types that several scenarios share.
"""

from __future__ import annotations

import random
from typing import Any

from security_verifiers.envs.config_audit.generation.hcl_tree import Block, ref
from security_verifiers.envs.config_audit.generation.mutation_kit import Operator
from security_verifiers.envs.config_audit.generation.mutations_tf_kit import (
    attr_op,
    bool_op,
    drop_op,
    op,
    sub,
    value_op,
)
from security_verifiers.envs.config_audit.generation.templates_tf import TFBase

WORLD = "0.0.0.0/0"
#: Public ranges an operator "temporarily" opens an API to (documentation ranges: never a real network).
PUBLIC_ADMIN_RANGES = ("203.0.113.0/24", "198.51.100.0/24", "192.0.2.0/24")


def _get(block: Block | None, key: str) -> Any:
    return block.get(key) if block is not None else None


# --------------------------------------------------------------------------------------------------
# AWS
# --------------------------------------------------------------------------------------------------
def _imdsv1(b: Block, rng: random.Random) -> None:
    sub(b, "metadata_options").set("http_tokens", "optional")  # type: ignore[union-attr]


def _eks_public(b: Block, rng: random.Random) -> None:
    """A public API endpoint "for the CI runners", limited to one range: public, not open to the world."""
    vpc = sub(b, "vpc_config")
    assert vpc is not None
    vpc.set("endpoint_public_access", True)
    vpc.set("public_access_cidrs", [rng.choice(PUBLIC_ADMIN_RANGES)])


def _eks_open(b: Block, rng: random.Random) -> None:
    """A public API endpoint with no CIDR list: the provider's default, 0.0.0.0/0."""
    sub(b, "vpc_config").set("endpoint_public_access", True)  # type: ignore[union-attr]


def _eks_private(b: Block) -> bool:
    return _get(sub(b, "vpc_config"), "endpoint_public_access") is False


def _s3_kms() -> Operator:
    """A bucket's default encryption downgraded from its KMS key to S3-managed keys (reported on the bucket)."""

    def config(base: TFBase, bucket: str) -> Block | None:
        found = [c for c in base.referencing("aws_s3_bucket_server_side_encryption_configuration", bucket)
                 if _get(sub(c, "rule", "apply_server_side_encryption_by_default"), "sse_algorithm") == "aws:kms"]
        return found[0] if found else None

    def targets(base: TFBase) -> list[str]:
        return [b.address for b in base.resources("aws_s3_bucket") if config(base, b.address)]

    def apply(base: TFBase, address: str, rng: random.Random) -> None:
        default = sub(config(base, address), "rule", "apply_server_side_encryption_by_default")
        assert default is not None
        default.set("sse_algorithm", "AES256")
        default.remove("kms_master_key_id")

    return op("tf-aws-s3-not-kms-encrypted", targets, apply)


def _iam_full_access() -> Operator:
    """``iam:*`` added to a statement of a role's permission policy ("it needed to create a role once")."""

    def statements(base: TFBase, address: str) -> list[Block]:
        return [s for s in base.find(address).blocks("statement")
                if s.has("resources") and not s.blocks("principals") and not {"*", "iam:*"} & set(s.get("actions"))]

    def targets(base: TFBase) -> list[str]:
        return [d.address for d in base.data("aws_iam_policy_document") if statements(base, d.address)
                and all(not s.blocks("principals") for s in d.blocks("statement"))]

    def apply(base: TFBase, address: str, rng: random.Random) -> None:
        statement = rng.choice(statements(base, address))
        statement.set("actions", [*statement.get("actions"), "iam:*"])

    return op("tf-aws-iam-policy-full-iam-access", targets, apply)


def aws_operators() -> list[Operator]:
    return [
        _s3_kms(),
        _iam_full_access(),
        drop_op("tf-aws-ebs-no-cmk", "aws_ebs_volume", "kms_key_id"),
        attr_op("tf-aws-ec2-imdsv1-allowed", "aws_instance",
                lambda b: _get(sub(b, "metadata_options"), "http_tokens") == "required", _imdsv1),
        bool_op("tf-aws-ec2-public-ip", "aws_instance", "associate_public_ip_address", bad=True, removable=False),
        bool_op("tf-aws-rds-deletion-protection-off", "aws_db_instance", "deletion_protection"),
        attr_op("tf-aws-eks-public-endpoint", "aws_eks_cluster", _eks_private, _eks_public),
        attr_op("tf-aws-eks-endpoint-open-to-internet", "aws_eks_cluster", _eks_private, _eks_open,
                also=("tf-aws-eks-public-endpoint",)),
        drop_op("tf-aws-eks-secrets-encryption-off", "aws_eks_cluster", "encryption_config"),
        bool_op("tf-aws-ecr-scan-on-push-off", "aws_ecr_repository", "scan_on_push",
                path=("image_scanning_configuration",)),
        bool_op("tf-aws-opensearch-node-encryption-off", "aws_opensearch_domain", "enabled", removable=False,
                path=("node_to_node_encryption",)),
    ]


# --------------------------------------------------------------------------------------------------
# GCP
# --------------------------------------------------------------------------------------------------
def _public_nic(b: Block, rng: random.Random) -> None:
    """An ephemeral external IP on the instance's interface (an empty ``access_config`` block)."""
    sub(b, "network_interface").body.append(Block("access_config", (), []))  # type: ignore[union-attr]


def _authorized_world(b: Block, rng: random.Random) -> None:
    cidr = sub(b, "master_authorized_networks_config", "cidr_blocks")
    assert cidr is not None
    cidr.set("cidr_block", WORLD)
    cidr.set("display_name", rng.choice(("anywhere", "temporary", "all")))


def _https_firewall(b: Block) -> bool:
    return WORLD in b.get("source_ranges", []) and _get(sub(b, "allow"), "ports") == ["443"]


def _firewall_http(b: Block, rng: random.Random) -> None:
    sub(b, "allow").set("ports", ["80", "443"])  # type: ignore[union-attr]


def gcp_operators() -> list[Operator]:
    return [
        drop_op("tf-gcp-subnet-flow-logs-off", "google_compute_subnetwork", "log_config"),
        value_op("tf-gcp-bucket-public-access-prevention-off", "google_storage_bucket", "public_access_prevention",
                 "enforced", ("inherited",), removable=True),
        attr_op("tf-gcp-firewall-open-http", "google_compute_firewall", _https_firewall, _firewall_http),
        attr_op("tf-gcp-gke-control-plane-public", "google_container_cluster",
                lambda b: sub(b, "master_authorized_networks_config", "cidr_blocks") is not None, _authorized_world),
        value_op("tf-gcp-gke-metadata-server-off", "google_container_node_pool", "mode", "GKE_METADATA",
                 ("GCE_METADATA",), path=("node_config", "workload_metadata_config")),
        drop_op("tf-gcp-artifact-registry-no-cmk", "google_artifact_registry_repository", "kms_key_name"),
        attr_op("tf-gcp-compute-public-ip", "google_compute_instance",
                lambda b: sub(b, "network_interface", "access_config") is None, _public_nic),
        drop_op("tf-gcp-compute-disk-no-csek", "google_compute_instance", "kms_key_self_link", path=("boot_disk",)),
        bool_op("tf-gcp-sql-public-ip", "google_sql_database_instance", "ipv4_enabled", bad=True, removable=False,
                path=("settings", "ip_configuration")),
        value_op("tf-gcp-cloud-function-ingress-open", "google_cloudfunctions2_function", "ingress_settings",
                 "ALLOW_INTERNAL_ONLY", ("ALLOW_ALL",), path=("service_config",)),
    ]


# --------------------------------------------------------------------------------------------------
# Azure
# --------------------------------------------------------------------------------------------------
def _nsg_http(b: Block, rng: random.Random) -> None:
    """An inbound HTTP rule from the internet, after the existing rules."""
    b.body.insert(max(i for i, e in enumerate(b.body) if isinstance(e, Block)) + 1, Block("security_rule", (), [
        ("name", "allow-http"), ("priority", 120), ("direction", "Inbound"), ("access", "Allow"),
        ("protocol", "Tcp"), ("source_port_range", "*"), ("destination_port_range", "80"),
        ("source_address_prefix", rng.choice(("Internet", "*"))), ("destination_address_prefix", "*")]))


def _https_nsg(b: Block) -> bool:
    rules = b.blocks("security_rule")
    return any(r.get("destination_port_range") == "443" for r in rules) and \
        all(r.get("destination_port_range") != "80" for r in rules)


def _aks_private(b: Block) -> bool:
    return b.get("private_cluster_enabled") is True


def _aks_public(b: Block, rng: random.Random) -> None:
    """A public API server with no authorised ranges: reachable from any address."""
    b.set("private_cluster_enabled", False)


def _aks_public_ranges(b: Block, rng: random.Random) -> None:
    """A public API server limited to one range: public, not open to the world."""
    b.set("private_cluster_enabled", False)
    index = max(i for i, e in enumerate(b.body) if isinstance(e, Block)) + 1
    b.body.insert(index, Block("api_server_access_profile", (), [
        ("authorized_ip_ranges", [rng.choice(PUBLIC_ADMIN_RANGES)])]))


def _vm_password() -> Operator:
    """Password login enabled on a Linux VM, the password read from a new sensitive variable (the provider
    requires one as soon as password authentication is on)."""

    def targets(base: TFBase) -> list[str]:
        return [b.address for b in base.resources("azurerm_linux_virtual_machine")
                if b.get("disable_password_authentication") is True]

    def apply(base: TFBase, address: str, rng: random.Random) -> None:
        vm = base.find(address)
        name = f"{vm.labels[1]}_admin_password"
        vm.set("disable_password_authentication", False)
        vm.set("admin_password", ref(f"var.{name}"), after="admin_username")
        declared = [i for i, b in enumerate(base.blocks) if b.type == "variable"]
        base.blocks.insert(max(declared) + 1 if declared else 0, Block("variable", (name,), [
            ("description", "Password of the VM's administrator"), ("type", ref("string")), ("sensitive", True)]))

    return op("tf-azure-vm-password-auth", targets, apply)


def azure_operators() -> list[Operator]:
    return [
        value_op("tf-azure-storage-network-default-allow", "azurerm_storage_account", "default_action", "Deny",
                 ("Allow",), path=("network_rules",)),
        bool_op("tf-azure-storage-shared-key-auth", "azurerm_storage_account", "shared_access_key_enabled", bad=True,
                removable=False),
        drop_op("tf-azure-storage-no-cmk", "azurerm_storage_account", "customer_managed_key"),
        bool_op("tf-azure-keyvault-public-network", "azurerm_key_vault", "public_network_access_enabled", bad=True),
        attr_op("tf-azure-nsg-open-http", "azurerm_network_security_group", _https_nsg, _nsg_http),
        attr_op("tf-azure-aks-not-private", "azurerm_kubernetes_cluster", _aks_private, _aks_public_ranges),
        attr_op("tf-azure-aks-api-unrestricted", "azurerm_kubernetes_cluster", _aks_private, _aks_public,
                also=("tf-azure-aks-not-private",)),
        bool_op("tf-azure-acr-admin-enabled", "azurerm_container_registry", "admin_enabled", bad=True,
                removable=False),
        _vm_password(),
        bool_op("tf-azure-functionapp-http-allowed", "azurerm_linux_function_app", "https_only"),
        value_op("tf-azure-functionapp-old-tls", "azurerm_linux_function_app", "minimum_tls_version", "1.2",
                 ("1.0", "1.1"), path=("site_config",)),
        bool_op("tf-azure-sql-db-tde-off", "azurerm_mssql_database", "transparent_data_encryption_enabled",
                removable=False),
    ]


def checkov_operators() -> list[Operator]:
    """Every operator of a Checkov-only rule: AWS, GCP, then Azure."""
    return [*aws_operators(), *gcp_operators(), *azure_operators()]
