"""Rule-based remediation of Terraform findings, one fixer per rule id, as text edits (see :mod:`.hcl_text`).

Resources are never removed or renamed (the inventory check forbids it): a fix sets attributes, narrows
literals, or appends companion resources (``aws_s3_bucket_versioning`` ...) and ``variable`` blocks. Each fix
is re-parsed; one that breaks the parse is undone and reported as skipped. This module holds the dispatch and
the fixers of the core rules; the fixers of Checkov-only rules are in :mod:`.terraform_checkov`, the helpers
they share in :mod:`.terraform_kit` and the secret fixer they share in :mod:`.terraform_secrets`.

Why one module past 500 lines: it is the dispatch table and the core rules' fixers (the text-editing
primitives are already apart, in :mod:`.hcl_text`); splitting the core fixers by cloud would scatter them.
"""

from __future__ import annotations

import re

from security_verifiers.engines.configs import ConfigParseError, TFBlock
from security_verifiers.engines.findings import Finding
from security_verifiers.envs.config_audit.autofix.common import (
    Skipped,
)
from security_verifiers.envs.config_audit.autofix.hcl_text import HclText, Span
from security_verifiers.envs.config_audit.autofix.terraform_checkov import CHECKOV_FIXERS
from security_verifiers.envs.config_audit.autofix.terraform_kit import (
    ADMIN_PORTS,
    INTERNAL_CIDR,
    TFFixer,
    append_companion,
    both,
    companions,
    narrow_azure_rules,
    relink,
    set_attrs,
    set_if_present,
    set_present_or,
)
from security_verifiers.envs.config_audit.autofix.terraform_secrets import fix_literal_secret

INTERNAL_CIDR_V6 = "fd00::/8"
#: What an IAM ``*`` becomes: a concrete, read-only grant on one example bucket (to be edited by hand).
NARROW_ACTION = "s3:ListBucket"
NARROW_RESOURCE = "arn:aws:s3:::example-bucket"
#: Who a public GCS binding is given to instead of allUsers / allAuthenticatedUsers.
PRIVATE_MEMBER = "group:security@example.com"
OPEN_CIDRS = (r'"0\.0\.0\.0/0"', r'"::/0"')

# --- S3 ----------------------------------------------------------------------------------------------------


PUBLIC_CANNED_ACLS = frozenset({"public-read", "public-read-write", "authenticated-read"})
PUBLIC_GRANTEE_RE = re.compile(r"http://acs\.amazonaws\.com/groups/global/(AllUsers|AuthenticatedUsers)")


def fix_s3_public_acl(hcl: HclText, block: TFBlock | None, finding: Finding) -> bool:
    """acl = "private" and no grant to AllUsers / AuthenticatedUsers, on the flagged bucket and on the
    aws_s3_bucket_acl resources that apply to it (the rule reports those on their bucket)."""
    if block is None:
        return False
    targets = [block] + (companions(hcl, block, "aws_s3_bucket_acl") if block.type == "aws_s3_bucket" else [])
    changed = False
    for target in targets:
        current = hcl.block(target.address)
        assert current is not None
        if current.attributes.get("acl") in PUBLIC_CANNED_ACLS:  # log-delivery-write & co. are left alone
            changed = hcl.set_attr(hcl.body(current), "acl", '"private"') or changed
        changed = _drop_public_grants(hcl, target.address) or changed
    return changed


def _drop_public_grants(hcl: HclText, address: str) -> bool:
    """Delete the ``grant`` blocks (inline, or inside access_control_policy) whose grantee is a public group.
    Nested blocks carry no address, so removing them keeps the inventory."""
    changed = False
    while True:
        block = hcl.block(address)
        assert block is not None
        body = hcl.body(block)
        spans = hcl.sub_blocks(body, "grant") + [g for acp in hcl.sub_blocks(body, "access_control_policy")
                                                 for g in hcl.sub_blocks(acp, "grant")]
        public = [g for g in spans if PUBLIC_GRANTEE_RE.search("".join(hcl.lines[g.lo:g.hi]))]
        if not public:
            return changed
        hcl.replace_lines(public[0].lo, public[0].hi, [])
        changed = True


PUBLIC_ACCESS_FLAGS = ("block_public_acls", "block_public_policy", "ignore_public_acls", "restrict_public_buckets")


