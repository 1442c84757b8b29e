"""Secure Azure building blocks and scenarios for the Terraform bases.

Hardened as the whole oracle asks: a Key Vault reached through a private endpoint, with purge protection and
HSM-backed keys that expire and rotate; storage accounts encrypted with a customer-managed key, behind a
firewall and a private endpoint, with logging, soft delete, a SAS expiry policy and geo-replication; Azure SQL
with an Entra ID administrator, auditing kept 90 days or more, Defender alerts and vulnerability scans, a
private endpoint and ledger databases; NSGs that open administration ports to known ranges only; a private AKS
cluster with Azure RBAC, no local accounts, network policy, node disks encrypted with a CMK at host; a Premium
container registry with no admin user, no public access, signed images, quarantine and zone-redundant
replicas; Linux VMs that take SSH keys only and have no public address; a Linux function app that is HTTPS
only, private and on TLS 1.2.
"""

from __future__ import annotations

from typing import Any

from security_verifiers.envs.config_audit.generation.hcl_tree import Block
from security_verifiers.envs.config_audit.generation.templates_tf_kit import (
    ADMIN_RANGES,
    Ctx,
    ref,
    resource,
    suffix,
)

#: Secret and key expiry used by the bases (a fixed date keeps the files reproducible).
EXPIRY = "2026-12-31T00:00:00Z"


def azure_header(c: Ctx) -> list[Block]:
    req = Block("required_providers", (), [("azurerm", {"source": "hashicorp/azurerm", "version": "~> 4.0"})])
    return [Block("terraform", (), [("required_version", ">= 1.5.0"), req]),
            Block("provider", ("azurerm",), [Block("features", (), [])])]


def azure_resource_group(c: Ctx) -> list[Block]:
    return [resource("azurerm_resource_group", "main", [("name", f"rg-{c.company}-{c.env}"),
                                                        ("location", c.region), ("tags", c.tags())])]


_RG = (("resource_group_name", ref("azurerm_resource_group.main.name")),
       ("location", ref("azurerm_resource_group.main.location")))


def _short(c: Ctx, prefix: str, name: str, limit: int = 24) -> str:
    """A globally unique, alphanumeric name (storage accounts, registries): prefix, company, env, name, suffix."""
    return (f"{prefix}{c.company}{c.env}{name}"[: limit - 4] + suffix(c.rng)[:4]).replace("_", "")


def azure_private_endpoint(c: Ctx, name: str, target: str, subresource: str) -> list[Block]:
    """A private endpoint in the endpoint subnet for ``target`` (an address) and its ``subresource``."""
    return [resource("azurerm_private_endpoint", name, [
        ("name", f"pe-{c.company}-{c.env}-{name.replace('_', '-')}"), *_RG,
        ("subnet_id", c.variable("private_endpoint_subnet_id", "Subnet that holds the private endpoints")),
        Block("private_service_connection", (), [
            ("name", f"psc-{name.replace('_', '-')}"), ("private_connection_resource_id", ref(f"{target}.id")),
            ("subresource_names", [subresource]), ("is_manual_connection", False)]),
        ("tags", c.tags())])]


def _identity(c: Ctx, name: str) -> list[Block]:
    return [resource("azurerm_user_assigned_identity", name, [("name", f"id-{c.company}-{c.env}-{name}"), *_RG,
                                                              ("tags", c.tags())])]


