"""Secure GCP building blocks and scenarios for the Terraform bases.

Hardened as the whole oracle asks: Cloud KMS keys with rotation; buckets with uniform access, public access
prevention, versioning, a CMEK and access logs; custom-mode networks whose subnets keep flow logs and Private
Google Access; Cloud SQL on a private IP only, with client certificates required and the PostgreSQL logging
flags; a private GKE cluster (release channel, Workload Identity, shielded nodes, Binary Authorization,
network policy, secrets encrypted with a CMEK) and its own node pool; Artifact Registry with a CMEK; Compute
Engine instances with no external IP, Shielded VM, OS Login and a dedicated service account; a second
generation Cloud Function reachable only from inside the VPC.
"""

from __future__ import annotations

from typing import Any

from security_verifiers.envs.config_audit.generation.hcl_tree import Block
from security_verifiers.envs.config_audit.generation.templates_tf_kit import (
    ADMIN_RANGES,
    PURPOSES,
    Ctx,
    dashed,
    ref,
    resource,
    suffix,
)

#: PostgreSQL flags the CIS GCP benchmark asks for (connections, locks, statements, pgAudit ...).
PG_FLAGS = (("log_checkpoints", "on"), ("log_connections", "on"), ("log_disconnections", "on"),
            ("log_lock_waits", "on"), ("log_hostname", "on"), ("log_duration", "on"),
            ("log_min_error_statement", "error"), ("log_statement", "ddl"), ("cloudsql.enable_pgaudit", "on"))
#: Cloud IAP's TCP forwarding range: the only source an SSH firewall rule needs.
IAP_RANGE = "35.235.240.0/20"


def _shielded_nodes() -> Block:
    """Shielded GKE nodes: Secure Boot and integrity monitoring (a fresh block: operators edit bases in place)."""
    return Block("shielded_instance_config", (), [("enable_secure_boot", True), ("enable_integrity_monitoring", True)])


def gcp_header(c: Ctx) -> list[Block]:
    req = Block("required_providers", (), [("google", {"source": "hashicorp/google", "version": "~> 5.0"})])
    return [Block("terraform", (), [("required_version", ">= 1.5.0"), req]),
            Block("provider", ("google",), [("project", c.variable("project_id", "GCP project")),
                                            ("region", c.region)])]


def gcp_kms(c: Ctx, name: str) -> list[Block]:
    ring = resource("google_kms_key_ring", name, [("name", c.name(dashed(name))), ("location", c.region)])
    key = resource("google_kms_crypto_key", name, [
        ("name", f"{dashed(name)}-key"), ("key_ring", ref(f"google_kms_key_ring.{name}.id")),
        ("rotation_period", c.rng.choice(("7776000s", "2592000s", "5184000s"))),
        Block("lifecycle", (), [("prevent_destroy", True)])])
    return [ring, key]


def gcp_bucket(c: Ctx, name: str, kms: str, reader: bool = True) -> list[Block]:
    multi_region = {"us": "US", "europe": "EU", "asia": "ASIA"}[c.region.split("-")[0]]
    bucket = resource("google_storage_bucket", name, [
        ("name", c.name(dashed(name), suffix(c.rng))),
        ("location", multi_region if c.rng.random() < 0.3 else c.region.upper()),
        ("force_destroy", False), ("uniform_bucket_level_access", True), ("public_access_prevention", "enforced"),
        Block("versioning", (), [("enabled", True)]),
        Block("encryption", (), [("default_kms_key_name", ref(f"google_kms_crypto_key.{kms}.id"))]),
        Block("logging", (), [("log_bucket", c.variable("log_bucket", "Bucket that receives access logs"))]),
        ("labels", c.tags())])
    if not reader:
        return [bucket]
    member = c.rng.choice(("group:data-readers@{co}.com", "serviceAccount:etl@{co}-{env}.iam.gserviceaccount.com",
                           "user:analyst@{co}.com")).format(co=c.company, env=c.env)
    iam = resource("google_storage_bucket_iam_member", f"{name}_reader", [
        ("bucket", ref(f"google_storage_bucket.{name}.name")), ("role", "roles/storage.objectViewer"),
        ("member", member)])
    return [bucket, iam]


