"""Secure AWS building blocks and scenarios for the Terraform bases.

Every component is hardened the way the whole oracle asks, which is also how a careful team deploys it: KMS
keys with rotation and an explicit key policy; S3 buckets with their access block, KMS encryption, versioning,
access logging, lifecycle rules, event notifications and cross-region replication; RDS with IAM
authentication, TLS enforced by its parameter group, enhanced monitoring, log exports and Performance Insights;
Lambda functions inside a VPC with a dead-letter queue, reserved concurrency, code signing and a KMS key for
their environment; EC2 instances with IMDSv2 only and no public IP; a private EKS cluster with envelope
encryption of secrets; an immutable, scanned ECR repository; an OpenSearch domain inside a VPC with encryption
everywhere, fine-grained access control and dedicated masters. Destinations outside the file (the replica
bucket, the access-log bucket, subnets, the VPC) are variables, as in a real module.
"""

from __future__ import annotations

from typing import Any

from security_verifiers.envs.config_audit.generation.hcl_tree import Block, Call
from security_verifiers.envs.config_audit.generation.templates_tf_kit import (
    ADMIN_RANGES,
    PURPOSES,
    Ctx,
    dashed,
    data,
    ref,
    resource,
    suffix,
)

#: Managed policies attached by ARN (what AWS documents for each service role).
MANAGED = "arn:aws:iam::aws:policy/"


def aws_header(c: Ctx) -> list[Block]:
    req = Block("required_providers", (), [("aws", {"source": "hashicorp/aws", "version": "~> 5.0"})])
    return [Block("terraform", (), [("required_version", ">= 1.5.0"), req]),
            Block("provider", ("aws",), [("region", c.region)])]


def _account_root(c: Ctx) -> str:
    return f"arn:aws:iam::${{{c.source('aws_caller_identity')}.account_id}}:root"


