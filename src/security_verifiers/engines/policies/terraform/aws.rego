# AWS: security groups, IAM policies, RDS, EBS, KMS and CloudTrail.
package config_audit.terraform

import rego.v1

# ICMP "ports" are types and codes, not TCP/UDP ports.
icmp_protocols := {"icmp", "icmpv6", "1", "58"}

# `protocol = -1` reaches us as "${-1}": the HCL parser keeps a negative number as an expression.
all_protocols := {"-1", "all", "${-1}"}

# Why an ingress rule opens SSH/RDP to the internet; undefined when it does not. `sources` are its
# CIDR blocks (IPv4 and IPv6), checked first because most rules are not open to the world.
open_ingress_reason(from, to, protocol, sources) := message if {
	world := {s | some s in sources; s in world_cidrs}
	count(world) > 0
	proto := lower_str(protocol)
	ports := {p | some p in admin_ports; ingress_covers(from, to, proto, p)}
	count(ports) > 0
	message := concat("", ["ingress from ", concat(", ", sort(world)), " opens port(s) ", port_list(ports)])
}

ingress_covers(_, _, protocol, _) if protocol in all_protocols

ingress_covers(from, to, protocol, p) if {
	not protocol in icmp_protocols
	port_range_covers(from, to, p)
}

# Inline ingress blocks of aws_security_group.
sg_inline_open_admin_port := [finding("tf-aws-sg-open-admin-port", sg.address, sprintf("ingress[%v]", [i]), message) |
	sgs := input.resources.aws_security_group
	some sg in sgs
	rules := sg.attributes.ingress
	some i
	r := rules[i]
	sources := array.concat(list_attr(r, "cidr_blocks"), list_attr(r, "ipv6_cidr_blocks"))
	message := open_ingress_reason(attr(r, "from_port"), attr(r, "to_port"), attr(r, "protocol"), sources)
]

sg_rule_open_admin_port := [finding("tf-aws-sg-open-admin-port", b.address, null, message) |
	bs := input.resources.aws_security_group_rule
	some b in bs
	r := b.attributes
	r.type == "ingress"
	sources := array.concat(list_attr(r, "cidr_blocks"), list_attr(r, "ipv6_cidr_blocks"))
	message := open_ingress_reason(attr(r, "from_port"), attr(r, "to_port"), attr(r, "protocol"), sources)
]

vpc_ingress_open_admin_port := [finding("tf-aws-sg-open-admin-port", b.address, null, message) |
	bs := input.resources.aws_vpc_security_group_ingress_rule
	some b in bs
	r := b.attributes
	sources := array.concat(list_attr(r, "cidr_ipv4"), list_attr(r, "cidr_ipv6"))
	message := open_ingress_reason(attr(r, "from_port"), attr(r, "to_port"), attr(r, "ip_protocol"), sources)
]

# --- tf-aws-iam-wildcard-policy
allows_star_on_star(actions, resources) if {
	"*" in actions
	"*" in resources
}

iam_wildcard_document := [finding("tf-aws-iam-wildcard-policy", d.address, sprintf("statement[%v]", [i]), "statement allows * on *") |
	docs := input.data.aws_iam_policy_document
	some d in docs
	statements := d.attributes.statement
	some i
	s := statements[i]
	attr(s, "effect") in {"Allow", null}
	allows_star_on_star(list_attr(s, "actions"), list_attr(s, "resources"))
]

# A policy argument as a document: literal JSON (e.g. a heredoc), or jsonencode({...}) of literals,
# which the HCL parser renders with single quotes. Other expressions cannot be judged and are skipped.
policy_document(p) := json.unmarshal(p) if {
	literal_string(p)
	json.is_valid(p)
} else := json.unmarshal(doc) if {
	is_string(p)
	startswith(p, "${jsonencode(")
	endswith(p, ")}")
	doc := replace(trim_suffix(trim_prefix(p, "${jsonencode("), ")}"), "'", "\"")
	json.is_valid(doc)
}

wildcard_policy(p) if {
	doc := policy_document(p)
	statements := as_list(doc.Statement)
	some s in statements
	s.Effect == "Allow"
	allows_star_on_star(list_attr(s, "Action"), list_attr(s, "Resource"))
}

inline_policy_types := ["aws_iam_policy", "aws_iam_role_policy", "aws_iam_user_policy", "aws_iam_group_policy"]

iam_wildcard_inline := [finding("tf-aws-iam-wildcard-policy", b.address, "policy", "policy allows * on *") |
	types := inline_policy_types
	some type in types
	bs := input.resources[type]
	some b in bs
	wildcard_policy(b.attributes.policy)
]

rds_public := [finding("tf-aws-rds-public", b.address, "publicly_accessible", "RDS instance is publicly accessible") |
	bs := input.resources.aws_db_instance
	some b in bs
	is_true(b.attributes.publicly_accessible)
]

# Rotation exists only for symmetric keys; asymmetric and HMAC keys cannot enable it.
symmetric_kms_key(attrs) if {
	attr(attrs, "customer_master_key_spec") in {null, "SYMMETRIC_DEFAULT"}
	attr(attrs, "key_spec") in {null, "SYMMETRIC_DEFAULT"}
}

kms_rotation_off := [finding("tf-aws-kms-rotation-off", b.address, "enable_key_rotation", "key rotation is not enabled") |
	bs := input.resources.aws_kms_key
	some b in bs
	symmetric_kms_key(b.attributes)
	not is_true(b.attributes.enable_key_rotation)
]

# Rules that need one boolean argument of one resource type to be the literal true:
# {rule id: [resource type, attribute, message]}
must_be_true := {
	"tf-aws-rds-unencrypted": ["aws_db_instance", "storage_encrypted", "RDS storage is not encrypted"],
	"tf-aws-ebs-unencrypted": ["aws_ebs_volume", "encrypted", "EBS volume is not encrypted"],
	"tf-aws-cloudtrail-validation-off": ["aws_cloudtrail", "enable_log_file_validation", "log file validation is off"],
	"tf-gcp-bucket-uniform-access-off": ["google_storage_bucket", "uniform_bucket_level_access", "uniform bucket-level access is off"],
	"tf-azure-keyvault-no-purge-protection": ["azurerm_key_vault", "purge_protection_enabled", "purge protection is off"],
}

attribute_not_true := [finding(rule_id, b.address, spec[1], spec[2]) |
	table := must_be_true
	some rule_id
	spec := table[rule_id]
	bs := input.resources[spec[0]]
	some b in bs
	not is_true(b.attributes[spec[1]])
]