def gcp_network(c: Ctx, name: str, cidr: str, firewalls: bool = True) -> list[Block]:
    """A custom-mode network, one subnet with flow logs and Private Google Access, and its firewall rules."""
    net = resource("google_compute_network", name, [("name", c.name(dashed(name))),
                                                    ("auto_create_subnetworks", False)])
    subnet = resource("google_compute_subnetwork", name, [
        ("name", c.name(dashed(name), c.region)), ("region", c.region), ("ip_cidr_range", cidr),
        ("network", ref(f"google_compute_network.{name}.id")), ("private_ip_google_access", True),
        ("private_ipv6_google_access", "ENABLE_OUTBOUND_VM_ACCESS_TO_GOOGLE"),
        Block("log_config", (), [("aggregation_interval", "INTERVAL_5_SEC"), ("flow_sampling", 0.5),
                                 ("metadata", "INCLUDE_ALL_METADATA")])])
    out = [net, subnet]
    if firewalls:
        out += [gcp_firewall(c, name, "allow_ssh_iap", "22", [IAP_RANGE], "ssh")]
    return out


def gcp_firewall(c: Ctx, network: str, name: str, port: str, ranges: list[str], tag: str) -> Block:
    return resource("google_compute_firewall", name, [
        ("name", c.name(dashed(name))), ("network", ref(f"google_compute_network.{network}.id")),
        ("direction", "INGRESS"), Block("allow", (), [("protocol", "tcp"), ("ports", [port])]),
        ("source_ranges", ranges), ("target_tags", [tag]),
        Block("log_config", (), [("metadata", "INCLUDE_ALL_METADATA")])])


def gcp_private_services(c: Ctx, network: str) -> list[Block]:
    """The peering range and connection that give managed services (Cloud SQL) a private IP in ``network``."""
    return [resource("google_compute_global_address", f"{network}_services", [
        ("name", c.name(dashed(network), "services")), ("purpose", "VPC_PEERING"), ("address_type", "INTERNAL"),
        ("prefix_length", 16), ("network", ref(f"google_compute_network.{network}.id"))]),
        resource("google_service_networking_connection", network, [
            ("network", ref(f"google_compute_network.{network}.id")), ("service", "servicenetworking.googleapis.com"),
            ("reserved_peering_ranges", [ref(f"google_compute_global_address.{network}_services.name")])])]


def gcp_sql(c: Ctx, name: str, network: str) -> list[Block]:
    version = c.rng.choice(("POSTGRES_18", "MYSQL_8_4", "MYSQL_8_0"))
    ipc = Block("ip_configuration", (), [
        ("ipv4_enabled", False), ("private_network", ref(f"google_compute_network.{network}.id")),
        ("ssl_mode", "TRUSTED_CLIENT_CERTIFICATE_REQUIRED")])
    backup: list[Any] = [("enabled", True), ("start_time", c.rng.choice(("02:00", "03:30", "04:00")))]
    backup += [("point_in_time_recovery_enabled", True)] if version.startswith("POSTGRES") else \
        [("binary_log_enabled", True)]
    flags = PG_FLAGS if version.startswith("POSTGRES") else (("local_infile", "off"),)
    settings = Block("settings", (), [
        ("tier", c.rng.choice(("db-custom-2-7680", "db-custom-4-15360"))),
        ("availability_type", c.rng.choice(("REGIONAL", "ZONAL"))), ipc,
        Block("backup_configuration", (), backup),
        *[Block("database_flags", (), [("name", k), ("value", v)]) for k, v in flags]])
    inst = resource("google_sql_database_instance", name, [
        ("name", c.name(dashed(name))), ("database_version", version), ("region", c.region),
        ("deletion_protection", True), settings,
        ("depends_on", [ref(f"google_service_networking_connection.{network}")])])
    db = resource("google_sql_database", name, [("name", name),
                                                ("instance", ref(f"google_sql_database_instance.{name}.name"))])
    user = resource("google_sql_user", name, [("name", "app"),
                                              ("instance", ref(f"google_sql_database_instance.{name}.name")),
                                              ("password", c.variable("db_password", "Database password",
                                                                      sensitive=True))])
    return [inst, db, user]


