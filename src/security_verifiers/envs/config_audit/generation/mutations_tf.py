"""Mutation operators for Terraform bases: the core rules' operators, and the registry of all of them.

Operators edit the :mod:`hcl_tree` tree of a base (see :mod:`mutations_tf_kit`): set or remove one attribute,
replace a nested block's value, or delete one companion resource (the fix adds it back; a mutation never
*adds* a resource, so the fixed file always holds every resource of the mutated one). The reported resource is
the one the oracle names: S3 companion problems (ACL, missing encryption/versioning/logging companions) are
reported on the bucket, a public-access-block flag on the public-access-block resource itself. The operators
of rules that Checkov alone implements live in :mod:`mutations_tf_checkov`.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace

from security_verifiers.envs.config_audit.generation.hcl_tree import Block, heredoc
from security_verifiers.envs.config_audit.generation.mutation_kit import (
    Operator,
    fake_aws_key_id,
    fake_password,
    fake_pem,
)
from security_verifiers.envs.config_audit.generation.mutations_tf_checkov import checkov_operators
from security_verifiers.envs.config_audit.generation.mutations_tf_kit import attr_op, bool_op, op, sub
from security_verifiers.envs.config_audit.generation.templates_tf import TFBase

PAB_FLAGS = ("block_public_acls", "block_public_policy", "ignore_public_acls", "restrict_public_buckets")
WORLD = "0.0.0.0/0"


def _op(rule_id: str, targets: Callable[[TFBase], list[str]],
        apply: Callable[[TFBase, str, random.Random], None], also: tuple[str, ...] = ()) -> Operator:
    return op(rule_id, targets, apply, also)


# --------------------------------------------------------------------------------------------------
# AWS S3
# --------------------------------------------------------------------------------------------------
def _companion(base: TFBase, rtype: str, bucket: str) -> Block | None:
    found = base.referencing(rtype, bucket)
    return found[0] if found else None


def s3_companion_op(rule_id: str, rtype: str, alt: Callable[[Block, random.Random], bool] | None = None,
                    also: tuple[str, ...] = ()) -> Operator:
    """Delete the bucket's ``rtype`` companion (or, via ``alt``, disable it in place); reported on the bucket."""

    def targets(base: TFBase) -> list[str]:
        return [b.address for b in base.resources("aws_s3_bucket") if _companion(base, rtype, b.address)]

    def apply(base: TFBase, address: str, rng: random.Random) -> None:
        companion = _companion(base, rtype, address)
        assert companion is not None
        if alt is not None and alt(companion, rng):
            return
        base.blocks.remove(companion)

    return _op(rule_id, targets, apply, also)


def _suspend_versioning(block: Block, rng: random.Random) -> bool:
    if rng.random() < 0.5:
        return False
    block.blocks("versioning_configuration")[0].set("status", rng.choice(("Suspended", "Disabled")))
    return True


#: Checkov's CKV_AWS_379: a public canned ACL on an ``aws_s3_bucket_acl`` whose bucket has no public-access block
#: (or one with neither ``block_public_acls`` nor ``restrict_public_buckets``) and no website configuration, and
#: whose bucket policy does not require TLS (no base writes one that does).
PUBLIC_NO_TLS = "tf-aws-s3-public-no-secure-transport"


def public_acl_without_tls(base: TFBase, resource: str) -> list[tuple[str, str]]:
    """The CKV_AWS_379 pairs in ``base``: a public ACL and a removed public-access block on the same bucket are
    each one rule, and together a third on the ACL resource, which whichever of the two edits comes second brings
    (without it, the self-check refused such an item as an unexpected finding). Read over every bucket: the
    pairs an earlier edit already brought are in the injected set already."""
    pairs = []
    for bucket in base.resources("aws_s3_bucket"):
        acl = _companion(base, "aws_s3_bucket_acl", bucket.address)
        if acl is None or acl.get("acl") not in ("public-read", "public-read-write"):
            continue
        block = _companion(base, "aws_s3_bucket_public_access_block", bucket.address)
        if block is not None and (block.get("block_public_acls") or block.get("restrict_public_buckets")):
            continue
        if _companion(base, "aws_s3_bucket_website_configuration", bucket.address) is None:
            pairs.append((PUBLIC_NO_TLS, acl.address))
    return pairs