def azure_keyvault(c: Ctx, name: str, secrets: bool = True) -> list[Block]:
    """A vault with purge protection and RBAC, closed to the internet and reached through a private endpoint;
    ``secrets``: the TLS key (read from a file) and optionally a partner credential (from a sensitive variable)."""
    tenant = c.source("azurerm_client_config")
    out = [resource("azurerm_key_vault", name, [
        ("name", f"kv-{c.company}-{c.env}-{suffix(c.rng)[:4]}"), *_RG,
        ("tenant_id", ref(f"{tenant}.tenant_id")), ("sku_name", "premium"),
        ("purge_protection_enabled", True), ("soft_delete_retention_days", 90),
        ("rbac_authorization_enabled", True), ("public_network_access_enabled", False),
        Block("network_acls", (), [("default_action", "Deny"), ("bypass", "AzureServices")]), ("tags", c.tags())])]
    out += azure_private_endpoint(c, f"{name}_vault", f"azurerm_key_vault.{name}", "vault")
    if secrets:
        out.append(resource("azurerm_key_vault_secret", f"{name}_tls_key", [
            ("name", "tls-private-key"), ("value", ref(f'file("${{path.module}}/certs/{name}.key")')),
            ("key_vault_id", ref(f"azurerm_key_vault.{name}.id")), ("content_type", "application/x-pem-file"),
            ("expiration_date", EXPIRY)]))
        if c.rng.random() < 0.5:
            out.append(resource("azurerm_key_vault_secret", f"{name}_partner_key", [
                ("name", "partner-aws-key-id"),
                ("value", c.variable("partner_aws_key_id", "Key id of the partner's AWS account", sensitive=True)),
                ("key_vault_id", ref(f"azurerm_key_vault.{name}.id")), ("content_type", "text/plain"),
                ("expiration_date", EXPIRY)]))
    return out


def azure_cmk(c: Ctx, name: str, vault: str, identity: str) -> list[Block]:
    """An HSM-backed key that expires and rotates, and the identity allowed to wrap data keys with it."""
    key = resource("azurerm_key_vault_key", name, [
        ("name", f"{name.replace('_', '-')}-cmk"), ("key_vault_id", ref(f"azurerm_key_vault.{vault}.id")),
        ("key_type", "RSA-HSM"), ("key_size", 3072), ("key_opts", ["unwrapKey", "wrapKey"]),
        ("expiration_date", EXPIRY),
        Block("rotation_policy", (), [Block("automatic", (), [("time_before_expiry", "P30D")]),
                                      ("expire_after", "P365D"), ("notify_before_expiry", "P29D")])])
    access = resource("azurerm_role_assignment", f"{name}_cmk", [
        ("scope", ref(f"azurerm_key_vault.{vault}.id")),
        ("role_definition_name", "Key Vault Crypto Service Encryption User"),
        ("principal_id", ref(f"azurerm_user_assigned_identity.{identity}.principal_id"))])
    return [key, access]


def azure_storage(c: Ctx, name: str, vault: str) -> list[Block]:
    """A storage account encrypted with a CMK of ``vault``, closed to the internet, with logging, soft delete,
    a SAS expiry policy and geo-replication, its private container, private endpoint and storage insights."""
    out = _identity(c, f"{name}_storage") + azure_cmk(c, f"{name}_storage", vault, f"{name}_storage")
    out.append(resource("azurerm_storage_account", name, [
        ("name", _short(c, "st", name)), *_RG,
        ("account_tier", "Standard"), ("account_replication_type", c.rng.choice(("GRS", "GZRS", "RAGRS"))),
        ("min_tls_version", "TLS1_2"), ("https_traffic_only_enabled", True),
        ("allow_nested_items_to_be_public", False), ("public_network_access_enabled", False),
        ("shared_access_key_enabled", False), ("local_user_enabled", False),
        ("default_to_oauth_authentication", True),
        Block("identity", (), [("type", "UserAssigned"),
                               ("identity_ids", [ref(f"azurerm_user_assigned_identity.{name}_storage.id")])]),
        Block("customer_managed_key", (), [
            ("key_vault_key_id", ref(f"azurerm_key_vault_key.{name}_storage.id")),
            ("user_assigned_identity_id", ref(f"azurerm_user_assigned_identity.{name}_storage.id"))]),
        Block("network_rules", (), [("default_action", "Deny"), ("bypass", ["AzureServices"])]),
        Block("blob_properties", (), [
            Block("delete_retention_policy", (), [("days", c.rng.choice((7, 14, 30)))]),
            Block("container_delete_retention_policy", (), [("days", c.rng.choice((7, 14, 30)))])]),
        Block("queue_properties", (), [Block("logging", (), [
            ("delete", True), ("read", True), ("write", True), ("version", "1.0"),
            ("retention_policy_days", c.rng.choice((10, 30, 90)))])]),
        Block("sas_policy", (), [("expiration_period", "01.00:00:00"), ("expiration_action", "Log")]),
        ("tags", c.tags()), ("depends_on", [ref(f"azurerm_role_assignment.{name}_storage_cmk")])]))
    container = c.rng.choice(("uploads", "reports", "exports", "data"))
    out.append(resource("azurerm_storage_container", name, [
        ("name", container), ("storage_account_id", ref(f"azurerm_storage_account.{name}.id")),
        ("container_access_type", "private")]))
    out += azure_private_endpoint(c, f"{name}_blob", f"azurerm_storage_account.{name}", "blob")
    workspace = c.variable("log_analytics_workspace_id", "Log Analytics workspace that receives diagnostics")
    out.append(resource("azurerm_log_analytics_storage_insights", name, [
        ("name", f"si-{name.replace('_', '-')}"), ("workspace_id", workspace),
        ("storage_account_id", ref(f"azurerm_storage_account.{name}.id")),
        ("storage_account_key", c.variable("storage_insights_key", "Access key the insights connection reads with",
                                           sensitive=True)),
        ("blob_container_names", [container])]))
    return out