def gcp_ssl_certificate(c: Ctx, name: str) -> list[Block]:
    return [resource("google_compute_ssl_certificate", name, [
        ("name_prefix", f"{dashed(name)}-"), ("description", "Frontend certificate"),
        ("private_key", ref(f'file("${{path.module}}/certs/{name}.key")')),
        ("certificate", ref(f'file("${{path.module}}/certs/{name}.crt")')),
        Block("lifecycle", (), [("create_before_destroy", True)])])]


def gcp_secret(c: Ctx, name: str) -> list[Block]:
    secret = resource("google_secret_manager_secret", name, [
        ("secret_id", dashed(name)), Block("replication", (), [Block("auto", (), [])]),
        ("labels", c.tags())])
    version = resource("google_secret_manager_secret_version", name, [
        ("secret", ref(f"google_secret_manager_secret.{name}.id")),
        ("secret_data", c.variable(name, "Value stored in Secret Manager", sensitive=True))])
    return [secret, version]


def gcp_service_account(c: Ctx, name: str, purpose: str, roles: tuple[str, ...]) -> list[Block]:
    """A dedicated service account and its project roles (never the Compute Engine default account)."""
    out = [resource("google_service_account", name, [("account_id", c.name(dashed(name))[:30].rstrip("-")),
                                                     ("display_name", purpose)])]
    for role in roles:
        out.append(resource("google_project_iam_member", f"{name}_{role.rsplit('.', 1)[-1].lower()}", [
            ("project", c.variable("project_id", "GCP project")), ("role", f"roles/{role}"),
            ("member", ref(f'"serviceAccount:${{google_service_account.{name}.email}}"'))]))
    return out


def _service_agent_key_access(c: Ctx, name: str, kms: str, agent: str) -> Block:
    """Lets a Google service agent (``gcp-sa-<agent>``) use the key: needed before a service can use a CMEK."""
    project = c.source("google_project")
    return resource("google_kms_crypto_key_iam_member", name, [
        ("crypto_key_id", ref(f"google_kms_crypto_key.{kms}.id")),
        ("role", "roles/cloudkms.cryptoKeyEncrypterDecrypter"),
        ("member", ref(f'"serviceAccount:service-${{{project}.number}}@{agent}.iam.gserviceaccount.com"'))])


def gcp_gke(c: Ctx, name: str, network: str, kms: str) -> list[Block]:
    """A private, VPC-native GKE cluster and its separately managed node pool."""
    out = gcp_service_account(c, f"{name}_nodes", "GKE nodes", ("logging.logWriter", "monitoring.metricWriter",
                                                                 "monitoring.viewer"))
    out.append(_service_agent_key_access(c, f"{name}_gke_secrets", kms, "container-engine-robot"))
    project = c.variable("project_id", "GCP project")
    admin = c.rng.choice(ADMIN_RANGES)
    out.append(resource("google_container_cluster", name, [
        ("name", c.name(dashed(name))), ("location", c.region),
        ("network", ref(f"google_compute_network.{network}.id")),
        ("subnetwork", ref(f"google_compute_subnetwork.{network}.id")),
        ("remove_default_node_pool", True), ("initial_node_count", 1), ("enable_shielded_nodes", True),
        Block("node_config", (), [  # the bootstrap pool, removed once created, is hardened like the real one
            ("service_account", ref(f"google_service_account.{name}_nodes.email")),
            _shielded_nodes(),
            Block("workload_metadata_config", (), [("mode", "GKE_METADATA")])]),
        ("enable_intranode_visibility", True), ("deletion_protection", True),
        Block("release_channel", (), [("channel", c.rng.choice(("REGULAR", "STABLE")))]),
        Block("ip_allocation_policy", (), [("cluster_ipv4_cidr_block", "/16"), ("services_ipv4_cidr_block", "/22")]),
        Block("private_cluster_config", (), [("enable_private_nodes", True), ("enable_private_endpoint", True),
                                             ("master_ipv4_cidr_block", "172.16.0.32/28")]),
        Block("master_authorized_networks_config", (), [Block("cidr_blocks", (), [
            ("cidr_block", admin), ("display_name", "admin network")])]),
        Block("master_auth", (), [Block("client_certificate_config", (), [("issue_client_certificate", False)])]),
        Block("network_policy", (), [("enabled", True), ("provider", "CALICO")]),
        Block("workload_identity_config", (), [("workload_pool", ref(f'"${{{project.text}}}.svc.id.goog"'))]),
        Block("binary_authorization", (), [("evaluation_mode", "PROJECT_SINGLETON_POLICY_ENFORCE")]),
        Block("database_encryption", (), [("state", "ENCRYPTED"),
                                          ("key_name", ref(f"google_kms_crypto_key.{kms}.id"))]),
        Block("authenticator_groups_config", (), [("security_group", f"gke-security-groups@{c.company}.com")]),
        Block("logging_config", (), [("enable_components", ["SYSTEM_COMPONENTS", "WORKLOADS"])]),
        Block("monitoring_config", (), [("enable_components", ["SYSTEM_COMPONENTS"])]),
        ("resource_labels", c.tags()),
        ("depends_on", [ref(f"google_kms_crypto_key_iam_member.{name}_gke_secrets")])]))
    out.append(resource("google_container_node_pool", name, [
        ("name", f"{dashed(name)}-general"), ("cluster", ref(f"google_container_cluster.{name}.id")),
        ("location", c.region), ("node_count", c.rng.choice((1, 2, 3))),
        Block("management", (), [("auto_repair", True), ("auto_upgrade", True)]),
        Block("node_config", (), [
            ("machine_type", c.rng.choice(("e2-standard-4", "n2-standard-4", "n2d-standard-8"))),
            ("image_type", "COS_CONTAINERD"), ("disk_size_gb", c.rng.choice((50, 100))),
            ("service_account", ref(f"google_service_account.{name}_nodes.email")),
            ("oauth_scopes", ["https://www.googleapis.com/auth/cloud-platform"]),
            _shielded_nodes(),
            Block("workload_metadata_config", (), [("mode", "GKE_METADATA")]),
            ("labels", c.tags())])]))
    return out