def fix_s3_public_access_block(hcl: HclText, block: TFBlock | None, finding: Finding) -> bool:
    """All four flags true on the access block; a flagged bucket without one gets a companion block."""
    if block is None:
        return False
    relinked = False
    if block.type == "aws_s3_bucket":
        targets = companions(hcl, block, "aws_s3_bucket_public_access_block")
        if not targets:
            append_companion(hcl, block, "aws_s3_bucket_public_access_block",
                              "".join(f"  {flag} = true\n" for flag in PUBLIC_ACCESS_FLAGS))
            return True
        relinked = relink(hcl, block, "aws_s3_bucket_public_access_block")
    else:
        targets = [block]
    set_flags = set_attrs(*[(flag, "true") for flag in PUBLIC_ACCESS_FLAGS])
    return any([set_flags(hcl, hcl.block(t.address), finding) for t in targets]) or relinked


def fix_s3_encryption(hcl: HclText, block: TFBlock | None, finding: Finding) -> bool:
    """Append an aws_s3_bucket_server_side_encryption_configuration (aws:kms) for the bucket."""
    if block is None or block.type != "aws_s3_bucket":
        return False
    configs = companions(hcl, block, "aws_s3_bucket_server_side_encryption_configuration")
    if configs:  # present but with an algorithm Checkov does not accept, or linked by the bucket's literal name
        relinked = relink(hcl, block, "aws_s3_bucket_server_side_encryption_configuration")
        return any([hcl.sub(hcl.body(hcl.block(c.address)),  # type: ignore[arg-type]
                            r'(sse_algorithm\s*=\s*)"(?!aws:kms"|AES256")[^"]*"', r'\1"aws:kms"')
                    for c in configs]) or relinked
    append_companion(hcl, block, "aws_s3_bucket_server_side_encryption_configuration",
                      '\n  rule {\n    apply_server_side_encryption_by_default {\n      sse_algorithm = "aws:kms"\n'
                      "    }\n  }\n")
    return True


def fix_s3_versioning(hcl: HclText, block: TFBlock | None, finding: Finding) -> bool:
    """Versioning "Enabled": on an existing versioning companion / inline block, else a new companion."""
    if block is None:
        return False
    if block.type == "aws_s3_bucket_versioning":
        return _set_versioning_status(hcl, block)
    if block.type != "aws_s3_bucket":
        return False
    inline = hcl.sub_blocks(hcl.body(block), "versioning")
    if inline:
        return any([hcl.sub(s, r"(\benabled\s*=\s*)false\b", r"\1true") for s in inline])
    versionings = companions(hcl, block, "aws_s3_bucket_versioning")
    if versionings:
        relinked = relink(hcl, block, "aws_s3_bucket_versioning")
        return any([_set_versioning_status(hcl, hcl.block(c.address))  # type: ignore[arg-type]
                    for c in versionings]) or relinked
    append_companion(hcl, block, "aws_s3_bucket_versioning",
                      '\n  versioning_configuration {\n    status = "Enabled"\n  }\n')
    return True


def _set_versioning_status(hcl: HclText, block: TFBlock) -> bool:
    configs = hcl.sub_blocks(hcl.body(block), "versioning_configuration")
    if not configs:
        return _insert_versioning_configuration(hcl, block)
    return hcl.set_attr(configs[0], "status", '"Enabled"')


def _insert_versioning_configuration(hcl: HclText, block: TFBlock) -> bool:
    span = hcl.body(block)
    hcl.replace_lines(span.hi - 1, span.hi - 1, ["  versioning_configuration {\n", '    status = "Enabled"\n', "  }\n"])
    return True


def fix_s3_logging(hcl: HclText, block: TFBlock | None, finding: Finding) -> bool:
    """Append an aws_s3_bucket_logging that logs the bucket into itself under ``logs/``."""
    if block is None or block.type != "aws_s3_bucket":
        return False
    append_companion(hcl, block, "aws_s3_bucket_logging",
                      f"  target_bucket = {block.address}.id\n" + '  target_prefix = "logs/"\n')
    return True


# --- network exposure --------------------------------------------------------------------------------------


def _ports_cover_admin(text: str, from_key: str = "from_port", to_key: str = "to_port") -> bool:
    """Whether an ingress rule's ports include 22 or 3389 (unreadable ports count as covering: fail safe)."""
    if re.search(r'\bprotocol\s*=\s*"(-1|all)"', text):
        return True
    low, high = re.search(rf"\b{from_key}\s*=\s*(\d+)", text), re.search(rf"\b{to_key}\s*=\s*(\d+)", text)
    if not low or not high:
        return True
    return any(int(low.group(1)) <= port <= int(high.group(1)) for port in ADMIN_PORTS) or \
        (int(low.group(1)) == 0 and int(high.group(1)) == 0)