def _nsg_rule(name: str, priority: int, port: str, source: str) -> Block:
    return Block("security_rule", (), [
        ("name", name), ("priority", priority), ("direction", "Inbound"), ("access", "Allow"),
        ("protocol", "Tcp"), ("source_port_range", "*"), ("destination_port_range", port),
        ("source_address_prefix", source), ("destination_address_prefix", "*")])


def azure_nsg(c: Ctx, name: str, admin_port: int, https: bool = True) -> list[Block]:
    admin = "allow-ssh-admin" if admin_port == 22 else "allow-rdp-admin"
    rules = [_nsg_rule("allow-https", 100, "443", "Internet")] if https else []
    return [resource("azurerm_network_security_group", name, [
        ("name", f"nsg-{c.company}-{c.env}-{name}"), *_RG, *rules,
        _nsg_rule(admin, 110, str(admin_port), c.rng.choice(ADMIN_RANGES)), ("tags", c.tags())])]


def azure_sql(c: Ctx, name: str) -> list[Block]:
    """An Azure SQL server with an Entra ID administrator, private access only, auditing for 90+ days, Defender
    alerts with recurring vulnerability scans, and a ledger database."""
    tenant = c.source("azurerm_client_config")
    # The name comes from the caller (it is global in Azure): companions refer to it, so the references stay
    # references for the oracle too (a literal name would be substituted, hiding the connection).
    server = resource("azurerm_mssql_server", name, [
        ("name", c.variable("sql_server_name", "Globally unique name of the SQL server")), *_RG, ("version", "12.0"),
        ("administrator_login", "sqladmin"),
        ("administrator_login_password", c.variable("sql_admin_password", "SQL administrator password",
                                                    sensitive=True)),
        ("minimum_tls_version", "1.2"), ("public_network_access_enabled", False),
        Block("azuread_administrator", (), [
            ("login_username", f"sql-admins-{c.company}"),
            ("object_id", c.variable("sql_admin_group_object_id", "Entra ID group that administers SQL")),
            ("tenant_id", ref(f"{tenant}.tenant_id"))]),
        ("tags", c.tags())])
    auditing = resource("azurerm_mssql_server_extended_auditing_policy", name, [
        ("server_id", ref(f"azurerm_mssql_server.{name}.id")), ("log_monitoring_enabled", True),
        ("retention_in_days", c.rng.choice((90, 180, 365)))])
    alerts = resource("azurerm_mssql_server_security_alert_policy", name, [
        ("resource_group_name", ref("azurerm_resource_group.main.name")),
        ("server_name", ref(f"azurerm_mssql_server.{name}.name")), ("state", "Enabled"),
        ("email_account_admins", True), ("email_addresses", [f"dba@{c.company}.com"]), ("retention_days", 90)])
    scans = resource("azurerm_mssql_server_vulnerability_assessment", name, [
        ("server_security_alert_policy_id", ref(f"azurerm_mssql_server_security_alert_policy.{name}.id")),
        ("storage_container_path", c.variable("sql_va_container_path", "Blob container of vulnerability reports")),
        Block("recurring_scans", (), [("enabled", True), ("email_subscription_admins", True),
                                      ("emails", [f"dba@{c.company}.com"])])])
    db = resource("azurerm_mssql_database", name, [
        ("name", f"sqldb-{name}"), ("server_id", ref(f"azurerm_mssql_server.{name}.id")),
        ("sku_name", c.rng.choice(("GP_Gen5_2", "BC_Gen5_2", "GP_Gen5_4"))), ("zone_redundant", True),
        ("ledger_enabled", True), ("transparent_data_encryption_enabled", True), ("tags", c.tags())])
    return [server, auditing, alerts, scans, db,
            *azure_private_endpoint(c, f"{name}_sql", f"azurerm_mssql_server.{name}", "sqlServer")]