def _public_acl() -> Operator:
    """A public canned ACL: on the bucket's ``aws_s3_bucket_acl`` when it has one, else the legacy attribute."""

    def targets(base: TFBase) -> list[str]:
        return [b.address for b in base.resources("aws_s3_bucket") if not b.has("acl")]

    def apply(base: TFBase, address: str, rng: random.Random) -> None:
        acl = rng.choice(("public-read", "public-read-write"))
        companion = _companion(base, "aws_s3_bucket_acl", address)
        if companion is not None:
            companion.set("acl", acl)
        else:
            base.find(address).set("acl", acl, after="bucket")

    return replace(_op("tf-aws-s3-public-acl", targets, apply), spillover=public_acl_without_tls)


#: The flags whose loss the oracle reports on the access block alone (Checkov also reports a bucket whose block
#: lets ACLs or policies be set: that is the "block removed" variant, reported on the bucket).
PAB_BLOCK_ONLY_FLAGS = ("ignore_public_acls", "restrict_public_buckets")


def _pab_flag(block: Block, rng: random.Random) -> None:
    block.set(rng.choice(PAB_BLOCK_ONLY_FLAGS), False)


# --------------------------------------------------------------------------------------------------
# Network exposure
# --------------------------------------------------------------------------------------------------
def _admin_ingress(b: Block) -> list[Block]:
    return [r for r in b.blocks("ingress") if r.get("from_port") in (22, 3389)]


def _sg_open(b: Block, rng: random.Random) -> None:
    """Open an admin rule to the world, or add a "temporary" world-open admin rule after the last ingress."""
    rules = _admin_ingress(b)
    if rules and rng.random() < 0.7:
        rng.choice(rules).set("cidr_blocks", [WORLD])
        return
    port = rng.choice((22, 3389))
    new = Block("ingress", (), [("description", "Temporary admin access"), ("from_port", port), ("to_port", port),
                                ("protocol", "tcp"), ("cidr_blocks", [WORLD])])
    nested = [i for i, e in enumerate(b.body) if isinstance(e, Block) and e.type in ("ingress", "egress")]
    ingress = [i for i in nested if b.body[i].type == "ingress"]  # type: ignore[union-attr]
    b.body.insert(max(ingress) + 1 if ingress else min(nested), new)


def _fw_admin(b: Block) -> bool:
    return any(p in ("22", "3389") for a in b.blocks("allow") for p in a.get("ports", []))


def _gcp_fw_open(b: Block, rng: random.Random) -> None:
    b.set("source_ranges", [WORLD])


def _https_fw_adds_ssh(b: Block, rng: random.Random) -> None:
    allow = b.blocks("allow")[0]
    allow.set("ports", [*allow.get("ports"), rng.choice(("22", "3389"))])


def _gcp_firewall() -> Operator:
    """Open an admin firewall to the world, or add an admin port to the world-open HTTPS firewall."""

    def admin(b: Block) -> bool:
        return _fw_admin(b) and WORLD not in b.get("source_ranges", [])

    def world_https(b: Block) -> bool:
        return WORLD in b.get("source_ranges", []) and not _fw_admin(b)

    def targets(base: TFBase) -> list[str]:
        return [b.address for b in base.resources("google_compute_firewall") if admin(b) or world_https(b)]

    def apply(base: TFBase, address: str, rng: random.Random) -> None:
        b = base.find(address)
        (_gcp_fw_open if admin(b) else _https_fw_adds_ssh)(b, rng)

    return _op("tf-gcp-firewall-open-admin-port", targets, apply)


def _nsg_admin_rules(b: Block) -> list[Block]:
    return [r for r in b.blocks("security_rule") if r.get("destination_port_range") in ("22", "3389")]


def _nsg_open(b: Block, rng: random.Random) -> None:
    rule = rng.choice(_nsg_admin_rules(b))
    rule.set("source_address_prefix", rng.choice(("*", "Internet", WORLD)))


def _sql_authorized_world(b: Block, rng: random.Random) -> None:
    """Give the private instance a public IP and authorise the whole internet to reach it."""
    ipc = sub(b, "settings", "ip_configuration")
    assert ipc is not None
    ipc.set("ipv4_enabled", True)
    ipc.body.append(Block("authorized_networks", (), [
        ("name", rng.choice(("anywhere", "all", "temp-debug", "office"))), ("value", WORLD)]))


def _sql_private(b: Block) -> bool:
    ipc = sub(b, "settings", "ip_configuration")
    return ipc is not None and ipc.get("ipv4_enabled") is False