def _narrow_cidrs(hcl: HclText, span: Span, skip: list[Span] | None = None) -> bool:
    changed = hcl.sub(span, OPEN_CIDRS[0], f'"{INTERNAL_CIDR}"', skip)
    return hcl.sub(span, OPEN_CIDRS[1], f'"{INTERNAL_CIDR_V6}"', skip) or changed


def fix_sg_open_admin_port(hcl: HclText, block: TFBlock | None, finding: Finding) -> bool:
    """0.0.0.0/0 -> 10.0.0.0/8 in the ingress rules that reach port 22 or 3389 (egress and other ports untouched)."""
    if block is None:
        return False
    body = hcl.body(block)
    ingress = hcl.sub_blocks(body, "ingress")
    if not ingress:  # aws_security_group_rule, aws_vpc_security_group_ingress_rule: the block is the rule
        return _narrow_cidrs(hcl, body)
    lines = hcl.lines
    changed = False
    for span in ingress:
        if _ports_cover_admin("".join(lines[span.lo:span.hi])):
            changed = _narrow_cidrs(hcl, span) or changed
    return changed or _narrow_cidrs(hcl, body, skip=hcl.sub_blocks(body, "egress"))


def fix_gcp_firewall(hcl: HclText, block: TFBlock | None, finding: Finding) -> bool:
    """source_ranges 0.0.0.0/0 -> 10.0.0.0/8."""
    return block is not None and _narrow_cidrs(hcl, hcl.body(block))


def fix_azure_nsg(hcl: HclText, block: TFBlock | None, finding: Finding) -> bool:
    """source_address_prefix * / Internet / 0.0.0.0/0 -> "VirtualNetwork" on the rules reaching 22 or 3389."""
    return block is not None and narrow_azure_rules(hcl, block, ADMIN_PORTS)


def fix_gcp_sql_public(hcl: HclText, block: TFBlock | None, finding: Finding) -> bool:
    """authorized_networks 0.0.0.0/0 -> 10.0.0.0/8."""
    return block is not None and _narrow_cidrs(hcl, hcl.body(block))


# --- identity ----------------------------------------------------------------------------------------------

IAM_VALUE_RE = re.compile(r'(?P<key>(?<![A-Za-z_])["\']?(?P<name>Action|Resource|actions|resources)["\']?\s*[=:]\s*)'
                          r'(?P<value>"\*"|\[[^\]]*\])')


def _narrow_iam_match(match: re.Match[str]) -> str:
    concrete = NARROW_ACTION if match.group("name").lower().startswith("action") else NARROW_RESOURCE
    value = match.group("value")
    if value == '"*"':
        return f'{match.group("key")}["{concrete}"]'
    return match.group("key") + re.sub(r'"\*"', f'"{concrete}"', value)