def azure_aks(c: Ctx, name: str, vault: str) -> list[Block]:
    """A private AKS cluster: Azure RBAC through Entra ID, no local accounts, Azure CNI with network policy, the
    Azure Policy add-on, node disks encrypted with a CMK at host, ephemeral OS disks, system pool kept apart."""
    out = _identity(c, f"{name}_disks") + azure_cmk(c, f"{name}_disks", vault, f"{name}_disks")
    out.append(resource("azurerm_disk_encryption_set", name, [
        ("name", f"des-{c.company}-{c.env}-{name}"), *_RG,
        ("key_vault_key_id", ref(f"azurerm_key_vault_key.{name}_disks.id")),
        Block("identity", (), [("type", "UserAssigned"),
                               ("identity_ids", [ref(f"azurerm_user_assigned_identity.{name}_disks.id")])])]))
    subnet = c.variable("aks_subnet_id", "Subnet of the cluster nodes")
    vm_size = c.rng.choice(("Standard_D4ds_v5", "Standard_D8ds_v5", "Standard_E4ds_v5"))
    pool: list[Any] = [
        ("vm_size", vm_size), ("vnet_subnet_id", subnet), ("max_pods", c.rng.choice((50, 60, 110))),
        ("os_disk_type", "Ephemeral"), ("host_encryption_enabled", True), ("zones", ["1", "2", "3"])]
    out.append(resource("azurerm_kubernetes_cluster", name, [
        ("name", f"aks-{c.company}-{c.env}-{name}"), *_RG, ("dns_prefix", f"{c.company}-{c.env}-{name}"),
        ("kubernetes_version", c.rng.choice(("1.30", "1.31"))), ("sku_tier", "Standard"),
        ("automatic_upgrade_channel", c.rng.choice(("patch", "stable"))), ("private_cluster_enabled", True),
        ("local_account_disabled", True), ("role_based_access_control_enabled", True),
        ("azure_policy_enabled", True), ("disk_encryption_set_id", ref(f"azurerm_disk_encryption_set.{name}.id")),
        Block("default_node_pool", (), [("name", "system"), ("node_count", 3), *pool,
                                        ("only_critical_addons_enabled", True),
                                        ("type", "VirtualMachineScaleSets")]),
        Block("identity", (), [("type", "SystemAssigned")]),
        Block("azure_active_directory_role_based_access_control", (), [
            ("azure_rbac_enabled", True),
            ("admin_group_object_ids", [c.variable("aks_admin_group_object_id", "Entra ID group of cluster admins")])]),
        Block("network_profile", (), [("network_plugin", "azure"),
                                      ("network_policy", c.rng.choice(("azure", "calico")))]),
        Block("oms_agent", (), [("log_analytics_workspace_id", c.variable(
            "log_analytics_workspace_id", "Log Analytics workspace that receives diagnostics"))]),
        Block("key_vault_secrets_provider", (), [("secret_rotation_enabled", True)]),
        ("tags", c.tags())]))
    out.append(resource("azurerm_kubernetes_cluster_node_pool", f"{name}_apps", [
        ("name", "apps"), ("kubernetes_cluster_id", ref(f"azurerm_kubernetes_cluster.{name}.id")),
        ("node_count", c.rng.choice((2, 3, 5))), *pool, ("tags", c.tags())]))
    return out