# --------------------------------------------------------------------------------------------------
# Identity, keys, secrets
# --------------------------------------------------------------------------------------------------
def _permission_docs(base: TFBase) -> list[str]:
    return [d.address for d in base.data("aws_iam_policy_document")
            if all(s.has("resources") and not s.blocks("principals") for s in d.blocks("statement"))]


#: The guard an engineer puts on an "admin" statement to feel safe about it: a region, MFA, the organisation.
#: The statement still allows * on *, hence iam:* too; Checkov's IAM analysis (cloudsplaining) skips conditional
#: statements, so the edit is the wildcard finding and the full-IAM-access one (a graph check) alone.
ADMIN_GUARDS = (("StringEquals", "aws:RequestedRegion", "{region}"), ("Bool", "aws:MultiFactorAuthPresent", "true"),
                ("StringEquals", "aws:PrincipalOrgID", "o-{org}"))


def _iam_wildcard() -> Operator:
    def apply(base: TFBase, address: str, rng: random.Random) -> None:
        statement = rng.choice(base.find(address).blocks("statement"))
        statement.set("actions", ["*"])
        statement.set("resources", ["*"])
        test, variable, value = rng.choice(ADMIN_GUARDS)
        value = value.format(region=rng.choice(("eu-west-1", "us-east-1", "eu-central-1")),
                             org="".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(10)))
        statement.body.append(Block("condition", (), [("test", test), ("variable", variable), ("values", [value])]))

    return _op("tf-aws-iam-wildcard-policy", _permission_docs, apply, also=("tf-aws-iam-policy-full-iam-access",))


def _gcp_public_member(b: Block, rng: random.Random) -> None:
    b.set("member", rng.choice(("allUsers", "allAuthenticatedUsers")))


def _gcp_rotation(b: Block, rng: random.Random) -> None:
    if rng.random() < 0.5:
        b.remove("rotation_period")
    else:
        b.set("rotation_period", rng.choice(("31536000s", "15552000s", "63072000s")))


def _old_tls(b: Block, rng: random.Random) -> None:
    if rng.random() < 0.3:
        b.remove("min_tls_version")
    else:
        b.set("min_tls_version", rng.choice(("TLS1_0", "TLS1_1")))


#: Where each provider keeps a password argument (semgrep's rule names the attributes).
PASSWORD_ATTRS = {"aws_db_instance": "password", "google_sql_user": "password",
                  "azurerm_mssql_server": "administrator_login_password"}


def _password() -> Operator:
    def targets(base: TFBase) -> list[str]:
        return [b.address for b in base.resources(*PASSWORD_ATTRS)
                if not isinstance(b.get(PASSWORD_ATTRS[b.rtype]), str)]

    def apply(base: TFBase, address: str, rng: random.Random) -> None:
        b = base.find(address)
        b.set(PASSWORD_ATTRS[b.rtype], fake_password(rng))

    return _op("tf-hardcoded-password", targets, apply)


#: Attributes that hold a private key read from a file in the base.
PEM_ATTRS = {"aws_acm_certificate": "private_key", "google_compute_ssl_certificate": "private_key",
             "azurerm_key_vault_secret": "value"}


def _private_key() -> Operator:
    def eligible(b: Block) -> bool:
        value = getattr(b.get(PEM_ATTRS[b.rtype]), "text", "")
        return value.startswith("file(") and value.endswith('.key")')

    def targets(base: TFBase) -> list[str]:
        return [b.address for b in base.resources(*PEM_ATTRS) if eligible(b)]

    def apply(base: TFBase, address: str, rng: random.Random) -> None:
        b = base.find(address)
        b.set(PEM_ATTRS[b.rtype], heredoc(fake_pem(rng)))

    return _op("cfg-hardcoded-private-key", targets, apply)


def _aws_key() -> Operator:
    """An access key id in a secret's literal value (in a Lambda environment it is also the Lambda rule's
    finding: that operator lives with the Checkov rules)."""

    def targets(base: TFBase) -> list[str]:
        out = [b.address for b in base.resources("google_secret_manager_secret_version")
               if not isinstance(b.get("secret_data"), str)]
        out += [b.address for b in base.resources("azurerm_key_vault_secret")
                if getattr(b.get("value"), "text", "").startswith("var.")]
        return out

    def apply(base: TFBase, address: str, rng: random.Random) -> None:
        b = base.find(address)
        key = fake_aws_key_id(rng)
        if b.rtype == "google_secret_manager_secret_version":
            b.set("secret_data", key)
        else:
            b.set("value", key)

    return _op("cfg-hardcoded-aws-key", targets, apply)