def aws_kms(c: Ctx, name: str, purpose: str, services: tuple[str, ...] = ()) -> list[Block]:
    """A customer-managed key with rotation and a key policy: the account administers it, ``services`` (service
    principals such as ``logs.<region>.amazonaws.com``) may use it for encryption."""
    statements: list[dict[str, Any]] = [{
        "Sid": "AccountAdministration", "Effect": "Allow", "Principal": {"AWS": _account_root(c)},
        "Action": "kms:*", "Resource": "*"}]
    if services:
        statements.append({
            "Sid": "ServiceEncryption", "Effect": "Allow", "Principal": {"Service": list(services)},
            "Action": ["kms:Encrypt", "kms:Decrypt", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:DescribeKey"],
            "Resource": "*",
            "Condition": {"StringEquals": {"aws:SourceAccount": ref(f"{c.source('aws_caller_identity')}.account_id")}}})
    key = resource("aws_kms_key", name, [("description", f"Encryption key for {purpose}"),
                                         ("deletion_window_in_days", c.rng.choice((7, 14, 30))),
                                         ("enable_key_rotation", True),
                                         ("policy", Call("jsonencode", {"Version": "2012-10-17",
                                                                        "Statement": statements})),
                                         ("tags", c.tags())])
    alias = resource("aws_kms_alias", name, [("name", f"alias/{c.name(dashed(name))}"),
                                             ("target_key_id", ref(f"aws_kms_key.{name}.key_id"))])
    return [key, alias]


def _trust(c: Ctx, name: str, service: str) -> Block:
    return data("aws_iam_policy_document", f"{name}_assume", [Block("statement", (), [
        ("effect", "Allow"), ("actions", ["sts:AssumeRole"]),
        Block("principals", (), [("type", "Service"), ("identifiers", [service])])])])


def aws_role(c: Ctx, name: str, service: str, managed: tuple[str, ...] = (),
             statements: list[Block] | None = None) -> list[Block]:
    """A service role: its trust policy, optional managed policies and an optional least-privilege policy."""
    out = [_trust(c, name, service), resource("aws_iam_role", name, [
        ("name", c.name(dashed(name))), ("assume_role_policy", ref(f"data.aws_iam_policy_document.{name}_assume.json")),
        ("tags", c.tags())])]
    for i, policy in enumerate(managed):
        out.append(resource("aws_iam_role_policy_attachment", f"{name}_managed{i + 1 if i else ''}", [
            ("role", ref(f"aws_iam_role.{name}.name")), ("policy_arn", f"{MANAGED}{policy}")]))
    if statements:
        out += [data("aws_iam_policy_document", name, statements),
                resource("aws_iam_policy", name, [("name", c.name(dashed(name), "access")),
                                                  ("policy", ref(f"data.aws_iam_policy_document.{name}.json"))]),
                resource("aws_iam_role_policy_attachment", name, [("role", ref(f"aws_iam_role.{name}.name")),
                                                                   ("policy_arn", ref(f"aws_iam_policy.{name}.arn"))])]
    return out


def statement(sid: str, actions: list[str], resources: list[Any]) -> Block:
    return Block("statement", (), [("sid", sid), ("effect", "Allow"), ("actions", actions), ("resources", resources)])


def aws_s3(c: Ctx, name: str, purpose: str, kms: str, replication: str) -> list[Block]:
    """A bucket and every companion resource a hardened bucket needs (one per catalog rule); ``replication`` is
    the replication role shared by the file's buckets (:func:`aws_s3_replication_role`)."""
    bucket_ref = ref(f"aws_s3_bucket.{name}.id")
    blocks = [resource("aws_s3_bucket", name, [("bucket", c.name(purpose, suffix(c.rng))),
                                               ("tags", c.tags({"purpose": purpose}))])]
    if c.rng.random() < 0.5:
        blocks.append(resource("aws_s3_bucket_acl", name, [("bucket", bucket_ref), ("acl", "private")]))
    blocks.append(resource("aws_s3_bucket_public_access_block", name, [
        ("bucket", bucket_ref), ("block_public_acls", True), ("block_public_policy", True),
        ("ignore_public_acls", True), ("restrict_public_buckets", True)]))
    default = Block("apply_server_side_encryption_by_default", (),
                    [("sse_algorithm", "aws:kms"), ("kms_master_key_id", ref(f"aws_kms_key.{kms}.arn"))])
    blocks.append(resource("aws_s3_bucket_server_side_encryption_configuration", name, [
        ("bucket", bucket_ref), Block("rule", (), [default, ("bucket_key_enabled", True)])]))
    blocks.append(resource("aws_s3_bucket_versioning", name, [
        ("bucket", bucket_ref), Block("versioning_configuration", (), [("status", "Enabled")])]))
    log_bucket = c.variable("access_log_bucket", "Central bucket that receives S3 server access logs")
    blocks.append(resource("aws_s3_bucket_logging", name, [
        ("bucket", bucket_ref), ("target_bucket", log_bucket), ("target_prefix", f"s3/{purpose}/")]))
    blocks.append(resource("aws_s3_bucket_lifecycle_configuration", name, [
        ("bucket", bucket_ref), Block("rule", (), [
            ("id", "expire-noncurrent-versions"), ("status", "Enabled"), Block("filter", (), []),
            Block("noncurrent_version_expiration", (), [("noncurrent_days", c.rng.choice((30, 90, 180)))]),
            Block("abort_incomplete_multipart_upload", (), [("days_after_initiation", 7)])])]))
    blocks.append(resource("aws_s3_bucket_notification", name, [("bucket", bucket_ref), ("eventbridge", True)]))
    replica = c.variable("replica_bucket_arn", "ARN of the bucket in the recovery region that receives replicas")
    replica_key = c.variable("replica_kms_key_arn", "KMS key of the recovery region that encrypts replicas")
    blocks.append(resource("aws_s3_bucket_replication_configuration", name, [
        ("bucket", bucket_ref), ("role", ref(f"aws_iam_role.{replication}.arn")),
        Block("rule", (), [
            ("id", "recovery-region"), ("status", "Enabled"), Block("filter", (), []),
            Block("delete_marker_replication", (), [("status", "Enabled")]),
            Block("source_selection_criteria", (), [Block("sse_kms_encrypted_objects", (), [("status", "Enabled")])]),
            Block("destination", (), [("bucket", replica), ("storage_class", "STANDARD_IA"),
                                      Block("encryption_configuration", (), [("replica_kms_key_id", replica_key)])])]),
        ("depends_on", [ref(f"aws_s3_bucket_versioning.{name}")])]))
    return blocks


def aws_s3_replication_role(c: Ctx, name: str, buckets: list[str], kms: str) -> list[Block]:
    """The role S3 assumes to replicate ``buckets`` (and decrypt/encrypt their objects) to the recovery region."""
    replica = c.variable("replica_bucket_arn", "ARN of the bucket in the recovery region that receives replicas")
    replica_key = c.variable("replica_kms_key_arn", "KMS key of the recovery region that encrypts replicas")
    arns = [ref(f"aws_s3_bucket.{b}.arn") for b in buckets]
    objects = [ref(f'"${{aws_s3_bucket.{b}.arn}}/*"') for b in buckets]
    return aws_role(c, name, "s3.amazonaws.com", statements=[
        statement("ReadReplicationConfiguration", ["s3:GetReplicationConfiguration", "s3:ListBucket"], arns),
        statement("ReadSourceVersions", ["s3:GetObjectVersionForReplication", "s3:GetObjectVersionAcl",
                                         "s3:GetObjectVersionTagging"], objects),
        statement("WriteReplicas", ["s3:ReplicateObject", "s3:ReplicateDelete", "s3:ReplicateTags"],
                  [ref(f'"${{{replica.text}}}/*"')]),
        statement("DecryptSource", ["kms:Decrypt"], [ref(f"aws_kms_key.{kms}.arn")]),
        statement("EncryptReplicas", ["kms:Encrypt"], [replica_key])])


def aws_buckets(c: Ctx, specs: list[tuple[str, str]], kms: str) -> list[Block]:
    """Buckets ``(name, purpose)`` with one shared replication role."""
    out: list[Block] = []
    for name, purpose in specs:
        out += aws_s3(c, name, purpose, kms, "replication")
    return out + aws_s3_replication_role(c, "replication", [n for n, _ in specs], kms)


def aws_log_group(c: Ctx, name: str, path: str, kms: str) -> list[Block]:
    return [resource("aws_cloudwatch_log_group", name, [
        ("name", path), ("retention_in_days", c.rng.choice((365, 400, 731))),
        ("kms_key_id", ref(f"aws_kms_key.{kms}.arn")), ("tags", c.tags())])]


def _egress_https(description: str = "HTTPS to AWS APIs") -> Block:
    return Block("egress", (), [("description", description), ("from_port", 443), ("to_port", 443),
                                ("protocol", "tcp"), ("cidr_blocks", ["0.0.0.0/0"])])


def aws_security_group(c: Ctx, name: str, ingress: list[tuple[str, int, list[str]]]) -> list[Block]:
    """A security group with ``(description, port, cidrs)`` TCP ingress rules and HTTPS-only egress."""
    rules = [Block("ingress", (), [("description", desc), ("from_port", port), ("to_port", port),
                                   ("protocol", "tcp"), ("cidr_blocks", cidrs)]) for desc, port, cidrs in ingress]
    return [resource("aws_security_group", name, [
        ("name", c.name(dashed(name))), ("description", f"Traffic rules for {dashed(name)}"),
        ("vpc_id", c.variable("vpc_id", "VPC the resources live in")), *rules, _egress_https(),
        ("tags", c.tags())])]


def _subnets(c: Ctx) -> Any:
    return c.variable("private_subnet_ids", "Private subnets of the workloads", type_="list(string)")


def aws_rds(c: Ctx, name: str, kms: str) -> list[Block]:
    engine, version, port, family, tls, logs = c.rng.choice((
        ("postgres", "16.3", 5432, "postgres16", "rds.force_ssl", ["postgresql", "upgrade"]),
        ("mysql", "8.0.39", 3306, "mysql8.0", "require_secure_transport", ["audit", "error", "general", "slowquery"])))
    sg = aws_security_group(c, f"{name}_db", [("App subnets", port, [c.rng.choice(ADMIN_RANGES)])])
    subnets = resource("aws_db_subnet_group", name, [
        ("name", c.name(dashed(name))), ("subnet_ids", _subnets(c)), ("tags", c.tags())])
    parameters = [(tls, "1")]
    if engine == "postgres":  # statement logging (DDL, and statements slower than a threshold)
        parameters += [("log_statement", "ddl"), ("log_min_duration_statement", c.rng.choice(("500", "1000", "5000")))]
    # name_prefix (with create_before_destroy) lets a changed group replace the old one without downtime.
    params = resource("aws_db_parameter_group", name, [
        ("name_prefix", c.name(dashed(name), engine) + "-"), ("family", family),
        *[Block("parameter", (), [("name", k), ("value", v)]) for k, v in parameters],
        Block("lifecycle", (), [("create_before_destroy", True)]), ("tags", c.tags())])
    monitoring = aws_role(c, f"{name}_monitoring", "monitoring.rds.amazonaws.com",
                          managed=("service-role/AmazonRDSEnhancedMonitoringRole",))
    db = resource("aws_db_instance", name, [
        ("identifier", c.name(dashed(name))), ("engine", engine), ("engine_version", version),
        ("instance_class", c.rng.choice(("db.m6g.large", "db.r6g.large", "db.m7g.xlarge"))),
        ("allocated_storage", c.rng.choice((20, 50, 100))), ("storage_type", "gp3"),
        ("storage_encrypted", True), ("kms_key_id", ref(f"aws_kms_key.{kms}.arn")),
        ("username", "app_admin"), ("password", c.variable("db_password", "Master password", sensitive=True)),
        ("iam_database_authentication_enabled", True),
        ("db_subnet_group_name", ref(f"aws_db_subnet_group.{name}.name")),
        ("parameter_group_name", ref(f"aws_db_parameter_group.{name}.name")),
        ("vpc_security_group_ids", [ref(f"aws_security_group.{name}_db.id")]),
        ("publicly_accessible", False), ("multi_az", True), ("ca_cert_identifier", "rds-ca-rsa2048-g1"),
        ("auto_minor_version_upgrade", True), ("copy_tags_to_snapshot", True),
        ("backup_retention_period", c.rng.choice((7, 14, 35))), ("deletion_protection", True),
        ("enabled_cloudwatch_logs_exports", logs),
        ("monitoring_interval", c.rng.choice((15, 30, 60))),
        ("monitoring_role_arn", ref(f"aws_iam_role.{name}_monitoring.arn")),
        ("performance_insights_enabled", True), ("performance_insights_kms_key_id", ref(f"aws_kms_key.{kms}.arn")),
        ("skip_final_snapshot", False), ("final_snapshot_identifier", c.name(dashed(name), "final")),
        ("tags", c.tags())])
    return [*sg, subnets, params, *monitoring, db]


def aws_instance(c: Ctx, name: str, kms: str, sg: str) -> list[Block]:
    """An EC2 instance with IMDSv2 only, no public address, an encrypted root volume and an SSM-managed role."""
    ami = c.source("aws_ami", "al2023", [
        ("most_recent", True), ("owners", ["amazon"]),
        Block("filter", (), [("name", "name"), ("values", ["al2023-ami-2023.*-x86_64"])])])
    role = aws_role(c, f"{name}_instance", "ec2.amazonaws.com", managed=("AmazonSSMManagedInstanceCore",))
    profile = resource("aws_iam_instance_profile", name, [("name", c.name(dashed(name))),
                                                          ("role", ref(f"aws_iam_role.{name}_instance.name"))])
    subnet = c.variable("app_subnet_id", "Private subnet of the instance")
    instance = resource("aws_instance", name, [
        ("ami", ref(f"{ami}.id")), ("instance_type", c.rng.choice(("t3.medium", "m6i.large", "c6i.large"))),
        ("subnet_id", subnet), ("vpc_security_group_ids", [ref(f"aws_security_group.{sg}.id")]),
        ("iam_instance_profile", ref(f"aws_iam_instance_profile.{name}.name")),
        ("associate_public_ip_address", False), ("monitoring", True), ("ebs_optimized", True),
        Block("metadata_options", (), [("http_endpoint", "enabled"), ("http_tokens", "required"),
                                       ("http_put_response_hop_limit", 1)]),
        Block("root_block_device", (), [("volume_type", "gp3"), ("volume_size", c.rng.choice((20, 30, 50))),
                                        ("encrypted", True), ("kms_key_id", ref(f"aws_kms_key.{kms}.arn"))]),
        ("tags", c.tags({"Name": c.name(dashed(name))}))])
    return [*role, profile, instance]


def aws_ebs(c: Ctx, name: str, kms: str, instance: str) -> list[Block]:
    volume = resource("aws_ebs_volume", name, [
        ("availability_zone", ref(f"aws_instance.{instance}.availability_zone")),
        ("size", c.rng.choice((20, 50, 100, 200))), ("type", "gp3"), ("encrypted", True),
        ("kms_key_id", ref(f"aws_kms_key.{kms}.arn")), ("tags", c.tags({"Name": c.name(dashed(name))}))])
    attach = resource("aws_volume_attachment", name, [
        ("device_name", "/dev/sdf"), ("volume_id", ref(f"aws_ebs_volume.{name}.id")),
        ("instance_id", ref(f"aws_instance.{instance}.id"))])
    return [volume, attach]


def aws_acm(c: Ctx, name: str) -> list[Block]:
    """An imported certificate whose key is read from a file outside the repository."""
    return [resource("aws_acm_certificate", name, [
        ("private_key", ref(f'file("${{path.module}}/certs/{name}.key")')),
        ("certificate_body", ref(f'file("${{path.module}}/certs/{name}.crt")')),
        ("certificate_chain", ref('file("${path.module}/certs/chain.pem")')),
        Block("lifecycle", (), [("create_before_destroy", True)]), ("tags", c.tags())])]


def aws_lambda(c: Ctx, name: str, bucket: str, kms: str) -> list[Block]:
    """A function in private subnets, with a dead-letter queue, reserved concurrency, signed code and a KMS key
    for its environment; its role may read the bucket, decrypt with the key and send to the queue."""
    role = aws_role(c, name, "lambda.amazonaws.com", managed=("service-role/AWSLambdaVPCAccessExecutionRole",),
                    statements=[
                        statement("ReadObjects", ["s3:GetObject", "s3:ListBucket"],
                                  [ref(f"aws_s3_bucket.{bucket}.arn"), ref(f'"${{aws_s3_bucket.{bucket}.arn}}/*"')]),
                        statement("DecryptObjects", ["kms:Decrypt"], [ref(f"aws_kms_key.{kms}.arn")]),
                        statement("DeadLetters", ["sqs:SendMessage"], [ref(f"aws_sqs_queue.{name}_dlq.arn")])])
    dlq = resource("aws_sqs_queue", f"{name}_dlq", [
        ("name", c.name(dashed(name), "dlq")), ("message_retention_seconds", 1209600),
        ("kms_master_key_id", ref(f"aws_kms_key.{kms}.arn")), ("tags", c.tags())])
    signer = resource("aws_signer_signing_profile", name, [("name_prefix", f"{name.replace('_', '')[:20]}"),
                                                           ("platform_id", "AWSLambda-SHA384-ECDSA")])
    signing = resource("aws_lambda_code_signing_config", name, [
        Block("allowed_publishers", (), [("signing_profile_version_arns", [
            ref(f"aws_signer_signing_profile.{name}.version_arn")])]),
        Block("policies", (), [("untrusted_artifact_on_deployment", "Enforce")])])
    sg = aws_security_group(c, f"{name}_fn", [])
    env = Block("environment", (), [("variables", {"SOURCE_BUCKET": ref(f"aws_s3_bucket.{bucket}.id"),
                                                   "LOG_LEVEL": c.rng.choice(("INFO", "WARN")),
                                                   "STAGE": c.env})])
    fn = resource("aws_lambda_function", name, [
        ("function_name", c.name(dashed(name))), ("role", ref(f"aws_iam_role.{name}.arn")),
        ("runtime", c.rng.choice(("python3.12", "nodejs20.x"))), ("handler", "main.handler"),
        ("filename", f"build/{name}.zip"), ("source_code_hash", ref(f'filebase64sha256("build/{name}.zip")')),
        ("timeout", c.rng.choice((30, 60, 300))), ("memory_size", c.rng.choice((256, 512, 1024))),
        ("reserved_concurrent_executions", c.rng.choice((5, 10, 25, 50))),
        ("kms_key_arn", ref(f"aws_kms_key.{kms}.arn")),
        ("code_signing_config_arn", ref(f"aws_lambda_code_signing_config.{name}.arn")),
        env, Block("tracing_config", (), [("mode", "Active")]),
        Block("dead_letter_config", (), [("target_arn", ref(f"aws_sqs_queue.{name}_dlq.arn"))]),
        Block("vpc_config", (), [("subnet_ids", _subnets(c)),
                                 ("security_group_ids", [ref(f"aws_security_group.{name}_fn.id")])]),
        ("tags", c.tags())])
    return [*role, dlq, signer, signing, *sg, fn]


def aws_cloudtrail(c: Ctx, name: str, kms: str) -> list[Block]:
    """A multi-region trail to an encrypted bucket, to CloudWatch Logs and with an SNS delivery topic."""
    bucket = f"{name}_logs"
    blocks = aws_buckets(c, [(bucket, "trail")], kms)
    account = f"${{{c.source('aws_caller_identity')}.account_id}}"
    trail_arn = f"arn:aws:cloudtrail:{c.region}:{account}:trail/{c.name(dashed(name))}"
    condition = Block("condition", (), [("test", "StringEquals"), ("variable", "aws:SourceArn"),
                                        ("values", [trail_arn])])
    principals = Block("principals", (), [("type", "Service"), ("identifiers", ["cloudtrail.amazonaws.com"])])
    policy = data("aws_iam_policy_document", bucket, [
        Block("statement", (), [("sid", "AclCheck"), ("effect", "Allow"), ("actions", ["s3:GetBucketAcl"]),
                                ("resources", [ref(f"aws_s3_bucket.{bucket}.arn")]), principals, condition]),
        Block("statement", (), [("sid", "Write"), ("effect", "Allow"), ("actions", ["s3:PutObject"]),
                                ("resources", [ref(f'"${{aws_s3_bucket.{bucket}.arn}}/AWSLogs/*"')]),
                                principals, condition])])
    blocks += [policy, resource("aws_s3_bucket_policy", bucket, [
        ("bucket", ref(f"aws_s3_bucket.{bucket}.id")), ("policy", ref(f"data.aws_iam_policy_document.{bucket}.json"))])]
    blocks += aws_log_group(c, name, f"/aws/cloudtrail/{c.name(dashed(name))}", kms)
    blocks += aws_role(c, f"{name}_cloudwatch", "cloudtrail.amazonaws.com", statements=[
        statement("DeliverLogs", ["logs:CreateLogStream", "logs:PutLogEvents"],
                  [ref(f'"${{aws_cloudwatch_log_group.{name}.arn}}:*"')])])
    blocks.append(resource("aws_sns_topic", name, [("name", c.name(dashed(name), "deliveries")),
                                                   ("kms_master_key_id", ref(f"aws_kms_key.{kms}.arn")),
                                                   ("tags", c.tags())]))
    blocks.append(resource("aws_cloudtrail", name, [
        ("name", c.name(dashed(name))), ("s3_bucket_name", ref(f"aws_s3_bucket.{bucket}.id")),
        ("include_global_service_events", True), ("is_multi_region_trail", True),
        ("enable_log_file_validation", True), ("kms_key_id", ref(f"aws_kms_key.{kms}.arn")),
        ("cloud_watch_logs_group_arn", ref(f'"${{aws_cloudwatch_log_group.{name}.arn}}:*"')),
        ("cloud_watch_logs_role_arn", ref(f"aws_iam_role.{name}_cloudwatch.arn")),
        ("sns_topic_name", ref(f"aws_sns_topic.{name}.name")),
        ("depends_on", [ref(f"aws_s3_bucket_policy.{bucket}")]), ("tags", c.tags())]))
    return blocks


def aws_eks(c: Ctx, name: str, kms: str) -> list[Block]:
    """A private EKS cluster (no public endpoint, secrets envelope-encrypted, every control-plane log type)."""
    out = aws_role(c, f"{name}_cluster", "eks.amazonaws.com", managed=("AmazonEKSClusterPolicy",))
    out += aws_security_group(c, f"{name}_cluster", [("API from the admin network", 443,
                                                      [c.rng.choice(ADMIN_RANGES)])])
    out.append(resource("aws_eks_cluster", name, [
        ("name", c.name(dashed(name))), ("role_arn", ref(f"aws_iam_role.{name}_cluster.arn")),
        ("version", c.rng.choice(("1.30", "1.31"))),
        ("enabled_cluster_log_types", ["api", "audit", "authenticator", "controllerManager", "scheduler"]),
        Block("vpc_config", (), [("subnet_ids", _subnets(c)),
                                 ("security_group_ids", [ref(f"aws_security_group.{name}_cluster.id")]),
                                 ("endpoint_private_access", True), ("endpoint_public_access", False)]),
        Block("encryption_config", (), [("resources", ["secrets"]),
                                        Block("provider", (), [("key_arn", ref(f"aws_kms_key.{kms}.arn"))])]),
        ("depends_on", [ref(f"aws_iam_role_policy_attachment.{name}_cluster_managed")]), ("tags", c.tags())]))
    return out


def aws_ecr(c: Ctx, name: str, kms: str) -> list[Block]:
    """An immutable, scanned, KMS-encrypted image repository."""
    return [resource("aws_ecr_repository", name, [
        ("name", f"{c.company}/{dashed(name)}"), ("image_tag_mutability", "IMMUTABLE"),
        Block("image_scanning_configuration", (), [("scan_on_push", True)]),
        Block("encryption_configuration", (), [("encryption_type", "KMS"), ("kms_key", ref(f"aws_kms_key.{kms}.arn"))]),
        ("tags", c.tags())])]


def aws_opensearch(c: Ctx, name: str, kms: str) -> list[Block]:
    """An OpenSearch domain in private subnets: encryption at rest (CMK) and between nodes, HTTPS with TLS 1.2,
    fine-grained access control, three dedicated masters across three zones, and every log type published."""
    out = aws_security_group(c, f"{name}_search", [("HTTPS from the app subnets", 443, [c.rng.choice(ADMIN_RANGES)])])
    kinds = ("INDEX_SLOW_LOGS", "SEARCH_SLOW_LOGS", "ES_APPLICATION_LOGS", "AUDIT_LOGS")
    out += aws_log_group(c, f"{name}_search", f"/aws/opensearch/{c.name(dashed(name))}", kms)
    log_arn = ref(f"aws_cloudwatch_log_group.{name}_search.arn")
    out.append(data("aws_iam_policy_document", f"{name}_search_logs", [Block("statement", (), [
        ("effect", "Allow"), ("actions", ["logs:PutLogEvents", "logs:CreateLogStream"]),
        ("resources", [ref(f'"${{aws_cloudwatch_log_group.{name}_search.arn}}:*"')]),
        Block("principals", (), [("type", "Service"), ("identifiers", ["es.amazonaws.com"])])])]))
    out.append(resource("aws_cloudwatch_log_resource_policy", f"{name}_search", [
        ("policy_name", c.name(dashed(name), "opensearch-logs")),
        ("policy_document", ref(f"data.aws_iam_policy_document.{name}_search_logs.json"))]))
    admin = c.variable("search_admin_role_arn", "IAM role that administers the search domain")
    master = c.rng.choice(("m6g.large.search", "r6g.large.search"))
    out.append(resource("aws_opensearch_domain", name, [
        ("domain_name", f"{c.company}-{c.env}-{dashed(name)}"[:28]), ("engine_version", "OpenSearch_2.13"),
        Block("cluster_config", (), [
            ("instance_type", c.rng.choice(("r6g.large.search", "m6g.large.search", "r6g.xlarge.search"))),
            ("instance_count", c.rng.choice((3, 6))), ("dedicated_master_enabled", True),
            ("dedicated_master_type", master), ("dedicated_master_count", 3), ("zone_awareness_enabled", True),
            Block("zone_awareness_config", (), [("availability_zone_count", 3)])]),
        Block("ebs_options", (), [("ebs_enabled", True), ("volume_type", "gp3"),
                                  ("volume_size", c.rng.choice((100, 200, 500)))]),
        Block("vpc_options", (), [("subnet_ids", _subnets(c)),
                                  ("security_group_ids", [ref(f"aws_security_group.{name}_search.id")])]),
        Block("encrypt_at_rest", (), [("enabled", True), ("kms_key_id", ref(f"aws_kms_key.{kms}.arn"))]),
        Block("node_to_node_encryption", (), [("enabled", True)]),
        Block("domain_endpoint_options", (), [("enforce_https", True),
                                              ("tls_security_policy", "Policy-Min-TLS-1-2-2019-07")]),
        Block("advanced_security_options", (), [
            ("enabled", True), ("anonymous_auth_enabled", False), ("internal_user_database_enabled", False),
            Block("master_user_options", (), [("master_user_arn", admin)])]),
        *[Block("log_publishing_options", (), [("log_type", kind), ("cloudwatch_log_group_arn", log_arn),
                                                  ("enabled", True)])
          for kind in kinds],
        ("depends_on", [ref(f"aws_cloudwatch_log_resource_policy.{name}_search")]), ("tags", c.tags())]))
    return out


# --------------------------------------------------------------------------------------------------
# Scenarios
# --------------------------------------------------------------------------------------------------
def _reader_role(c: Ctx, name: str, bucket: str, kms: str) -> list[Block]:
    return aws_role(c, name, "lambda.amazonaws.com", statements=[
        statement("ReadObjects", ["s3:GetObject", "s3:ListBucket"],
                  [ref(f"aws_s3_bucket.{bucket}.arn"), ref(f'"${{aws_s3_bucket.{bucket}.arn}}/*"')]),
        statement("DecryptObjects", ["kms:Decrypt"], [ref(f"aws_kms_key.{kms}.arn")])])


def data_lake(c: Ctx) -> list[Block]:
    """Lake buckets and their reader role, and in some lakes an OpenSearch domain that indexes the catalog."""
    purposes = c.rng.sample(PURPOSES, 2)[: c.rng.choice((1, 2))]
    search = c.rng.random() < 0.5
    out = aws_kms(c, "data", "the data lake", (_logs_service(c),) if search else ())
    out += aws_buckets(c, [(p, p) for p in purposes], "data")
    out += _reader_role(c, f"{purposes[0]}_reader", purposes[0], "data")
    if search:
        out += aws_opensearch(c, "catalog", "data")
    return out


def _logs_service(c: Ctx) -> str:
    return f"logs.{c.region}.amazonaws.com"


def web_stack(c: Ctx) -> list[Block]:
    """A web server: instance, data volume, certificate; in some stacks its database and the ECR repository of
    the images it runs."""
    admin = c.rng.choice((("SSH from the bastion network", 22), ("RDP from the admin network", 3389)))
    out = aws_kms(c, "app", "the web application")
    out += aws_security_group(c, "web", [("HTTPS from anywhere", 443, ["0.0.0.0/0"]),
                                         (admin[0], admin[1], [c.rng.choice(ADMIN_RANGES)])])
    out += aws_instance(c, "web", "app", "web") + aws_ebs(c, "web_data", "app", "web")
    if c.rng.random() < 0.7:
        out += aws_acm(c, "web")
    if c.rng.random() < 0.6:
        out += aws_rds(c, c.rng.choice(("orders", "users", "app")), "app")
    if c.rng.random() < 0.4:
        out += aws_ecr(c, "web", "app")
    return out


def database(c: Ctx) -> list[Block]:
    """A database, and in some setups the bastion host the DBAs reach it through."""
    out = aws_kms(c, "rds", "the database") + aws_rds(c, c.rng.choice(("orders", "billing", "users", "app")), "rds")
    if c.rng.random() < 0.6:
        out += aws_security_group(c, "bastion", [("SSH from the admin network", 22, [c.rng.choice(ADMIN_RANGES)])])
        out += aws_instance(c, "bastion", "rds", "bastion")
    return out


def audit(c: Ctx) -> list[Block]:
    """The account trail, and in some accounts an OpenSearch domain where the security team searches the logs."""
    out = aws_kms(c, "audit", "audit logs", ("cloudtrail.amazonaws.com", _logs_service(c)))
    out += aws_cloudtrail(c, "main", "audit")
    if c.rng.random() < 0.5:
        out += aws_opensearch(c, "audit", "audit")
    return out


def lambda_pipeline(c: Ctx) -> list[Block]:
    p = c.rng.choice(PURPOSES)
    out = aws_kms(c, "pipeline", "the pipeline") + aws_buckets(c, [(p, p)], "pipeline")
    out += aws_lambda(c, f"{p}_processor", p, "pipeline")
    if c.rng.random() < 0.4:  # the batch stage runs as a container image
        out += aws_ecr(c, f"{p}_batch", "pipeline")
    return out


def containers(c: Ctx) -> list[Block]:
    """A private EKS cluster, the ECR repositories its workloads pull from, and in some platforms the OpenSearch
    domain that holds the cluster's logs."""
    search = c.rng.random() < 0.4
    out = aws_kms(c, "platform", "the container platform", (_logs_service(c),) if search else ())
    out += aws_eks(c, c.rng.choice(("apps", "platform", "core")), "platform")
    for repo in c.rng.sample(("api", "worker", "frontend", "scheduler"), c.rng.choice((1, 2))):
        out += aws_ecr(c, repo, "platform")
    if search:
        out += aws_opensearch(c, "logs", "platform")
    return out


SCENARIOS = {
    "aws_data_lake": data_lake,
    "aws_web_stack": web_stack,
    "aws_database": database,
    "aws_audit": audit,
    "aws_lambda_pipeline": lambda_pipeline,
    "aws_containers": containers,
}