def azure_acr(c: Ctx, name: str, vault: str) -> list[Block]:
    """A Premium registry: no admin user or anonymous pulls, private only, signed images, quarantine, retention
    of untagged manifests, zone-redundant geo-replicas, dedicated data endpoints and a CMK."""
    out = _identity(c, f"{name}_registry") + azure_cmk(c, f"{name}_registry", vault, f"{name}_registry")
    replica = {"westeurope": "northeurope", "northeurope": "westeurope", "eastus2": "centralus",
               "uksouth": "ukwest"}[c.region]
    out.append(resource("azurerm_container_registry", name, [
        ("name", _short(c, "cr", name, 50)), *_RG, ("sku", "Premium"), ("admin_enabled", False),
        ("anonymous_pull_enabled", False), ("public_network_access_enabled", False),
        ("quarantine_policy_enabled", True), ("trust_policy_enabled", True),
        ("retention_policy_in_days", c.rng.choice((7, 14, 30))), ("zone_redundancy_enabled", True),
        ("data_endpoint_enabled", True), ("network_rule_bypass_option", "AzureServices"),
        Block("georeplications", (), [("location", replica), ("zone_redundancy_enabled", True)]),
        Block("identity", (), [("type", "UserAssigned"),
                               ("identity_ids", [ref(f"azurerm_user_assigned_identity.{name}_registry.id")])]),
        Block("encryption", (), [
            ("key_vault_key_id", ref(f"azurerm_key_vault_key.{name}_registry.id")),
            ("identity_client_id", ref(f"azurerm_user_assigned_identity.{name}_registry.client_id"))]),
        ("tags", c.tags())]))
    return out + azure_private_endpoint(c, f"{name}_registry", f"azurerm_container_registry.{name}", "registry")


def azure_vm(c: Ctx, name: str, vault: str) -> list[Block]:
    """A Linux VM on a private NIC: SSH keys only, encryption at host with a CMK disk set, Trusted Launch."""
    out = _identity(c, f"{name}_disks") + azure_cmk(c, f"{name}_disks", vault, f"{name}_disks")
    out.append(resource("azurerm_disk_encryption_set", name, [
        ("name", f"des-{c.company}-{c.env}-{name}"), *_RG,
        ("key_vault_key_id", ref(f"azurerm_key_vault_key.{name}_disks.id")),
        Block("identity", (), [("type", "UserAssigned"),
                               ("identity_ids", [ref(f"azurerm_user_assigned_identity.{name}_disks.id")])])]))
    out.append(resource("azurerm_network_interface", name, [
        ("name", f"nic-{c.company}-{c.env}-{name}"), *_RG,
        Block("ip_configuration", (), [("name", "internal"),
                                       ("subnet_id", c.variable("vm_subnet_id", "Subnet of the virtual machines")),
                                       ("private_ip_address_allocation", "Dynamic")]),
        ("tags", c.tags())]))
    out.append(resource("azurerm_linux_virtual_machine", name, [
        ("name", f"vm-{c.company}-{c.env}-{name}"), *_RG,
        ("size", c.rng.choice(("Standard_D2s_v5", "Standard_D4s_v5", "Standard_B2ms"))),
        ("admin_username", "azureuser"), ("disable_password_authentication", True),
        ("network_interface_ids", [ref(f"azurerm_network_interface.{name}.id")]),
        ("encryption_at_host_enabled", True), ("secure_boot_enabled", True), ("vtpm_enabled", True),
        ("provision_vm_agent", True), ("allow_extension_operations", False),
        Block("admin_ssh_key", (), [("username", "azureuser"),
                                    ("public_key", ref(f'file("${{path.module}}/keys/{name}.pub")'))]),
        Block("os_disk", (), [("caching", "ReadWrite"), ("storage_account_type", "Premium_LRS"),
                              ("disk_encryption_set_id", ref(f"azurerm_disk_encryption_set.{name}.id"))]),
        Block("source_image_reference", (), [("publisher", "Canonical"), ("offer", "ubuntu-24_04-lts"),
                                             ("sku", "server"), ("version", "latest")]),
        Block("identity", (), [("type", "SystemAssigned")]), ("tags", c.tags())]))
    return out