def terraform_operators() -> list[Operator]:
    """Every Terraform operator: the core rules' in catalog order, then the Checkov rules'."""
    return [*core_operators(), *checkov_operators()]


def core_operators() -> list[Operator]:
    """The operators of the core rules (implemented by our Rego and semgrep rules), in catalog order."""
    return [
        _public_acl(),
        _either_pab(),
        s3_companion_op("tf-aws-s3-no-encryption", "aws_s3_bucket_server_side_encryption_configuration",
                        also=("tf-aws-s3-not-kms-encrypted",)),
        s3_companion_op("tf-aws-s3-versioning-off", "aws_s3_bucket_versioning", _suspend_versioning),
        s3_companion_op("tf-aws-s3-logging-off", "aws_s3_bucket_logging"),
        attr_op("tf-aws-sg-open-admin-port", "aws_security_group",
                lambda b: bool(b.blocks("ingress")) and all(WORLD not in r.get("cidr_blocks", [])
                                                            for r in _admin_ingress(b)), _sg_open),
        _iam_wildcard(),
        bool_op("tf-aws-rds-unencrypted", "aws_db_instance", "storage_encrypted", also_remove=("kms_key_id",)),
        bool_op("tf-aws-rds-public", "aws_db_instance", "publicly_accessible", bad=True, removable=False),
        bool_op("tf-aws-ebs-unencrypted", "aws_ebs_volume", "encrypted", also_remove=("kms_key_id",),
                also=("tf-aws-ebs-no-cmk",)),
        bool_op("tf-aws-kms-rotation-off", "aws_kms_key", "enable_key_rotation"),
        bool_op("tf-aws-cloudtrail-validation-off", "aws_cloudtrail", "enable_log_file_validation"),
        attr_op("tf-gcp-bucket-public", "google_storage_bucket_iam_member",
                lambda b: b.get("member") not in ("allUsers", "allAuthenticatedUsers"), _gcp_public_member),
        bool_op("tf-gcp-bucket-uniform-access-off", "google_storage_bucket", "uniform_bucket_level_access"),
        _gcp_firewall(),
        attr_op("tf-gcp-sql-public", "google_sql_database_instance", _sql_private, _sql_authorized_world,
                also=("tf-gcp-sql-public-ip",)),
        attr_op("tf-gcp-kms-rotation-off", "google_kms_crypto_key", lambda b: b.has("rotation_period"),
                _gcp_rotation),
        bool_op("tf-azure-storage-public-access", "azurerm_storage_account", "allow_nested_items_to_be_public",
                bad=True, removable=False),
        bool_op("tf-azure-storage-https-off", "azurerm_storage_account", "https_traffic_only_enabled",
                removable=False),
        attr_op("tf-azure-storage-old-tls", "azurerm_storage_account", lambda b: b.get("min_tls_version") == "TLS1_2",
                _old_tls),
        attr_op("tf-azure-nsg-open-admin-port", "azurerm_network_security_group", lambda b: bool(_nsg_admin_rules(b)),
                _nsg_open),
        bool_op("tf-azure-sql-public", "azurerm_mssql_server", "public_network_access_enabled", bad=True),
        bool_op("tf-azure-keyvault-no-purge-protection", "azurerm_key_vault", "purge_protection_enabled"),
        _password(),
        _private_key(),
        _aws_key(),
    ]


def _either_pab() -> Operator:
    """A public-access-block flag turned off (reported on the block) or the whole block removed (on the bucket)."""
    flag = attr_op("tf-aws-s3-public-access-block-off", "aws_s3_bucket_public_access_block",
                   lambda b: all(b.get(f) is True for f in PAB_FLAGS), _pab_flag)
    removed = s3_companion_op("tf-aws-s3-public-access-block-off", "aws_s3_bucket_public_access_block")

    def targets(base: TFBase) -> list[str]:
        return flag.targets(base) + removed.targets(base)

    def apply(base: TFBase, address: str, rng: random.Random) -> None:
        (removed if address.startswith("aws_s3_bucket.") else flag).apply(base, address, rng)

    return replace(_op("tf-aws-s3-public-access-block-off", targets, apply), spillover=public_acl_without_tls)
