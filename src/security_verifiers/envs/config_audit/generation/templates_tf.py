"""Secure Terraform base files for E2 (AWS, GCP, Azure), built as :mod:`hcl` trees.

Each cloud has small components (an S3 bucket with its encryption, versioning, logging and
public-access-block companions; a security group; an RDS instance; a GCS bucket and its IAM member;
an NSG; a Key Vault ...) and a scenario composes a few of them into one realistic file with a
``terraform``/``provider`` header and the ``variable`` blocks it needs. Secrets are always read from
variables marked ``sensitive`` or from files, never written as literals, so every base is clean under
all engines of the oracle and is the item's ``fixed`` answer.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from security_verifiers.envs.config_audit.generation.hcl_tree import Block, Raw, heredoc, ref, render_hcl

COMPANIES = ("acme", "globex", "initech", "umbrella", "hooli", "stark", "wayne", "tyrell", "cyberdyne", "aperture")
ENVS = ("prod", "staging", "shared", "dev")
AWS_REGIONS = ("us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-southeast-2")
GCP_REGIONS = ("us-central1", "europe-west1", "europe-west4", "asia-northeast1")
AZ_LOCATIONS = ("westeurope", "northeurope", "eastus2", "uksouth")
PURPOSES = ("data", "uploads", "reports", "artifacts", "exports", "media", "backups", "datalake")
ADMIN_RANGES = ("10.0.0.0/8", "10.20.0.0/16", "172.16.0.0/12", "192.168.10.0/24", "203.0.113.0/24")


@dataclass
class TFBase:
    """A secure Terraform file under construction or mutation; operators edit ``blocks`` in place."""

    template: str
    cloud: str
    blocks: list[Block]
    platform: str = "terraform"
    notes: dict[str, Any] = field(default_factory=dict)

    def render(self) -> str:
        return render_hcl(self.blocks)

    def copy(self) -> TFBase:
        return TFBase(self.template, self.cloud, copy.deepcopy(self.blocks), self.platform, dict(self.notes))

    def resources(self, *types: str) -> list[Block]:
        return [b for b in self.blocks if b.type == "resource" and (not types or b.rtype in types)]

    def data(self, *types: str) -> list[Block]:
        return [b for b in self.blocks if b.type == "data" and (not types or b.rtype in types)]

    def find(self, address: str) -> Block:
        for b in self.blocks:
            if b.type in ("resource", "data") and b.address == address:
                return b
        raise KeyError(address)

    def referencing(self, rtype: str, target: str) -> list[Block]:
        """Resources of ``rtype`` whose ``bucket``-like attribute references ``target`` (an address)."""
        out = []
        for b in self.resources(rtype):
            for _, value in (e for e in b.body if isinstance(e, tuple)):
                if getattr(value, "text", "").startswith(target + "."):
                    out.append(b)
                    break
        return out


@dataclass
class _Ctx:
    rng: random.Random
    company: str
    env: str
    region: str
    variables: dict[str, Block] = field(default_factory=dict)

    def name(self, *parts: str) -> str:
        return "-".join((self.company, self.env, *parts))

    def tags(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        return {"environment": self.env, "owner": self.rng.choice(("platform", "data", "security", "web")),
                "managed_by": "terraform", **(extra or {})}

    def variable(self, name: str, description: str, sensitive: bool = False, default: Any = None,
                 type_: str = "string") -> Raw:
        """A reference to ``var.name``; the ``variable`` block is declared once at the top of the file."""
        body: list[Any] = [("description", description), ("type", ref(type_))]
        if default is not None:
            body.append(("default", default))
        if sensitive:
            body.append(("sensitive", True))
        self.variables.setdefault(name, Block("variable", (name,), body))
        return ref(f"var.{name}")


def resource(rtype: str, name: str, body: list[Any]) -> Block:
    return Block("resource", (rtype, name), body)


def data(rtype: str, name: str, body: list[Any]) -> Block:
    return Block("data", (rtype, name), body)


def _suffix(rng: random.Random) -> str:
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(6))


# --------------------------------------------------------------------------------------------------
# AWS
# --------------------------------------------------------------------------------------------------
def aws_header(c: _Ctx) -> list[Block]:
    req = Block("required_providers", (), [("aws", {"source": "hashicorp/aws", "version": "~> 5.0"})])
    return [Block("terraform", (), [("required_version", ">= 1.5.0"), req]),
            Block("provider", ("aws",), [("region", c.region)])]


def aws_kms(c: _Ctx, name: str, purpose: str) -> list[Block]:
    key = resource("aws_kms_key", name, [("description", f"Encryption key for {purpose}"),
                                         ("deletion_window_in_days", c.rng.choice((7, 14, 30))),
                                         ("enable_key_rotation", True), ("tags", c.tags())])
    alias = resource("aws_kms_alias", name, [("name", f"alias/{c.name(name.replace('_', '-'))}"),
                                             ("target_key_id", ref(f"aws_kms_key.{name}.key_id"))])
    return [key, alias]


def aws_s3(c: _Ctx, name: str, purpose: str, kms: str | None) -> list[Block]:
    """A bucket and every companion resource a hardened bucket needs (one per catalog rule)."""
    bucket_ref = ref(f"aws_s3_bucket.{name}.id")
    blocks = [resource("aws_s3_bucket", name, [("bucket", c.name(purpose, _suffix(c.rng))),
                                               ("tags", c.tags({"purpose": purpose}))])]
    if c.rng.random() < 0.5:
        blocks.append(resource("aws_s3_bucket_acl", name, [("bucket", bucket_ref), ("acl", "private")]))
    blocks.append(resource("aws_s3_bucket_public_access_block", name, [
        ("bucket", bucket_ref), ("block_public_acls", True), ("block_public_policy", True),
        ("ignore_public_acls", True), ("restrict_public_buckets", True)]))
    default = Block("apply_server_side_encryption_by_default", (),
                    [("sse_algorithm", "aws:kms"), ("kms_master_key_id", ref(f"aws_kms_key.{kms}.arn"))]
                    if kms else [("sse_algorithm", "AES256")])
    blocks.append(resource("aws_s3_bucket_server_side_encryption_configuration", name, [
        ("bucket", bucket_ref), Block("rule", (), [default, ("bucket_key_enabled", True)])]))
    blocks.append(resource("aws_s3_bucket_versioning", name, [
        ("bucket", bucket_ref), Block("versioning_configuration", (), [("status", "Enabled")])]))
    log_bucket = c.variable("access_log_bucket", "Central bucket that receives S3 server access logs")
    blocks.append(resource("aws_s3_bucket_logging", name, [
        ("bucket", bucket_ref), ("target_bucket", log_bucket), ("target_prefix", f"s3/{purpose}/")]))
    return blocks


def aws_security_group(c: _Ctx, name: str, admin_port: int) -> list[Block]:
    def rule(kind: str, desc: str, port: int, cidrs: list[str], proto: str = "tcp") -> Block:
        return Block(kind, (), [("description", desc), ("from_port", port), ("to_port", port),
                                ("protocol", proto), ("cidr_blocks", cidrs)])

    admin = "SSH from the bastion network" if admin_port == 22 else "RDP from the admin network"
    body: list[Any] = [("name", c.name(name.replace("_", "-"))), ("description", f"Traffic rules for {name}"),
                       ("vpc_id", c.variable("vpc_id", "VPC the resources live in")),
                       rule("ingress", "HTTPS from anywhere", 443, ["0.0.0.0/0"]),
                       rule("ingress", admin, admin_port, [c.rng.choice(ADMIN_RANGES)]),
                       Block("egress", (), [("description", "All outbound"), ("from_port", 0), ("to_port", 0),
                                            ("protocol", "-1"), ("cidr_blocks", ["0.0.0.0/0"])]),
                       ("tags", c.tags())]
    return [resource("aws_security_group", name, body)]


def aws_rds(c: _Ctx, name: str, kms: str) -> list[Block]:
    engine, version, port = c.rng.choice((("postgres", "16.3", 5432), ("mysql", "8.0.39", 3306)))
    sg = resource("aws_security_group", f"{name}_db", [
        ("name", c.name(name.replace("_", "-"), "db")), ("description", "Database access from the app subnets"),
        ("vpc_id", c.variable("vpc_id", "VPC the resources live in")),
        Block("ingress", (), [("description", "App subnets"), ("from_port", port), ("to_port", port),
                              ("protocol", "tcp"), ("cidr_blocks", [c.rng.choice(ADMIN_RANGES)])]),
        ("tags", c.tags())])
    subnets = resource("aws_db_subnet_group", name, [
        ("name", c.name(name.replace("_", "-"))),
        ("subnet_ids", c.variable("private_subnet_ids", "Private subnets for the database", type_="list(string)")),
        ("tags", c.tags())])
    db = resource("aws_db_instance", name, [
        ("identifier", c.name(name.replace("_", "-"))), ("engine", engine), ("engine_version", version),
        ("instance_class", c.rng.choice(("db.t4g.medium", "db.m6g.large", "db.r6g.large"))),
        ("allocated_storage", c.rng.choice((20, 50, 100))), ("storage_type", "gp3"),
        ("storage_encrypted", True), ("kms_key_id", ref(f"aws_kms_key.{kms}.arn")),
        ("username", "app_admin"), ("password", c.variable("db_password", "Master password", sensitive=True)),
        ("db_subnet_group_name", ref(f"aws_db_subnet_group.{name}.name")),
        ("vpc_security_group_ids", [ref(f"aws_security_group.{name}_db.id")]),
        ("publicly_accessible", False), ("multi_az", c.rng.random() < 0.5),
        ("backup_retention_period", c.rng.choice((7, 14, 35))), ("deletion_protection", True),
        ("skip_final_snapshot", False), ("final_snapshot_identifier", c.name(name.replace("_", "-"), "final")),
        ("tags", c.tags())])
    return [sg, subnets, db]


def aws_ebs(c: _Ctx, name: str, kms: str) -> list[Block]:
    return [resource("aws_ebs_volume", name, [
        ("availability_zone", f"{c.region}{c.rng.choice('abc')}"), ("size", c.rng.choice((20, 50, 100, 200))),
        ("type", "gp3"), ("encrypted", True), ("kms_key_id", ref(f"aws_kms_key.{kms}.arn")),
        ("tags", c.tags({"Name": c.name(name.replace("_", "-"))}))])]


def aws_iam(c: _Ctx, name: str, bucket: str | None, kms: str | None) -> list[Block]:
    """A role, its trust policy and a least-privilege permission policy built with policy documents."""
    trust = data("aws_iam_policy_document", f"{name}_assume", [Block("statement", (), [
        ("effect", "Allow"), ("actions", ["sts:AssumeRole"]),
        Block("principals", (), [("type", "Service"), ("identifiers", ["lambda.amazonaws.com"])])])])
    target = f"aws_s3_bucket.{bucket}.arn" if bucket else None
    statements = [Block("statement", (), [
        ("sid", "ReadObjects"), ("effect", "Allow"), ("actions", ["s3:GetObject", "s3:ListBucket"]),
        ("resources", [ref(target), ref(f'"${{{target}}}/*"')] if target
         else [f"arn:aws:s3:::{c.name('shared')}", f"arn:aws:s3:::{c.name('shared')}/*"])])]
    if kms:
        statements.append(Block("statement", (), [("sid", "DecryptObjects"), ("effect", "Allow"),
                                                  ("actions", ["kms:Decrypt"]),
                                                  ("resources", [ref(f"aws_kms_key.{kms}.arn")])]))
    perms = data("aws_iam_policy_document", name, statements)
    trust_json = ref(f"data.aws_iam_policy_document.{name}_assume.json")
    role = resource("aws_iam_role", name, [("name", c.name(name.replace("_", "-"))),
                                           ("assume_role_policy", trust_json), ("tags", c.tags())])
    policy = resource("aws_iam_policy", name, [("name", c.name(name.replace("_", "-"), "access")),
                                               ("policy", ref(f"data.aws_iam_policy_document.{name}.json"))])
    attach = resource("aws_iam_role_policy_attachment", name, [("role", ref(f"aws_iam_role.{name}.name")),
                                                                ("policy_arn", ref(f"aws_iam_policy.{name}.arn"))])
    return [trust, perms, role, policy, attach]


def aws_lambda(c: _Ctx, name: str, bucket: str) -> list[Block]:
    env = Block("environment", (), [("variables", {"SOURCE_BUCKET": ref(f"aws_s3_bucket.{bucket}.id"),
                                                   "LOG_LEVEL": c.rng.choice(("INFO", "WARN")),
                                                   "STAGE": c.env})])
    return [resource("aws_lambda_function", name, [
        ("function_name", c.name(name.replace("_", "-"))), ("role", ref(f"aws_iam_role.{name}.arn")),
        ("runtime", c.rng.choice(("python3.12", "nodejs20.x"))), ("handler", "main.handler"),
        ("filename", f"build/{name}.zip"), ("source_code_hash", ref(f'filebase64sha256("build/{name}.zip")')),
        ("timeout", c.rng.choice((30, 60, 300))), ("memory_size", c.rng.choice((256, 512, 1024))),
        env, Block("tracing_config", (), [("mode", "Active")]), ("tags", c.tags())])]


def aws_acm(c: _Ctx, name: str) -> list[Block]:
    """An imported certificate whose key is read from a file outside the repository."""
    return [resource("aws_acm_certificate", name, [
        ("private_key", ref(f'file("${{path.module}}/certs/{name}.key")')),
        ("certificate_body", ref(f'file("${{path.module}}/certs/{name}.crt")')),
        ("certificate_chain", ref('file("${path.module}/certs/chain.pem")')),
        ("tags", c.tags())])]


def aws_cloudtrail(c: _Ctx, name: str, kms: str) -> list[Block]:
    bucket = f"{name}_logs"
    blocks = aws_s3(c, bucket, "trail", kms)
    policy = data("aws_iam_policy_document", bucket, [
        Block("statement", (), [("sid", "AclCheck"), ("effect", "Allow"), ("actions", ["s3:GetBucketAcl"]),
                                ("resources", [ref(f"aws_s3_bucket.{bucket}.arn")]),
                                Block("principals", (), [("type", "Service"),
                                                         ("identifiers", ["cloudtrail.amazonaws.com"])])]),
        Block("statement", (), [("sid", "Write"), ("effect", "Allow"), ("actions", ["s3:PutObject"]),
                                ("resources", [ref(f'"${{aws_s3_bucket.{bucket}.arn}}/AWSLogs/*"')]),
                                Block("principals", (), [("type", "Service"),
                                                         ("identifiers", ["cloudtrail.amazonaws.com"])])])])
    blocks += [policy, resource("aws_s3_bucket_policy", bucket, [
        ("bucket", ref(f"aws_s3_bucket.{bucket}.id")), ("policy", ref(f"data.aws_iam_policy_document.{bucket}.json"))])]
    blocks.append(resource("aws_cloudtrail", name, [
        ("name", c.name(name.replace("_", "-"))), ("s3_bucket_name", ref(f"aws_s3_bucket.{bucket}.id")),
        ("include_global_service_events", True), ("is_multi_region_trail", True),
        ("enable_log_file_validation", True), ("kms_key_id", ref(f"aws_kms_key.{kms}.arn")),
        ("depends_on", [ref(f"aws_s3_bucket_policy.{bucket}")]), ("tags", c.tags())]))
    return blocks


def _aws_data_lake(c: _Ctx) -> list[Block]:
    kms = "data"
    purposes = c.rng.sample(PURPOSES, 2)
    out = aws_kms(c, kms, "the data lake")
    for p in purposes[: c.rng.choice((1, 2))]:
        out += aws_s3(c, p, p, kms if c.rng.random() < 0.7 else None)
    out += aws_iam(c, f"{purposes[0]}_reader", purposes[0], kms)
    return out


def _aws_web_stack(c: _Ctx) -> list[Block]:
    out = aws_kms(c, "volumes", "instance volumes")
    out += aws_security_group(c, "web", c.rng.choice((22, 22, 3389)))
    out += aws_ebs(c, "web_data", "volumes")
    if c.rng.random() < 0.7:
        out += aws_acm(c, "web")
    return out


def _aws_database(c: _Ctx) -> list[Block]:
    return aws_kms(c, "rds", "the database") + aws_rds(c, c.rng.choice(("orders", "billing", "users", "app")),
                                                       "rds")


def _aws_audit(c: _Ctx) -> list[Block]:
    out = aws_kms(c, "audit", "audit logs") + aws_cloudtrail(c, "main", "audit")
    if c.rng.random() < 0.5:
        out += aws_ebs(c, "forensics", "audit")
    return out


def _aws_lambda_pipeline(c: _Ctx) -> list[Block]:
    p = c.rng.choice(PURPOSES)
    fn = f"{p}_processor"
    out = aws_kms(c, "pipeline", "the pipeline") + aws_s3(c, p, p, "pipeline")
    out += aws_iam(c, fn, p, "pipeline") + aws_lambda(c, fn, p)
    return out


# --------------------------------------------------------------------------------------------------
# GCP
# --------------------------------------------------------------------------------------------------
def gcp_header(c: _Ctx) -> list[Block]:
    req = Block("required_providers", (), [("google", {"source": "hashicorp/google", "version": "~> 5.0"})])
    return [Block("terraform", (), [("required_version", ">= 1.5.0"), req]),
            Block("provider", ("google",), [("project", c.variable("project_id", "GCP project")),
                                            ("region", c.region)])]


def gcp_kms(c: _Ctx, name: str) -> list[Block]:
    ring = resource("google_kms_key_ring", name, [("name", c.name(name.replace("_", "-"))), ("location", c.region)])
    key = resource("google_kms_crypto_key", name, [
        ("name", f"{name.replace('_', '-')}-key"), ("key_ring", ref(f"google_kms_key_ring.{name}.id")),
        ("rotation_period", c.rng.choice(("7776000s", "2592000s", "5184000s"))),
        Block("lifecycle", (), [("prevent_destroy", True)])])
    return [ring, key]


def gcp_bucket(c: _Ctx, name: str, kms: str) -> list[Block]:
    multi_region = {"us": "US", "europe": "EU", "asia": "ASIA"}[c.region.split("-")[0]]
    bucket = resource("google_storage_bucket", name, [
        ("name", c.name(name.replace("_", "-"), _suffix(c.rng))),
        ("location", multi_region if c.rng.random() < 0.3 else c.region),
        ("force_destroy", False), ("uniform_bucket_level_access", True), ("public_access_prevention", "enforced"),
        Block("versioning", (), [("enabled", True)]),
        Block("encryption", (), [("default_kms_key_name", ref(f"google_kms_crypto_key.{kms}.id"))]),
        Block("logging", (), [("log_bucket", c.variable("log_bucket", "Bucket that receives access logs"))]),
        ("labels", c.tags())])
    member = c.rng.choice(("group:data-readers@{co}.com", "serviceAccount:etl@{co}-{env}.iam.gserviceaccount.com",
                           "user:analyst@{co}.com")).format(co=c.company, env=c.env)
    iam = resource("google_storage_bucket_iam_member", f"{name}_reader", [
        ("bucket", ref(f"google_storage_bucket.{name}.name")), ("role", "roles/storage.objectViewer"),
        ("member", member)])
    return [bucket, iam]


def gcp_network(c: _Ctx, name: str) -> list[Block]:
    net = resource("google_compute_network", name, [("name", c.name(name.replace("_", "-"))),
                                                    ("auto_create_subnetworks", False)])

    def fw(fname: str, port: str, ranges: list[str], tag: str) -> Block:
        return resource("google_compute_firewall", fname, [
            ("name", c.name(fname.replace("_", "-"))), ("network", ref(f"google_compute_network.{name}.name")),
            ("direction", "INGRESS"), Block("allow", (), [("protocol", "tcp"), ("ports", [port])]),
            ("source_ranges", ranges), ("target_tags", [tag])])

    out = [net, fw("allow_https", "443", ["0.0.0.0/0"], "web"),
           fw("allow_ssh_iap", "22", ["35.235.240.0/20"], "ssh")]
    if c.rng.random() < 0.4:
        out.append(fw("allow_rdp_admin", "3389", [c.rng.choice(ADMIN_RANGES)], "windows"))
    return out


def gcp_sql(c: _Ctx, name: str) -> list[Block]:
    version = c.rng.choice(("POSTGRES_16", "MYSQL_8_0"))
    ipc = Block("ip_configuration", (), [
        ("ipv4_enabled", True), ("ssl_mode", "ENCRYPTED_ONLY"),
        Block("authorized_networks", (), [("name", "office"), ("value", c.rng.choice(ADMIN_RANGES[3:]))])])
    settings = Block("settings", (), [
        ("tier", c.rng.choice(("db-custom-2-7680", "db-custom-4-15360"))),
        ("availability_type", c.rng.choice(("REGIONAL", "ZONAL"))), ipc,
        Block("backup_configuration", (), [("enabled", True), ("point_in_time_recovery_enabled", True)])])
    inst = resource("google_sql_database_instance", name, [
        ("name", c.name(name.replace("_", "-"))), ("database_version", version), ("region", c.region),
        ("deletion_protection", True), settings])
    db = resource("google_sql_database", name, [("name", name), ("instance",
                                                                 ref(f"google_sql_database_instance.{name}.name"))])
    user = resource("google_sql_user", name, [("name", "app"), ("instance",
                                                                ref(f"google_sql_database_instance.{name}.name")),
                                              ("password", c.variable("db_password", "Database password",
                                                                      sensitive=True))])
    return [inst, db, user]


def gcp_ssl_certificate(c: _Ctx, name: str) -> list[Block]:
    return [resource("google_compute_ssl_certificate", name, [
        ("name_prefix", f"{name.replace('_', '-')}-"), ("description", "Frontend certificate"),
        ("private_key", ref(f'file("${{path.module}}/certs/{name}.key")')),
        ("certificate", ref(f'file("${{path.module}}/certs/{name}.crt")')),
        Block("lifecycle", (), [("create_before_destroy", True)])])]


def gcp_secret(c: _Ctx, name: str) -> list[Block]:
    secret = resource("google_secret_manager_secret", name, [
        ("secret_id", name.replace("_", "-")), Block("replication", (), [Block("auto", (), [])]),
        ("labels", c.tags())])
    version = resource("google_secret_manager_secret_version", name, [
        ("secret", ref(f"google_secret_manager_secret.{name}.id")),
        ("secret_data", c.variable(name, "Value stored in Secret Manager", sensitive=True))])
    return [secret, version]


def _gcp_storage(c: _Ctx) -> list[Block]:
    out = gcp_kms(c, "storage")
    for p in c.rng.sample(PURPOSES, c.rng.choice((1, 2))):
        out += gcp_bucket(c, p, "storage")
    if c.rng.random() < 0.5:
        out += gcp_secret(c, "partner_sync_key")
    return out


def _gcp_network(c: _Ctx) -> list[Block]:
    out = gcp_network(c, c.rng.choice(("main", "apps", "shared")))
    if c.rng.random() < 0.7:
        out += gcp_ssl_certificate(c, "frontend")
    return out


def _gcp_database(c: _Ctx) -> list[Block]:
    out = gcp_sql(c, c.rng.choice(("orders", "inventory", "accounts")))
    if c.rng.random() < 0.6:
        out += gcp_kms(c, "backups")
    return out


# --------------------------------------------------------------------------------------------------
# Azure
# --------------------------------------------------------------------------------------------------
def azure_header(c: _Ctx) -> list[Block]:
    req = Block("required_providers", (), [("azurerm", {"source": "hashicorp/azurerm", "version": "~> 4.0"})])
    return [Block("terraform", (), [("required_version", ">= 1.5.0"), req]),
            Block("provider", ("azurerm",), [Block("features", (), [])])]


def azure_resource_group(c: _Ctx) -> list[Block]:
    return [resource("azurerm_resource_group", "main", [("name", f"rg-{c.company}-{c.env}"),
                                                        ("location", c.region), ("tags", c.tags())])]


_RG = (("resource_group_name", ref("azurerm_resource_group.main.name")),
       ("location", ref("azurerm_resource_group.main.location")))


def azure_storage(c: _Ctx, name: str) -> list[Block]:
    account = resource("azurerm_storage_account", name, [
        ("name", f"st{c.company}{c.env}{name}"[:20] + _suffix(c.rng)[:4]), *_RG,
        ("account_tier", "Standard"), ("account_replication_type", c.rng.choice(("GRS", "ZRS", "LRS"))),
        ("min_tls_version", "TLS1_2"), ("https_traffic_only_enabled", True),
        ("allow_nested_items_to_be_public", False), ("public_network_access_enabled", False),
        ("shared_access_key_enabled", False),
        Block("blob_properties", (), [Block("delete_retention_policy", (), [("days", c.rng.choice((7, 14, 30)))])]),
        ("tags", c.tags())])
    container = resource("azurerm_storage_container", name, [
        ("name", c.rng.choice(("uploads", "reports", "exports", "data"))),
        ("storage_account_id", ref(f"azurerm_storage_account.{name}.id")), ("container_access_type", "private")])
    return [account, container]


def azure_nsg(c: _Ctx, name: str, admin_port: int) -> list[Block]:
    def rule(rname: str, priority: int, port: str, source: str) -> Block:
        return Block("security_rule", (), [
            ("name", rname), ("priority", priority), ("direction", "Inbound"), ("access", "Allow"),
            ("protocol", "Tcp"), ("source_port_range", "*"), ("destination_port_range", port),
            ("source_address_prefix", source), ("destination_address_prefix", "*")])

    admin = "allow-ssh-admin" if admin_port == 22 else "allow-rdp-admin"
    return [resource("azurerm_network_security_group", name, [
        ("name", f"nsg-{c.company}-{c.env}-{name}"), *_RG,
        rule("allow-https", 100, "443", "Internet"),
        rule(admin, 110, str(admin_port), c.rng.choice(ADMIN_RANGES)), ("tags", c.tags())])]


def azure_sql(c: _Ctx, name: str) -> list[Block]:
    server = resource("azurerm_mssql_server", name, [
        ("name", f"sql-{c.company}-{c.env}-{name}"), *_RG, ("version", "12.0"),
        ("administrator_login", "sqladmin"),
        ("administrator_login_password", c.variable("sql_admin_password", "SQL administrator password",
                                                    sensitive=True)),
        ("minimum_tls_version", "1.2"), ("public_network_access_enabled", False), ("tags", c.tags())])
    db = resource("azurerm_mssql_database", name, [
        ("name", f"sqldb-{name}"), ("server_id", ref(f"azurerm_mssql_server.{name}.id")),
        ("sku_name", c.rng.choice(("S0", "GP_S_Gen5_2", "BC_Gen5_2"))), ("zone_redundant", False)])
    return [server, db]


def azure_keyvault(c: _Ctx, name: str) -> list[Block]:
    client = data("azurerm_client_config", "current", [])
    vault = resource("azurerm_key_vault", name, [
        ("name", f"kv-{c.company}-{c.env}-{_suffix(c.rng)[:4]}"), *_RG,
        ("tenant_id", ref("data.azurerm_client_config.current.tenant_id")), ("sku_name", "premium"),
        ("purge_protection_enabled", True), ("soft_delete_retention_days", 90),
        ("rbac_authorization_enabled", True), ("public_network_access_enabled", False),
        Block("network_acls", (), [("default_action", "Deny"), ("bypass", "AzureServices")]), ("tags", c.tags())])
    secret = resource("azurerm_key_vault_secret", f"{name}_tls_key", [
        ("name", "tls-private-key"), ("value", ref(f'file("${{path.module}}/certs/{name}.key")')),
        ("key_vault_id", ref(f"azurerm_key_vault.{name}.id")), ("content_type", "application/x-pem-file"),
        ("expiration_date", "2026-12-31T00:00:00Z")])
    out = [client, vault, secret]
    if c.rng.random() < 0.5:
        out.append(resource("azurerm_key_vault_secret", f"{name}_partner_key", [
            ("name", "partner-aws-key-id"),
            ("value", c.variable("partner_aws_key_id", "Key id of the partner's AWS account", sensitive=True)),
            ("key_vault_id", ref(f"azurerm_key_vault.{name}.id")), ("content_type", "text/plain"),
            ("expiration_date", "2026-12-31T00:00:00Z")]))
    return out


def _azure_storage(c: _Ctx) -> list[Block]:
    out = azure_resource_group(c) + azure_storage(c, c.rng.choice(("data", "logs", "media")))
    if c.rng.random() < 0.5:
        out += azure_keyvault(c, "main")
    return out


def _azure_network(c: _Ctx) -> list[Block]:
    out = azure_resource_group(c) + azure_nsg(c, c.rng.choice(("web", "app", "jump")), c.rng.choice((22, 3389)))
    if c.rng.random() < 0.5:
        out += azure_storage(c, "diag")
    return out


def _azure_database(c: _Ctx) -> list[Block]:
    out = azure_resource_group(c) + azure_sql(c, c.rng.choice(("orders", "crm", "hr")))
    if c.rng.random() < 0.6:
        out += azure_keyvault(c, "db")
    return out


# --------------------------------------------------------------------------------------------------
# Scenarios
# --------------------------------------------------------------------------------------------------
_HEADERS = {"aws": aws_header, "gcp": gcp_header, "azure": azure_header}
_REGIONS = {"aws": AWS_REGIONS, "gcp": GCP_REGIONS, "azure": AZ_LOCATIONS}
_SCENARIOS: dict[str, tuple[str, Callable[[_Ctx], list[Block]]]] = {
    "aws_data_lake": ("aws", _aws_data_lake),
    "aws_web_stack": ("aws", _aws_web_stack),
    "aws_database": ("aws", _aws_database),
    "aws_audit": ("aws", _aws_audit),
    "aws_lambda_pipeline": ("aws", _aws_lambda_pipeline),
    "gcp_storage": ("gcp", _gcp_storage),
    "gcp_network": ("gcp", _gcp_network),
    "gcp_database": ("gcp", _gcp_database),
    "azure_storage": ("azure", _azure_storage),
    "azure_network": ("azure", _azure_network),
    "azure_database": ("azure", _azure_database),
}


def build(template: str, rng: random.Random) -> TFBase:
    """One secure file of scenario ``template``: header, variables, then the resources."""
    cloud, body = _SCENARIOS[template]
    c = _Ctx(rng, rng.choice(COMPANIES), rng.choice(ENVS), rng.choice(_REGIONS[cloud]))
    header = _HEADERS[cloud](c)
    resources = body(c)
    variables = [c.variables[k] for k in sorted(c.variables)]
    return TFBase(template, cloud, header + variables + resources)


TF_TEMPLATES: dict[str, Callable[[random.Random], TFBase]] = {name: partial(build, name) for name in _SCENARIOS}
TF_CLOUDS: dict[str, str] = {name: cloud for name, (cloud, _) in _SCENARIOS.items()}

__all__ = ["TFBase", "TF_TEMPLATES", "TF_CLOUDS", "heredoc"]