def gcp_artifact_registry(c: Ctx, name: str, kms: str) -> list[Block]:
    access = _service_agent_key_access(c, f"{name}_registry", kms, "gcp-sa-artifactregistry")
    repo = resource("google_artifact_registry_repository", name, [
        ("location", c.region), ("repository_id", c.name(dashed(name))), ("format", "DOCKER"),
        ("description", f"Container images of {c.company} {c.env}"),
        ("kms_key_name", ref(f"google_kms_crypto_key.{kms}.id")),
        Block("docker_config", (), [("immutable_tags", True)]), ("labels", c.tags()),
        ("depends_on", [ref(f"google_kms_crypto_key_iam_member.{name}_registry")])])
    return [access, repo]


def gcp_instance(c: Ctx, name: str, network: str, kms: str) -> list[Block]:
    """A VM with no external address, Shielded VM, OS Login, no project-wide SSH keys, a CMEK boot disk and a
    dedicated service account."""
    out = gcp_service_account(c, f"{name}_vm", f"{name} instances", ("logging.logWriter", "monitoring.metricWriter"))
    out.append(_service_agent_key_access(c, f"{name}_disks", kms, "compute-system"))
    zone = f"{c.region}-{c.rng.choice('abc')}"
    out.append(resource("google_compute_instance", name, [
        ("name", c.name(dashed(name))), ("zone", zone),
        ("machine_type", c.rng.choice(("e2-standard-2", "n2-standard-2", "c3-standard-4"))),
        ("tags", ["ssh", dashed(name)]), ("can_ip_forward", False),
        Block("boot_disk", (), [("kms_key_self_link", ref(f"google_kms_crypto_key.{kms}.id")),
                                Block("initialize_params", (), [
                                    ("image", c.rng.choice(("debian-cloud/debian-12", "ubuntu-os-cloud/ubuntu-2404-lts",
                                                            "cos-cloud/cos-stable"))),
                                    ("size", c.rng.choice((20, 50)))])]),
        Block("network_interface", (), [("subnetwork", ref(f"google_compute_subnetwork.{network}.id"))]),
        Block("shielded_instance_config", (), [("enable_secure_boot", True), ("enable_vtpm", True),
                                               ("enable_integrity_monitoring", True)]),
        ("metadata", {"enable-oslogin": "TRUE", "block-project-ssh-keys": True}),
        Block("service_account", (), [("email", ref(f"google_service_account.{name}_vm.email")),
                                      ("scopes", ["cloud-platform"])]),
        ("labels", c.tags()), ("depends_on", [ref(f"google_kms_crypto_key_iam_member.{name}_disks")])]))
    return out


