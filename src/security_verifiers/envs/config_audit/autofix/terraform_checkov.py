"""Fixers for Terraform rules that Checkov alone implements: every rule the generator injects, and the rules that
fire most on real files of the same resource types (S3, KMS, RDS, CloudTrail, security groups, GCS, Cloud SQL,
Azure storage, SQL and Key Vault).

A fix sets the secure value where the resource holds it, inserts the nested block that carries it, or appends
the companion resource a graph check looks for (an S3 lifecycle configuration, a private endpoint, an auditing
policy). What a fix cannot know (a subnet, a key of another account, the log workspace) becomes an input
``variable`` with a description and no default, so the file stays valid and says what its owner must supply.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from security_verifiers.engines.configs import TFBlock
from security_verifiers.engines.findings import Finding
from security_verifiers.envs.config_audit.autofix.hcl_text import HclText, Span
from security_verifiers.envs.config_audit.autofix.terraform_kit import (
    TFFixer,
    add_block,
    append_companion,
    both,
    companions,
    drop_attr,
    free_name,
    key_reference,
    narrow_azure_rules,
    nested,
    relink,
    set_attrs,
    set_in,
    set_nested,
    shared_variable,
)
from security_verifiers.envs.config_audit.autofix.terraform_secrets import fix_literal_secret

INTERNAL_CIDR = "10.0.0.0/8"
#: Who security alerts go to when a fix has to name someone (a placeholder, as the core fixers' example names).
SECURITY_CONTACT = "security@example.com"
OPEN_CIDR = r'"0\.0\.0\.0/0"'
#: What an attached AdministratorAccess becomes: AWS's view-only job function (a placeholder to narrow further).
VIEW_ONLY_POLICY = "arn:aws:iam::aws:policy/job-function/ViewOnlyAccess"
ADMIN_POLICY_RE = re.compile(r'"arn:aws:iam::aws:policy/AdministratorAccess"')


def _body(hcl: HclText, block: TFBlock) -> Span:
    current = hcl.block(block.address)
    assert current is not None
    return hcl.body(current)


def _with_block(fix: Callable[[HclText, TFBlock, Finding], bool]) -> TFFixer:
    """Skip findings whose resource is not in the file (the dispatcher reports them)."""
    def guarded(hcl: HclText, block: TFBlock | None, finding: Finding) -> bool:
        return block is not None and fix(hcl, block, finding)
    guarded.__doc__ = fix.__doc__
    return guarded


# --- AWS: keys, identities, network ---------------------------------------------------------------------------


@_with_block
def fix_kms_public_principal(hcl: HclText, block: TFBlock, finding: Finding) -> bool:
    """A key policy's ``"AWS": "*"`` (or ``Principal = "*"``) becomes the account's root: the account administers
    the key through IAM, nobody else."""
    caller = hcl.ensure_data("aws_caller_identity")
    root = f'"arn:aws:iam::${{{caller}.account_id}}:root"'
    span = _body(hcl, block)
    changed = hcl.sub(span, r'(["\']?AWS["\']?\s*[=:]\s*)"\*"', rf"\g<1>{root}")
    return hcl.sub(span, r'(["\']?Principal["\']?\s*[=:]\s*)"\*"', rf"\g<1>{{ AWS = {root} }}") or changed


@_with_block
def fix_kms_key_policy(hcl: HclText, block: TFBlock, finding: Finding) -> bool:
    """An explicit key policy in which the account administers the key (the default policy, written down)."""
    caller = hcl.ensure_data("aws_caller_identity")
    policy = ("jsonencode({\n    Version = \"2012-10-17\"\n    Statement = [\n      {\n"
              "        Sid       = \"AccountAdministration\"\n        Effect    = \"Allow\"\n"
              f"        Principal = {{ AWS = \"arn:aws:iam::${{{caller}.account_id}}:root\" }}\n"
              "        Action    = \"kms:*\"\n        Resource  = \"*\"\n      },\n    ]\n  })")
    return hcl.set_attr(_body(hcl, block), "policy", policy)


@_with_block
def fix_admin_policy_attached(hcl: HclText, block: TFBlock, finding: Finding) -> bool:
    """AdministratorAccess -> the view-only job function (the identity's real needs are for its owner to list)."""
    return hcl.sub(_body(hcl, block), ADMIN_POLICY_RE, f'"{VIEW_ONLY_POLICY}"')


@_with_block
def fix_sg_unrestricted_egress(hcl: HclText, block: TFBlock, finding: Finding) -> bool:
    """Egress of every protocol to the internet -> HTTPS (tcp/443) only, in the inline rules or the rule resource."""
    span = _body(hcl, block)
    rules = hcl.sub_blocks(span, "egress") or [span]
    changed = False
    for rule in reversed(rules):  # bottom-up: earlier spans stay valid
        text = "".join(hcl.lines[rule.lo:rule.hi])
        if not re.search(r'\bprotocol\s*=\s*"(-1|all)"', text):
            continue
        changed = hcl.sub(rule, r'(\bprotocol\s*=\s*)"(-1|all)"', r'\1"tcp"') or changed
        changed = hcl.sub(rule, r"(\b(from_port|to_port)\s*=\s*)-?\d+", r"\g<1>443") or changed
        if block.type == "aws_vpc_security_group_egress_rule":
            changed = hcl.sub(rule, r'(\bip_protocol\s*=\s*)"(-1|all)"', r'\1"tcp"') or changed
    return changed


@_with_block
def fix_sg_descriptions(hcl: HclText, block: TFBlock, finding: Finding) -> bool:
    """A description on the group and on each of its inline rules (what the rule is for is its review trail)."""
    changed = False
    for kind in ("egress", "ingress"):
        for rule in reversed(hcl.sub_blocks(_body(hcl, block), kind)):
            if hcl.find_attr(rule, "description") is None:
                changed = hcl.set_attr(rule, "description", f'"Managed {kind} rule"') or changed
    if hcl.find_attr(_body(hcl, block), "description") is None:
        changed = hcl.set_attr(_body(hcl, block), "description", f'"Traffic rules for {block.name}"') or changed
    return changed


@_with_block
def fix_imdsv1(hcl: HclText, block: TFBlock, finding: Finding) -> bool:
    """IMDSv2 only: ``metadata_options { http_tokens = "required" }``."""
    changed = set_in(hcl, block.address, ("metadata_options",), "http_tokens", '"required"')
    return set_in(hcl, block.address, ("metadata_options",), "http_endpoint", '"enabled"') or changed


@_with_block
def fix_ec2_public_ip(hcl: HclText, block: TFBlock, finding: Finding) -> bool:
    """No public address: on the instance, and on every network interface of a launch template."""
    if block.type == "aws_launch_template":
        spans = hcl.sub_blocks(_body(hcl, block), "network_interfaces")
        return any([hcl.sub(s, r"(\bassociate_public_ip_address\s*=\s*)true\b", r"\1false")
                    for s in reversed(spans)])
    return hcl.set_attr(_body(hcl, block), "associate_public_ip_address", "false")


@_with_block
def fix_lambda_env_secret(hcl: HclText, block: TFBlock, finding: Finding) -> bool:
    """The credential in the environment moves to a sensitive variable (see the core secret fixers)."""
    return fix_literal_secret(hcl, block, Finding(rule_id="cfg-hardcoded-aws-key", resource=finding.resource))


@_with_block
def fix_eks_endpoint(hcl: HclText, block: TFBlock, finding: Finding) -> bool:
    """A private API endpoint only (nodes and admins reach it from the VPC)."""
    changed = set_in(hcl, block.address, ("vpc_config",), "endpoint_private_access", "true")
    return set_in(hcl, block.address, ("vpc_config",), "endpoint_public_access", "false") or changed


@_with_block
def fix_eks_secrets_encryption(hcl: HclText, block: TFBlock, finding: Finding) -> bool:
    """Envelope encryption of Kubernetes secrets with a KMS key (the file's key, else one to supply)."""
    if nested(hcl, block.address, "encryption_config") is not None:
        return False
    key = key_reference(hcl, "aws_kms_key", "arn", f"{block.name}_secrets_kms_key_arn",
                        "KMS key that envelope-encrypts the cluster's secrets")
    add_block(hcl, block.address, (), ["encryption_config {\n", '  resources = ["secrets"]\n', "  provider {\n",
                                       f"    key_arn = {key}\n", "  }\n", "}\n"])
    return True


def _cmk(type_: str, key_attribute: str, path: tuple[str, ...] = ()) -> TFFixer:
    """Set ``key_attribute`` (in the block at ``path``) to a customer-managed AWS KMS key."""
    def fix(hcl: HclText, block: TFBlock | None, finding: Finding) -> bool:
        if block is None:
            return False
        span = nested(hcl, block.address, *path)
        if span is not None and hcl.find_attr(span, key_attribute) is not None:
            return False
        key = key_reference(hcl, type_, "arn" if type_ == "aws_kms_key" else "id", f"{block.name}_kms_key",
                            f"Customer-managed key of {block.address}")
        return set_in(hcl, block.address, path, key_attribute, key)
    fix.__doc__ = f"Encrypt with a customer-managed key ({key_attribute})."
    return fix


@_with_block
def fix_ecr_scan(hcl: HclText, block: TFBlock, finding: Finding) -> bool:
    """Scan images on push."""
    return set_in(hcl, block.address, ("image_scanning_configuration",), "scan_on_push", "true")


# --- AWS: S3 companions ---------------------------------------------------------------------------------------


def _bucket_companion(type_: str, body: str) -> TFFixer:
    def fix(hcl: HclText, block: TFBlock | None, finding: Finding) -> bool:
        if block is None or block.type != "aws_s3_bucket" or companions(hcl, block, type_):
            return False
        append_companion(hcl, block, type_, body)
        return True
    fix.__doc__ = f"Append an {type_} for the bucket."
    return fix


fix_s3_lifecycle = _bucket_companion("aws_s3_bucket_lifecycle_configuration", (
    "\n  rule {\n    id     = \"expire-noncurrent-versions\"\n    status = \"Enabled\"\n\n    filter {}\n\n"
    "    noncurrent_version_expiration {\n      noncurrent_days = 90\n    }\n\n"
    "    abort_incomplete_multipart_upload {\n      days_after_initiation = 7\n    }\n  }\n"))
fix_s3_notifications = _bucket_companion("aws_s3_bucket_notification", "  eventbridge = true\n")


@_with_block
def fix_s3_replication(hcl: HclText, block: TFBlock, finding: Finding) -> bool:
    """Replicate the bucket to a bucket of the recovery region (role and destination are the owner's to give)."""
    if block.type != "aws_s3_bucket" or companions(hcl, block, "aws_s3_bucket_replication_configuration"):
        return False
    role = shared_variable(hcl, "replication_role_arn", "IAM role S3 assumes to replicate objects")
    target = hcl.add_variable(f"{block.name}_replica_bucket_arn", f"Bucket of the recovery region for {block.name}")
    append_companion(hcl, block, "aws_s3_bucket_replication_configuration", (
        f"  role   = {role}\n\n  rule {{\n    id     = \"recovery-region\"\n    status = \"Enabled\"\n\n"
        f"    filter {{}}\n\n    delete_marker_replication {{\n      status = \"Enabled\"\n    }}\n\n"
        f"    destination {{\n      bucket        = var.{target}\n      storage_class = \"STANDARD_IA\"\n    }}\n"
        "  }\n"))
    return True


@_with_block
def fix_s3_kms(hcl: HclText, block: TFBlock, finding: Finding) -> bool:
    """Default encryption with KMS (``aws:kms``) instead of S3-managed keys, inline or in the configuration."""
    targets = [block] + companions(hcl, block, "aws_s3_bucket_server_side_encryption_configuration")
    changed = any([hcl.sub(_body(hcl, t), r'(\bsse_algorithm\s*=\s*)"AES256"', r'\1"aws:kms"') for t in targets])
    return relink(hcl, block, "aws_s3_bucket_server_side_encryption_configuration") or changed


# --- AWS: databases, trails ---------------------------------------------------------------------------------

_MYSQL_LOGS = '["audit", "error", "general", "slowquery"]'
#: The log types each engine exports (engine prefixes, the longest first).
RDS_LOGS = {"aurora-postgresql": '["postgresql"]', "postgres": '["postgresql", "upgrade"]', "mysql": _MYSQL_LOGS,
            "mariadb": _MYSQL_LOGS, "aurora": _MYSQL_LOGS}


@_with_block
def fix_rds_logs(hcl: HclText, block: TFBlock, finding: Finding) -> bool:
    """Export the engine's logs to CloudWatch Logs."""
    engine = str(block.attributes.get("engine", "aurora" if block.type == "aws_rds_cluster" else "postgres"))
    logs = next((v for k, v in RDS_LOGS.items() if engine.startswith(k)), '["error"]')
    return hcl.set_attr(_body(hcl, block), "enabled_cloudwatch_logs_exports", logs)


@_with_block
def fix_rds_monitoring(hcl: HclText, block: TFBlock, finding: Finding) -> bool:
    """Enhanced monitoring every 60 s, through the monitoring role the owner supplies."""
    changed = hcl.set_attr(_body(hcl, block), "monitoring_interval", "60")
    if hcl.find_attr(_body(hcl, block), "monitoring_role_arn") is None:
        role = hcl.add_variable(f"{block.name}_monitoring_role_arn", "Role RDS enhanced monitoring publishes with")
        changed = hcl.set_attr(_body(hcl, block), "monitoring_role_arn", f"var.{role}") or changed
    return changed


@_with_block
def fix_rds_performance_insights(hcl: HclText, block: TFBlock, finding: Finding) -> bool:
    """Performance Insights on, encrypted with the instance's key (else a key to supply)."""
    changed = hcl.set_attr(_body(hcl, block), "performance_insights_enabled", "true")
    if hcl.find_attr(_body(hcl, block), "performance_insights_kms_key_id") is None:
        key = block.attributes.get("kms_key_id")
        value = _expression(hcl, block, "kms_key_id") if key else key_reference(
            hcl, "aws_kms_key", "arn", f"{block.name}_insights_kms_key", "KMS key of Performance Insights")
        changed = hcl.set_attr(_body(hcl, block), "performance_insights_kms_key_id", value) or changed
    return changed


def _expression(hcl: HclText, block: TFBlock, key: str) -> str:
    """The source text of a one-line attribute of ``block``."""
    found = hcl.find_attr(_body(hcl, block), key)
    assert found is not None
    return hcl.lines[found[0]].split("=", 1)[1].strip()


def _parameter_groups(hcl: HclText, block: TFBlock) -> list[TFBlock]:
    return [b for b in hcl.blocks() if b.type == "aws_db_parameter_group"
            and re.search(rf"\b{re.escape(b.address)}\.(name|id)\b", hcl.block_text(block))]


def _add_parameters(hcl: HclText, group: TFBlock, parameters: tuple[tuple[str, str], ...]) -> bool:
    """Set each ``(name, value)`` parameter of a parameter group (its block added, or its value replaced)."""
    changed = False
    for name, value in parameters:
        current = hcl.block(group.address)
        assert current is not None
        spans = [p for p in hcl.sub_blocks(hcl.body(current), "parameter")
                 if re.search(rf'\bname\s*=\s*"{re.escape(name)}"', "".join(hcl.lines[p.lo:p.hi]))]
        if spans:
            changed = hcl.set_attr(spans[0], "value", f'"{value}"') or changed
        else:
            add_block(hcl, group.address, (), ["parameter {\n", f'  name  = "{name}"\n', f'  value = "{value}"\n',
                                               "}\n"])
            changed = True
    return changed


def _tls_parameter(engine: str) -> str:
    return "require_secure_transport" if engine.startswith(("mysql", "mariadb")) else "rds.force_ssl"


@_with_block
def fix_rds_tls(hcl: HclText, block: TFBlock, finding: Finding) -> bool:
    """The instance's parameter group requires TLS (rds.force_ssl / require_secure_transport = 1)."""
    parameter = _tls_parameter(str(block.attributes.get("engine", "postgres")))
    return any([_add_parameters(hcl, g, ((parameter, "1"),)) for g in _parameter_groups(hcl, block)])


@_with_block
def fix_rds_query_logging(hcl: HclText, block: TFBlock, finding: Finding) -> bool:
    """A parameter group that logs DDL and slow statements (a new one, requiring TLS, when the instance has none)."""
    logging = (("log_statement", "ddl"), ("log_min_duration_statement", "1000"))
    groups = _parameter_groups(hcl, block)
    if groups:
        return _add_parameters(hcl, groups[0], logging)
    version = str(block.attributes.get("engine_version", "16"))
    family = f"postgres{version.split('.')[0]}" if version[:1].isdigit() else "postgres16"
    name = free_name(hcl, "aws_db_parameter_group", block.name)
    parameters = "".join(f'\n  parameter {{\n    name  = "{k}"\n    value = "{v}"\n  }}\n'
                         for k, v in (("rds.force_ssl", "1"), *logging))
    hcl.append(f'resource "aws_db_parameter_group" "{name}" {{\n  name_prefix = "{block.name.replace("_", "-")}-"\n'
               f'  family      = "{family}"\n{parameters}}}\n')
    return set_attrs(("parameter_group_name", f"aws_db_parameter_group.{name}.name"))(hcl, hcl.block(block.address),
                                                                                      finding)


@_with_block
def fix_backup_selection(hcl: HclText, block: TFBlock, finding: Finding) -> bool:
    """The resource joins an AWS Backup plan (an ``aws_backup_selection``; plan and role are the owner's)."""
    if [b for b in hcl.blocks() if b.type == "aws_backup_selection" and block.address in hcl.block_text(b)]:
        return False
    plan = shared_variable(hcl, "backup_plan_id", "AWS Backup plan the resources join")
    role = shared_variable(hcl, "backup_role_arn", "Role AWS Backup assumes to back the resources up")
    name = free_name(hcl, "aws_backup_selection", block.name)
    hcl.append(f'resource "aws_backup_selection" "{name}" {{\n  name         = "{name.replace("_", "-")}"\n'
               f"  plan_id      = {plan}\n  iam_role_arn = {role}\n"
               f"  resources    = [{block.address}.arn]\n}}\n")
    return True


@_with_block
def fix_trail_cloudwatch(hcl: HclText, block: TFBlock, finding: Finding) -> bool:
    """Deliver the trail to a CloudWatch Logs group of the file (a new one, KMS-encrypted and kept a year) through
    a role the owner supplies."""
    groups = [b for b in hcl.blocks() if b.type == "aws_cloudwatch_log_group"
              and b.address in str(block.attributes.get("cloud_watch_logs_group_arn", ""))]
    if groups:
        return False
    key = key_reference(hcl, "aws_kms_key", "arn", f"{block.name}_logs_kms_key", "KMS key of the trail's log group")
    name = free_name(hcl, "aws_cloudwatch_log_group", block.name)
    hcl.append(f'resource "aws_cloudwatch_log_group" "{name}" {{\n  name              = "/aws/cloudtrail/{name}"\n'
               f"  retention_in_days = 365\n  kms_key_id        = {key}\n}}\n")
    changed = hcl.set_attr(_body(hcl, block), "cloud_watch_logs_group_arn",
                           f'"${{aws_cloudwatch_log_group.{name}.arn}}:*"')
    if hcl.find_attr(_body(hcl, block), "cloud_watch_logs_role_arn") is None:
        role = hcl.add_variable(f"{block.name}_cloudwatch_role_arn", "Role CloudTrail writes to CloudWatch Logs with")
        changed = hcl.set_attr(_body(hcl, block), "cloud_watch_logs_role_arn", f"var.{role}") or changed
    return changed


@_with_block
def fix_trail_sns(hcl: HclText, block: TFBlock, finding: Finding) -> bool:
    """Notify an SNS topic of every log delivery."""
    topic = hcl.add_variable(f"{block.name}_sns_topic", "SNS topic notified of each log file delivery")
    return hcl.set_attr(_body(hcl, block), "sns_topic_name", f"var.{topic}")


# --- GCP ----------------------------------------------------------------------------------------------------


@_with_block
def fix_subnet_flow_logs(hcl: HclText, block: TFBlock, finding: Finding) -> bool:
    """VPC flow logs on the subnet (5-second aggregation, half the flows sampled, all metadata)."""
    if nested(hcl, block.address, "log_config") is not None:
        return False
    add_block(hcl, block.address, (), ["log_config {\n", '  aggregation_interval = "INTERVAL_5_SEC"\n',
                                       "  flow_sampling        = 0.5\n",
                                       '  metadata             = "INCLUDE_ALL_METADATA"\n', "}\n"])
    return True


@_with_block
def fix_firewall_http(hcl: HclText, block: TFBlock, finding: Finding) -> bool:
    """Port 80 leaves the internet-facing rule (HTTPS stays); a rule for port 80 alone is narrowed to 10.0.0.0/8."""
    span = _body(hcl, block)
    changed = False
    for allow in reversed(hcl.sub_blocks(span, "allow")):
        changed = hcl.sub(allow, r'"80",\s*|,\s*"80"(?=\s*\])', "") or changed
    if not changed:
        changed = hcl.sub(_body(hcl, block), OPEN_CIDR, f'"{INTERNAL_CIDR}"')
    return changed


@_with_block
def fix_gke_authorized_networks(hcl: HclText, block: TFBlock, finding: Finding) -> bool:
    """The control plane reachable from authorised internal ranges only."""
    span = nested(hcl, block.address, "master_authorized_networks_config")
    if span is None:
        add_block(hcl, block.address, (), ["master_authorized_networks_config {\n", "  cidr_blocks {\n",
                                           f'    cidr_block   = "{INTERNAL_CIDR}"\n',
                                           '    display_name = "internal"\n', "  }\n", "}\n"])
        return True
    return hcl.sub(span, OPEN_CIDR, f'"{INTERNAL_CIDR}"')


@_with_block
def fix_gke_metadata(hcl: HclText, block: TFBlock, finding: Finding) -> bool:
    """The GKE metadata server (Workload Identity) in front of the node's metadata."""
    return set_in(hcl, block.address, ("node_config", "workload_metadata_config"), "mode", '"GKE_METADATA"')


@_with_block
def fix_compute_public_ip(hcl: HclText, block: TFBlock, finding: Finding) -> bool:
    """No external address: the ``access_config`` blocks of the interfaces go (reach it through IAP or a NAT)."""
    changed = False
    while True:
        spans = [a for n in hcl.sub_blocks(_body(hcl, block), "network_interface")
                 for a in hcl.sub_blocks(n, "access_config")]
        if not spans:
            return changed
        hcl.replace_lines(spans[0].lo, spans[0].hi, [])
        changed = True


@_with_block
def fix_function_ingress(hcl: HclText, block: TFBlock, finding: Finding) -> bool:
    """Ingress from inside the VPC only."""
    path = ("service_config",) if block.type == "google_cloudfunctions2_function" else ()
    return set_in(hcl, block.address, path, "ingress_settings", '"ALLOW_INTERNAL_ONLY"')


@_with_block
def fix_sql_public_ip(hcl: HclText, block: TFBlock, finding: Finding) -> bool:
    """No public IPv4 address (the instance is reached on its private network)."""
    path = ("settings", "ip_configuration")
    changed = set_in(hcl, block.address, path, "ipv4_enabled", "false")
    span = nested(hcl, block.address, *path)
    if span is not None and hcl.find_attr(span, "private_network") is None:
        network = hcl.add_variable(f"{block.name}_private_network", "VPC network the instance gets its private IP in")
        changed = set_in(hcl, block.address, path, "private_network", f"var.{network}") or changed
    return changed


def fix_sql_flag(flag: str, value: str) -> TFFixer:
    """A Cloud SQL database flag set to ``value`` (its block added to ``settings``, or its value replaced)."""
    def fix(hcl: HclText, block: TFBlock | None, finding: Finding) -> bool:
        if block is None:
            return False
        settings = nested(hcl, block.address, "settings", create=True)
        assert settings is not None
        spans = [f for f in hcl.sub_blocks(settings, "database_flags")
                 if re.search(rf'\bname\s*=\s*"{re.escape(flag)}"', "".join(hcl.lines[f.lo:f.hi]))]
        if spans:
            return hcl.set_attr(spans[0], "value", f'"{value}"')
        add_block(hcl, block.address, ("settings",), ["database_flags {\n", f'  name  = "{flag}"\n',
                                                      f'  value = "{value}"\n', "}\n"])
        return True
    fix.__doc__ = f"Set the database flag {flag} = {value}."
    return fix


#: The PostgreSQL and MySQL flags the CIS GCP benchmark asks for, by rule.
SQL_FLAGS = {
    "tf-gcp-sql-pg-log-checkpoints-off": ("log_checkpoints", "on"),
    "tf-gcp-sql-pg-log-connections-off": ("log_connections", "on"),
    "tf-gcp-sql-pg-log-disconnections-off": ("log_disconnections", "on"),
    "tf-gcp-sql-pg-log-lock-waits-off": ("log_lock_waits", "on"),
    "tf-gcp-sql-pg-log-hostname-off": ("log_hostname", "on"),
    "tf-gcp-sql-pg-log-duration-off": ("log_duration", "on"),
    "tf-gcp-sql-pg-log-min-error-statement-high": ("log_min_error_statement", "error"),
    "tf-gcp-sql-pg-log-statement-off": ("log_statement", "ddl"),
    "tf-gcp-sql-pg-pgaudit-off": ("cloudsql.enable_pgaudit", "on"),
    "tf-gcp-sql-pg-log-min-messages-invalid": ("log_min_messages", "warning"),
    "tf-gcp-sql-pg-log-temp-files-not-zero": ("log_temp_files", "0"),
    "tf-gcp-sql-pg-log-min-duration-enabled": ("log_min_duration_statement", "-1"),
    "tf-gcp-sql-pg-log-executor-stats-on": ("log_executor_stats", "off"),
    "tf-gcp-sql-pg-log-parser-stats-on": ("log_parser_stats", "off"),
    "tf-gcp-sql-pg-log-planner-stats-on": ("log_planner_stats", "off"),
    "tf-gcp-sql-pg-log-statement-stats-on": ("log_statement_stats", "off"),
    "tf-gcp-sql-mysql-local-infile-on": ("local_infile", "off"),
}


@_with_block
def fix_bucket_logging(hcl: HclText, block: TFBlock, finding: Finding) -> bool:
    """Access logs to the logging bucket the owner names."""
    if nested(hcl, block.address, "logging") is not None:
        return False
    target = shared_variable(hcl, "log_bucket", "Bucket that receives access logs")
    add_block(hcl, block.address, (), ["logging {\n", f"  log_bucket = {target}\n", "}\n"])
    return True


@_with_block
def fix_kms_prevent_destroy(hcl: HclText, block: TFBlock, finding: Finding) -> bool:
    """``lifecycle { prevent_destroy = true }``: a destroyed key takes its data with it."""
    return set_in(hcl, block.address, ("lifecycle",), "prevent_destroy", "true")


# --- Azure --------------------------------------------------------------------------------------------------


@_with_block
def fix_storage_network(hcl: HclText, block: TFBlock, finding: Finding) -> bool:
    """The storage firewall denies by default and lets trusted Azure services through."""
    changed = set_in(hcl, block.address, ("network_rules",), "default_action", '"Deny"')
    span = nested(hcl, block.address, "network_rules")
    if span is not None and hcl.find_attr(span, "bypass") is None:
        changed = hcl.set_attr(span, "bypass", '["AzureServices"]') or changed
    return changed


@_with_block
def fix_storage_cmk(hcl: HclText, block: TFBlock, finding: Finding) -> bool:
    """A customer-managed key for the account (``azurerm_storage_account_customer_managed_key``)."""
    if [b for b in hcl.blocks() if b.type == "azurerm_storage_account_customer_managed_key"
            and block.address in hcl.block_text(b)] or nested(hcl, block.address, "customer_managed_key"):
        return False
    vault = hcl.add_variable(f"{block.name}_key_vault_id", "Key Vault holding the account's encryption key")
    key = hcl.add_variable(f"{block.name}_key_name", "Name of the account's encryption key")
    name = free_name(hcl, "azurerm_storage_account_customer_managed_key", block.name)
    hcl.append(f'resource "azurerm_storage_account_customer_managed_key" "{name}" {{\n'
               f"  storage_account_id = {block.address}.id\n  key_vault_id       = var.{vault}\n"
               f"  key_name           = var.{key}\n}}\n")
    return True


def fix_private_endpoint(subresource: str) -> TFFixer:
    """A private endpoint for the resource in the endpoint subnet the owner names."""
    def fix(hcl: HclText, block: TFBlock | None, finding: Finding) -> bool:
        if block is None:
            return False
        subnet = shared_variable(hcl, "private_endpoint_subnet_id", "Subnet that holds the private endpoints")
        name = free_name(hcl, "azurerm_private_endpoint", block.name)
        location = _expression(hcl, block, "location") if hcl.find_attr(_body(hcl, block), "location") else \
            '"westeurope"'
        group = _expression(hcl, block, "resource_group_name") if hcl.find_attr(_body(hcl, block),
                                                                                "resource_group_name") else '"rg"'
        label = name.replace("_", "-")
        hcl.append(f'resource "azurerm_private_endpoint" "{name}" {{\n  name                = "pe-{label}"\n'
                   f"  location            = {location}\n  resource_group_name = {group}\n"
                   f"  subnet_id           = {subnet}\n\n  private_service_connection {{\n"
                   f'    name                           = "psc-{label}"\n'
                   f"    private_connection_resource_id = {block.address}.id\n"
                   f'    subresource_names              = ["{subresource}"]\n'
                   "    is_manual_connection           = false\n  }\n}\n")
        return True
    fix.__doc__ = f"Reach the resource through a private endpoint ({subresource})."
    return fix


@_with_block
def fix_sql_auditing(hcl: HclText, block: TFBlock, finding: Finding) -> bool:
    """Server auditing to Azure Monitor, kept 90 days (an auditing policy, or its retention raised)."""
    policies = [b for b in hcl.blocks() if b.type == "azurerm_mssql_server_extended_auditing_policy"
                and block.address in hcl.block_text(b)]
    if policies:
        return set_attrs(("retention_in_days", "90"))(hcl, policies[0], finding)
    name = free_name(hcl, "azurerm_mssql_server_extended_auditing_policy", block.name)
    hcl.append(f'resource "azurerm_mssql_server_extended_auditing_policy" "{name}" {{\n'
               f"  server_id              = {block.address}.id\n  log_monitoring_enabled = true\n"
               "  retention_in_days      = 90\n}\n")
    return True


@_with_block
def fix_sql_alerts(hcl: HclText, block: TFBlock, finding: Finding) -> bool:
    """Defender for SQL: an enabled security alert policy that mails the admins and the security team (it names the
    server with ``depends_on`` too, so that the link survives a literal server name)."""
    if [b for b in hcl.blocks() if b.type == "azurerm_mssql_server_security_alert_policy"
            and block.address in hcl.block_text(b)]:
        return False
    group = _expression(hcl, block, "resource_group_name") if hcl.find_attr(_body(hcl, block),
                                                                            "resource_group_name") else '"rg"'
    name = free_name(hcl, "azurerm_mssql_server_security_alert_policy", block.name)
    hcl.append(f'resource "azurerm_mssql_server_security_alert_policy" "{name}" {{\n'
               f"  resource_group_name  = {group}\n  server_name          = {block.address}.name\n"
               '  state                = "Enabled"\n  email_account_admins = true\n'
               f'  email_addresses      = ["{SECURITY_CONTACT}"]\n  retention_days       = 90\n'
               f"  depends_on           = [{block.address}]\n}}\n")
    return True


@_with_block
def fix_sql_alert_recipients(hcl: HclText, block: TFBlock, finding: Finding) -> bool:
    """The security alerts also go to the security team's addresses."""
    return hcl.set_attr(_body(hcl, block), "email_addresses", f'["{SECURITY_CONTACT}"]')


@_with_block
def fix_sql_entra_admin(hcl: HclText, block: TFBlock, finding: Finding) -> bool:
    """An Entra ID (Azure AD) administrator group for the server."""
    if nested(hcl, block.address, "azuread_administrator") is not None:
        return False
    group = hcl.add_variable(f"{block.name}_admin_group_object_id", "Entra ID group that administers the server")
    add_block(hcl, block.address, (), ["azuread_administrator {\n", '  login_username = "sql-admins"\n',
                                       f"  object_id      = var.{group}\n", "}\n"])
    return True


@_with_block
def fix_vm_password(hcl: HclText, block: TFBlock, finding: Finding) -> bool:
    """SSH keys only: password login disabled, the password removed, a key the owner supplies."""
    changed = hcl.set_attr(_body(hcl, block), "disable_password_authentication", "true")
    changed = drop_attr(hcl, _body(hcl, block), "admin_password") or changed
    if nested(hcl, block.address, "admin_ssh_key") is None:
        key = hcl.add_variable(f"{block.name}_ssh_public_key", "SSH public key of the VM's administrator")
        user = _expression(hcl, block, "admin_username") if hcl.find_attr(_body(hcl, block), "admin_username") \
            else '"azureuser"'
        add_block(hcl, block.address, (), ["admin_ssh_key {\n", f"  username   = {user}\n",
                                           f"  public_key = var.{key}\n", "}\n"])
        changed = True
    return changed


@_with_block
def fix_keyvault_network(hcl: HclText, block: TFBlock, finding: Finding) -> bool:
    """The vault closed to public networks: a deny-by-default firewall that lets trusted Azure services in."""
    changed = hcl.set_attr(_body(hcl, block), "public_network_access_enabled", "false")
    changed = set_in(hcl, block.address, ("network_acls",), "default_action", '"Deny"') or changed
    span = nested(hcl, block.address, "network_acls")
    if span is not None and hcl.find_attr(span, "bypass") is None:
        changed = hcl.set_attr(span, "bypass", '"AzureServices"') or changed
    return changed


def _nsg_http(hcl: HclText, block: TFBlock | None, finding: Finding) -> bool:
    """The rules opening port 80 to the internet take the virtual network as their source."""
    return block is not None and narrow_azure_rules(hcl, block, (80,))


CHECKOV_FIXERS: dict[str, TFFixer] = {
    # AWS
    "tf-aws-kms-policy-public-principal": fix_kms_public_principal,
    "tf-aws-kms-no-key-policy": fix_kms_key_policy,
    "tf-aws-iam-admin-policy-attached": fix_admin_policy_attached,
    "tf-aws-sg-unrestricted-egress": fix_sg_unrestricted_egress,
    "tf-aws-sg-no-description": fix_sg_descriptions,
    "tf-aws-ec2-imdsv1-allowed": fix_imdsv1,
    "tf-aws-ec2-public-ip": fix_ec2_public_ip,
    "tf-aws-lambda-env-secret": fix_lambda_env_secret,
    "tf-aws-eks-public-endpoint": fix_eks_endpoint,
    "tf-aws-eks-endpoint-open-to-internet": fix_eks_endpoint,
    "tf-aws-eks-secrets-encryption-off": fix_eks_secrets_encryption,
    "tf-aws-ecr-scan-on-push-off": fix_ecr_scan,
    "tf-aws-opensearch-node-encryption-off": set_nested(("node_to_node_encryption",), ("enabled", "true")),
    "tf-aws-ebs-no-cmk": _cmk("aws_kms_key", "kms_key_id"),
    "tf-aws-cloudtrail-no-cmk": _cmk("aws_kms_key", "kms_key_id"),
    "tf-aws-s3-no-lifecycle": fix_s3_lifecycle,
    "tf-aws-s3-no-event-notifications": fix_s3_notifications,
    "tf-aws-s3-no-cross-region-replication": fix_s3_replication,
    "tf-aws-s3-not-kms-encrypted": fix_s3_kms,
    "tf-aws-rds-deletion-protection-off": set_attrs(("deletion_protection", "true")),
    "tf-aws-rds-iam-auth-off": set_attrs(("iam_database_authentication_enabled", "true")),
    "tf-aws-rds-multi-az-off": set_attrs(("multi_az", "true")),
    "tf-aws-rds-auto-minor-upgrade-off": set_attrs(("auto_minor_version_upgrade", "true")),
    "tf-aws-rds-copy-tags-to-snapshot-off": set_attrs(("copy_tags_to_snapshot", "true")),
    "tf-aws-rds-logging-off": fix_rds_logs,
    "tf-aws-rds-enhanced-monitoring-off": fix_rds_monitoring,
    "tf-aws-rds-performance-insights-off": fix_rds_performance_insights,
    "tf-aws-rds-postgres-query-logging-off": fix_rds_query_logging,
    "tf-aws-rds-no-tls-enforced": fix_rds_tls,
    "tf-aws-ssm-parameter-not-secure-string": both(set_attrs(("type", '"SecureString"')),
                                                   _cmk("aws_kms_key", "key_id")),
    "tf-aws-ssm-parameter-no-cmk": _cmk("aws_kms_key", "key_id"),
    "tf-aws-rds-cluster-no-cmk": both(set_attrs(("storage_encrypted", "true")), _cmk("aws_kms_key", "kms_key_id")),
    "tf-aws-rds-cluster-audit-log-off": fix_rds_logs,
    "tf-aws-aurora-backtrack-off": set_attrs(("backtrack_window", "72")),
    "tf-aws-backup-plan-missing": fix_backup_selection,
    "tf-aws-cloudtrail-single-region": set_attrs(("is_multi_region_trail", "true")),
    "tf-aws-cloudtrail-no-cloudwatch": fix_trail_cloudwatch,
    "tf-aws-cloudtrail-no-sns-topic": fix_trail_sns,
    # GCP
    "tf-gcp-subnet-flow-logs-off": fix_subnet_flow_logs,
    "tf-gcp-bucket-public-access-prevention-off": set_attrs(("public_access_prevention", '"enforced"')),
    "tf-gcp-bucket-versioning-off": set_nested(("versioning",), ("enabled", "true")),
    "tf-gcp-bucket-logging-off": fix_bucket_logging,
    "tf-gcp-firewall-open-http": fix_firewall_http,
    "tf-gcp-gke-control-plane-public": fix_gke_authorized_networks,
    "tf-gcp-gke-metadata-server-off": fix_gke_metadata,
    "tf-gcp-artifact-registry-no-cmk": _cmk("google_kms_crypto_key", "kms_key_name"),
    "tf-gcp-compute-public-ip": fix_compute_public_ip,
    "tf-gcp-compute-disk-no-csek": _cmk("google_kms_crypto_key", "kms_key_self_link", ("boot_disk",)),
    "tf-gcp-cloud-function-ingress-open": fix_function_ingress,
    "tf-gcp-sql-public-ip": fix_sql_public_ip,
    "tf-gcp-sql-ssl-not-required": set_nested(("settings", "ip_configuration"),
                                              ("ssl_mode", '"TRUSTED_CLIENT_CERTIFICATE_REQUIRED"')),
    "tf-gcp-kms-no-prevent-destroy": fix_kms_prevent_destroy,
    "tf-gcp-sql-backups-off": set_nested(("settings", "backup_configuration"), ("enabled", "true")),
    **{rule: fix_sql_flag(flag, value) for rule, (flag, value) in SQL_FLAGS.items()},
    # Azure
    "tf-azure-storage-network-default-allow": fix_storage_network,
    "tf-azure-storage-shared-key-auth": set_attrs(("shared_access_key_enabled", "false")),
    "tf-azure-storage-no-cmk": fix_storage_cmk,
    "tf-azure-storage-no-private-endpoint": fix_private_endpoint("blob"),
    "tf-azure-storage-queue-logging-off": set_nested(("queue_properties", "logging"), ("delete", "true"),
                                                     ("read", "true"), ("write", "true"), ("version", '"1.0"'),
                                                     ("retention_policy_days", "10")),
    "tf-azure-storage-soft-delete-off": set_nested(("blob_properties", "delete_retention_policy"), ("days", "7")),
    "tf-azure-storage-no-sas-expiration": set_nested(("sas_policy",), ("expiration_period", '"01.00:00:00"')),
    "tf-azure-storage-no-geo-replication": set_attrs(("account_replication_type", '"GRS"')),
    "tf-azure-keyvault-public-network": fix_keyvault_network,
    "tf-azure-keyvault-network-default-allow": fix_keyvault_network,
    "tf-azure-keyvault-no-private-endpoint": fix_private_endpoint("vault"),
    "tf-azure-nsg-open-http": _nsg_http,
    "tf-azure-aks-not-private": set_attrs(("private_cluster_enabled", "true")),
    "tf-azure-aks-api-unrestricted": set_attrs(("private_cluster_enabled", "true")),
    "tf-azure-acr-admin-enabled": set_attrs(("admin_enabled", "false")),
    "tf-azure-vm-password-auth": fix_vm_password,
    "tf-azure-vm-extensions-allowed": set_attrs(("allow_extension_operations", "false")),
    "tf-azure-functionapp-http-allowed": set_attrs(("https_only", "true")),
    "tf-azure-functionapp-old-tls": set_nested(("site_config",), ("minimum_tls_version", '"1.2"')),
    "tf-azure-sql-db-tde-off": set_attrs(("transparent_data_encryption_enabled", "true")),
    "tf-azure-sql-old-tls": set_attrs(("minimum_tls_version", '"1.2"')),
    "tf-azure-sql-auditing-off": fix_sql_auditing,
    "tf-azure-sql-audit-retention-short": fix_sql_auditing,
    "tf-azure-sql-no-security-alert-policy": fix_sql_alerts,
    "tf-azure-sql-alert-no-recipients": fix_sql_alert_recipients,
    "tf-azure-sql-no-aad-admin": fix_sql_entra_admin,
    "tf-azure-mssql-no-private-endpoint": fix_private_endpoint("sqlServer"),
}

__all__ = ["CHECKOV_FIXERS"]