def _enclosing_object(text: str, pos: int) -> str:
    """The ``{ ... }`` around ``pos`` (a policy statement, in HCL, jsonencode or JSON), by brace counting."""
    depth, lo = 0, 0
    for i in range(pos - 1, -1, -1):
        if text[i] == "}":
            depth += 1
        elif text[i] == "{":
            if depth == 0:
                lo = i
                break
            depth -= 1
    depth, hi = 0, len(text)
    for i in range(pos, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            if depth == 0:
                hi = i + 1
                break
            depth -= 1
    return text[lo:hi]


def _narrow_iam(hcl: HclText, block: TFBlock) -> bool:
    """Narrow the ``*`` actions/resources of every statement but Deny ones (narrowing a Deny weakens it)."""
    lo, hi = block.start_line - 1, block.end_line
    old = "".join(hcl.lines[lo:hi])

    def narrow(match: re.Match[str]) -> str:
        if re.search(r"(?i)[\"']?effect[\"']?\s*[=:]\s*\"deny\"", _enclosing_object(old, match.start())):
            return match.group(0)
        return _narrow_iam_match(match)

    new = IAM_VALUE_RE.sub(narrow, old)
    if new == old:
        return False
    hcl.replace_lines(lo, hi, new.splitlines(keepends=True))
    return True


def _referenced(hcl: HclText, block: TFBlock, type_: str) -> list[TFBlock]:
    """``data.<type_>.X`` blocks referenced from ``block`` (a policy built by a policy document)."""
    names = set(re.findall(rf"\bdata\.{re.escape(type_)}\.([\w-]+)", hcl.block_text(block)))
    return [b for b in hcl.blocks() if b.block == "data" and b.type == type_ and b.name in names]


def fix_iam_wildcard(hcl: HclText, block: TFBlock | None, finding: Finding) -> bool:
    """Action/Resource ``*`` -> s3:ListBucket on one example bucket ARN (a placeholder to edit), in the policy
    text of the block or of the aws_iam_policy_document it references."""
    if block is None:
        return False
    if _narrow_iam(hcl, block):
        return True
    return any([_narrow_iam(hcl, hcl.block(d.address))  # type: ignore[arg-type]
                for d in _referenced(hcl, block, "aws_iam_policy_document")])


#: What a grant of every IAM action becomes: reading roles (a placeholder for the actions really needed).
NARROW_IAM_ACTION = "iam:GetRole"


def _drop_iam_star(hcl: HclText, block: TFBlock) -> bool:
    """``iam:*`` leaves the action lists of the block (a list holding nothing else gets :data:`NARROW_IAM_ACTION`)."""
    lo, hi = block.start_line - 1, block.end_line
    old = "".join(hcl.lines[lo:hi])
    new = re.sub(r'\[\s*"iam:\*"\s*\]', f'["{NARROW_IAM_ACTION}"]', old)
    new = re.sub(r'"iam:\*"\s*,\s*|,\s*"iam:\*"', "", new)
    new = re.sub(r'("?Action"?\s*[=:]\s*)"iam:\*"', rf'\1"{NARROW_IAM_ACTION}"', new)
    if new == old:
        return False
    hcl.replace_lines(lo, hi, new.splitlines(keepends=True))
    return True


def fix_iam_full_access(hcl: HclText, block: TFBlock | None, finding: Finding) -> bool:
    """No grant of every IAM action: ``iam:*`` is dropped and ``*`` narrowed (as for a wildcard policy), in the
    block's policy or in the policy documents it references."""
    if block is None:
        return False
    targets = [block] + _referenced(hcl, block, "aws_iam_policy_document")
    changed = False
    for target in targets:
        current = hcl.block(target.address)
        assert current is not None
        changed = _drop_iam_star(hcl, current) or changed
        current = hcl.block(target.address)
        assert current is not None
        changed = _narrow_iam(hcl, current) or changed
    return changed


def fix_gcp_bucket_public(hcl: HclText, block: TFBlock | None, finding: Finding) -> bool:
    """allUsers / allAuthenticatedUsers -> a named group (the binding resource itself must stay)."""
    if block is None:
        return False
    targets = [block] + _referenced(hcl, block, "google_iam_policy")
    changed = False
    for target in targets:
        span = hcl.body(hcl.block(target.address))  # type: ignore[arg-type]
        changed = hcl.sub(span, r'(\bentity\s*=\s*)"(allUsers|allAuthenticatedUsers)"',
                          r'\1"group-' + PRIVATE_MEMBER.removeprefix("group:") + '"') or changed
        changed = hcl.sub(span, r'"(\w+):(allUsers|allAuthenticatedUsers)"',  # google_storage_bucket_acl role_entity
                          r'"\1:group-' + PRIVATE_MEMBER.removeprefix("group:") + '"') or changed
        changed = hcl.sub(span, r'"(allUsers|allAuthenticatedUsers)"', f'"{PRIVATE_MEMBER}"') or changed
    return changed


# --- literal secrets ---------------------------------------------------------------------------------------

TF_FIXERS: dict[str, TFFixer] = {
    "tf-aws-s3-public-acl": fix_s3_public_acl,
    "tf-aws-s3-public-access-block-off": fix_s3_public_access_block,
    "tf-aws-s3-no-encryption": fix_s3_encryption,
    "tf-aws-s3-versioning-off": fix_s3_versioning,
    "tf-aws-s3-logging-off": fix_s3_logging,
    "tf-aws-sg-open-admin-port": fix_sg_open_admin_port,
    "tf-aws-iam-wildcard-policy": fix_iam_wildcard,
    "tf-aws-rds-unencrypted": set_attrs(("storage_encrypted", "true")),
    "tf-aws-rds-public": set_attrs(("publicly_accessible", "false")),
    "tf-aws-ebs-unencrypted": set_attrs(("encrypted", "true")),
    "tf-aws-kms-rotation-off": set_attrs(("enable_key_rotation", "true")),
    "tf-aws-cloudtrail-validation-off": set_attrs(("enable_log_file_validation", "true")),
    "tf-gcp-bucket-public": fix_gcp_bucket_public,
    "tf-gcp-bucket-uniform-access-off": set_attrs(("uniform_bucket_level_access", "true")),
    "tf-gcp-firewall-open-admin-port": fix_gcp_firewall,
    "tf-gcp-sql-public": fix_gcp_sql_public,
    "tf-gcp-kms-rotation-off": set_attrs(("rotation_period", '"7776000s"')),
    # Checkov maps CKV_AZURE_190 (allow_nested_items_to_be_public) and CKV_AZURE_59 (public_network_access_enabled)
    # onto this rule: both must be false, whatever the older allow_blob_public_access says.
    "tf-azure-storage-public-access": both(set_attrs(("allow_nested_items_to_be_public", "false"),
                                                 ("public_network_access_enabled", "false")),
                                            set_if_present("allow_blob_public_access", "false")),
    "tf-azure-storage-https-off": set_present_or(("https_traffic_only_enabled", "enable_https_traffic_only"), "true"),
    "tf-azure-storage-old-tls": set_attrs(("min_tls_version", '"TLS1_2"')),
    "tf-azure-nsg-open-admin-port": fix_azure_nsg,
    "tf-azure-sql-public": set_attrs(("public_network_access_enabled", "false")),
    "tf-azure-keyvault-no-purge-protection": set_attrs(("purge_protection_enabled", "true")),
    "tf-hardcoded-password": fix_literal_secret,
    "cfg-hardcoded-private-key": fix_literal_secret,
    "cfg-hardcoded-aws-key": fix_literal_secret,
    "tf-aws-iam-policy-full-iam-access": fix_iam_full_access,
    # Checkov's IAM analysis of a wildcard policy (what "*" on "*" also is): narrowing the wildcards fixes them.
    **{rule: fix_iam_wildcard for rule in (
        "tf-aws-iam-credentials-exposure", "tf-aws-iam-data-exfiltration",
        "tf-aws-iam-permissions-management", "tf-aws-iam-privilege-escalation", "tf-aws-iam-write-unconstrained",
        "tf-aws-iam-star-resource")},
    **CHECKOV_FIXERS,
}
FILE_LEVEL_RULES = frozenset({"tf-hardcoded-password", "cfg-hardcoded-private-key", "cfg-hardcoded-aws-key"})


def fix_terraform(text: str, findings: list[Finding]) -> tuple[str, list[Finding], list[Skipped]]:
    """Apply every known fixer in turn; a fix whose result does not re-parse is rolled back and skipped."""
    hcl = HclText(text)
    hcl.blocks()  # an unparseable input raises ConfigParseError here, before any edit
    fixed: list[Finding] = []
    skipped: list[Skipped] = []
    # (rule, address) pairs an earlier fix of that rule changed: a later finding of the rule there (one per flag,
    # or one engine's report on the companion and another's on its bucket) has nothing left to change.
    touched: set[tuple[str, str]] = set()
    for finding in findings:
        fixer = TF_FIXERS.get(finding.rule_id)
        block = hcl.block(finding.resource)
        if fixer is None:
            skipped.append(Skipped(finding.rule_id, finding.resource, "no Terraform fixer for this rule"))
            continue
        if block is None and finding.rule_id not in FILE_LEVEL_RULES:
            skipped.append(Skipped(finding.rule_id, finding.resource, "resource not found in the file"))
            continue
        before, texts = hcl.text, _block_texts(hcl)
        try:
            changed = fixer(hcl, block, finding)
            hcl.blocks()
        except ConfigParseError:
            hcl.restore(before)
            skipped.append(Skipped(finding.rule_id, finding.resource, "the fix did not re-parse; rolled back"))
            continue
        if changed:
            after = _block_texts(hcl)
            touched |= {(finding.rule_id, a) for a in after if after[a] != texts.get(a)} | {
                (finding.rule_id, finding.resource)}
        if changed or (finding.rule_id, finding.resource) in touched:
            fixed.append(finding)
        else:
            skipped.append(Skipped(finding.rule_id, finding.resource, "nothing to change"))
    return (hcl.text if hcl.text != HclText(text).text else text), fixed, skipped


def _block_texts(hcl: HclText) -> dict[str, str]:
    return {b.address: hcl.block_text(b) for b in hcl.blocks()}