def azure_function(c: Ctx, name: str, storage: str) -> list[Block]:
    """A Linux function app on a zone-redundant Premium plan: HTTPS only, TLS 1.2, private, managed identity."""
    plan = resource("azurerm_service_plan", name, [
        ("name", f"asp-{c.company}-{c.env}-{name}"), *_RG, ("os_type", "Linux"),
        ("sku_name", c.rng.choice(("EP1", "EP2", "P1v3"))), ("worker_count", 3), ("zone_balancing_enabled", True),
        ("tags", c.tags())])
    app = resource("azurerm_linux_function_app", name, [
        ("name", f"func-{c.company}-{c.env}-{name}"), *_RG, ("service_plan_id", ref(f"azurerm_service_plan.{name}.id")),
        ("storage_account_name", ref(f"azurerm_storage_account.{storage}.name")),
        ("storage_uses_managed_identity", True), ("https_only", True), ("public_network_access_enabled", False),
        ("virtual_network_subnet_id", c.variable("function_subnet_id", "Subnet the app reaches the VNet from")),
        Block("site_config", (), [
            ("minimum_tls_version", "1.2"), ("ftps_state", "Disabled"), ("http2_enabled", True),
            ("remote_debugging_enabled", False), ("vnet_route_all_enabled", True),
            Block("application_stack", (), [("python_version", c.rng.choice(("3.11", "3.12")))])]),
        Block("identity", (), [("type", "SystemAssigned")]), ("tags", c.tags())])
    return [plan, app]


# --------------------------------------------------------------------------------------------------
# Scenarios
# --------------------------------------------------------------------------------------------------
def storage(c: Ctx) -> list[Block]:
    return azure_resource_group(c) + azure_keyvault(c, "main") + azure_storage(c, c.rng.choice(("data", "logs",
                                                                                                  "media")), "main")


def network(c: Ctx) -> list[Block]:
    """An NSG, often the Linux VM behind it, and in some subscriptions the diagnostics storage account."""
    name = c.rng.choice(("web", "app", "jump"))
    vm = c.rng.random() < 0.7
    out = azure_resource_group(c) + azure_nsg(c, name, 22 if vm else c.rng.choice((22, 3389)))
    storage = c.rng.random() < 0.4
    if vm or storage:
        out += azure_keyvault(c, "ops", secrets=False)
    if vm:
        out += azure_vm(c, name, "ops")
    if storage:
        out += azure_storage(c, "diag", "ops")
    return out


def database(c: Ctx) -> list[Block]:
    """An Azure SQL server and database, a Key Vault, and in some teams the admin VM the DBAs work from."""
    out = azure_resource_group(c) + azure_sql(c, c.rng.choice(("orders", "crm", "hr")))
    vm = c.rng.random() < 0.4
    if vm or c.rng.random() < 0.6:
        out += azure_keyvault(c, "db")
    if vm:
        out += azure_vm(c, "dbadmin", "db") + azure_nsg(c, "dbadmin", 22, https=False)
    return out


def kubernetes(c: Ctx) -> list[Block]:
    out = azure_resource_group(c) + azure_keyvault(c, "platform", secrets=False)
    out += azure_aks(c, c.rng.choice(("apps", "platform", "core")), "platform")
    return out + azure_acr(c, "images", "platform")


def functions(c: Ctx) -> list[Block]:
    """A function app, the storage account it runs from and, in some apps, the SQL database it writes to."""
    name = c.rng.choice(("ingest", "webhooks", "exports"))
    out = azure_resource_group(c) + azure_keyvault(c, "fn", secrets=False) + azure_storage(c, "fn", "fn")
    out += azure_function(c, name, "fn")
    if c.rng.random() < 0.4:
        out += azure_sql(c, name)
    return out


SCENARIOS = {
    "azure_storage": storage,
    "azure_network": network,
    "azure_database": database,
    "azure_kubernetes": kubernetes,
    "azure_functions": functions,
}