def gcp_function(c: Ctx, name: str, bucket: str) -> list[Block]:
    """A second-generation Cloud Function reachable only from the VPC, running as its own service account."""
    out = gcp_service_account(c, f"{name}_fn", f"{name} function", ("logging.logWriter",))
    out.append(resource("google_cloudfunctions2_function", name, [
        ("name", c.name(dashed(name))), ("location", c.region), ("description", f"{name} handler"),
        Block("build_config", (), [
            ("runtime", c.rng.choice(("python312", "nodejs20", "go122"))), ("entry_point", "handle"),
            Block("source", (), [Block("storage_source", (), [
                ("bucket", ref(f"google_storage_bucket.{bucket}.name")), ("object", f"functions/{name}.zip")])])]),
        Block("service_config", (), [
            ("max_instance_count", c.rng.choice((5, 10, 50))), ("available_memory", c.rng.choice(("256M", "512M"))),
            ("timeout_seconds", c.rng.choice((60, 120, 300))), ("ingress_settings", "ALLOW_INTERNAL_ONLY"),
            ("all_traffic_on_latest_revision", True),
            ("service_account_email", ref(f"google_service_account.{name}_fn.email"))]),
        ("labels", c.tags())]))
    return out


# --------------------------------------------------------------------------------------------------
# Scenarios
# --------------------------------------------------------------------------------------------------
def storage(c: Ctx) -> list[Block]:
    out = gcp_kms(c, "storage")
    for p in c.rng.sample(PURPOSES, c.rng.choice((1, 2))):
        out += gcp_bucket(c, p, "storage")
    if c.rng.random() < 0.5:
        out += gcp_secret(c, "partner_sync_key")
    return out


def network(c: Ctx) -> list[Block]:
    """A VPC with its firewall rules and frontend certificate, and often the VMs that sit in it."""
    name = c.rng.choice(("main", "apps", "shared"))
    out = gcp_network(c, name, "10.10.0.0/20")
    out.append(gcp_firewall(c, name, "allow_https", "443", ["0.0.0.0/0"], "web"))
    if c.rng.random() < 0.4:
        out.append(gcp_firewall(c, name, "allow_rdp_admin", "3389", [c.rng.choice(ADMIN_RANGES)], "windows"))
    if c.rng.random() < 0.7:
        out += gcp_ssl_certificate(c, "frontend")
    if c.rng.random() < 0.85:
        out += gcp_kms(c, "disks") + gcp_instance(c, c.rng.choice(("web", "worker", "batch")), name, "disks")
    return out


def database(c: Ctx) -> list[Block]:
    """A private Cloud SQL instance, and in some projects the admin VM the DBAs work from."""
    net = c.rng.choice(("data", "private"))
    out = gcp_network(c, net, "10.30.0.0/20") + gcp_private_services(c, net)
    out += gcp_sql(c, c.rng.choice(("orders", "inventory", "accounts")), net)
    vm = c.rng.random() < 0.5
    if vm or c.rng.random() < 0.5:
        out += gcp_kms(c, "backups")
    if vm:
        out += gcp_instance(c, c.rng.choice(("bastion", "jumphost")), net, "backups")
    return out


def kubernetes(c: Ctx) -> list[Block]:
    """A private GKE cluster in its own network, and the Artifact Registry repository it pulls images from."""
    out = gcp_kms(c, "platform") + gcp_network(c, "gke", "10.40.0.0/20")
    out += gcp_gke(c, c.rng.choice(("apps", "platform", "core")), "gke", "platform")
    return out + gcp_artifact_registry(c, "images", "platform")


def functions(c: Ctx) -> list[Block]:
    """A function, the bucket of its sources and, in some projects, the registry of its build images."""
    fn = c.rng.choice(("ingest", "thumbnails", "webhooks", "exports"))
    out = gcp_kms(c, "functions") + gcp_bucket(c, "sources", "functions", reader=False)
    out += gcp_function(c, fn, "sources")
    if c.rng.random() < 0.5:
        out += gcp_artifact_registry(c, "builds", "functions")
    return out


SCENARIOS = {
    "gcp_storage": storage,
    "gcp_network": network,
    "gcp_database": database,
    "gcp_kubernetes": kubernetes,
    "gcp_functions": functions,
}
