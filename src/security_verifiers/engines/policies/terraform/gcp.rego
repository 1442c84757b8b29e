# Google Cloud: Cloud Storage exposure, firewall, Cloud SQL and Cloud KMS rotation
# (uniform bucket-level access is in aws.rego's must_be_true table).
package config_audit.terraform

import rego.v1

public_members := {"allUsers", "allAuthenticatedUsers"}

role_text(attrs) := to_text(attrs.role) if attrs.role != null else := "a role"

gcp_bucket_iam_member := [finding("tf-gcp-bucket-public", b.address, "member", message) |
	bs := input.resources.google_storage_bucket_iam_member
	some b in bs
	b.attributes.member in public_members
	message := concat("", ["grants ", role_text(b.attributes), " to ", b.attributes.member])
]

gcp_bucket_iam_binding := [finding("tf-gcp-bucket-public", b.address, "members", message) |
	bs := input.resources.google_storage_bucket_iam_binding
	some b in bs
	members := {m | some m in list_attr(b.attributes, "members"); m in public_members}
	count(members) > 0
	message := concat("", ["grants ", role_text(b.attributes), " to ", concat(", ", sort(members))])
]

gcp_bucket_access_control := [finding("tf-gcp-bucket-public", b.address, "entity", concat("", ["grants access to ", b.attributes.entity])) |
	bs := input.resources.google_storage_bucket_access_control
	some b in bs
	b.attributes.entity in public_members
]

public_role_entity(entry) if {
	is_string(entry)
	some member in public_members
	endswith(entry, concat("", [":", member]))
}

gcp_bucket_acl := [finding("tf-gcp-bucket-public", b.address, "role_entity", concat("", ["grants ", concat(", ", sort(entries))])) |
	bs := input.resources.google_storage_bucket_acl
	some b in bs
	entries := {e | some e in list_attr(b.attributes, "role_entity"); public_role_entity(e)}
	count(entries) > 0
]

# Protocols whose allow blocks are about ports (tcp, udp, sctp by name or number, or all).
port_protocols := {"tcp", "udp", "sctp", "all", "6", "17", "132"}

# An allow block without ports allows every port of its protocol.
allow_covers(allow, _) if {
	lower_str(attr(allow, "protocol")) in port_protocols
	not has_items(allow.ports)
}

allow_covers(allow, p) if {
	lower_str(attr(allow, "protocol")) in port_protocols
	specs := allow.ports
	some spec in specs
	port_spec_covers(spec, p)
}

# direction defaults to INGRESS.
ingress_firewall(attrs) if attr(attrs, "direction") == null

ingress_firewall(attrs) if lower_str(attrs.direction) == "ingress"

gcp_firewall_open_admin_port := [finding("tf-gcp-firewall-open-admin-port", b.address, sprintf("allow[%v]", [i]), message) |
	bs := input.resources.google_compute_firewall
	some b in bs
	sources := {s | some s in list_attr(b.attributes, "source_ranges"); s in world_cidrs}
	count(sources) > 0
	ingress_firewall(b.attributes)
	not is_true(b.attributes.disabled)
	allows := b.attributes.allow
	some i
	allow := allows[i]
	ports := {p | some p in admin_ports; allow_covers(allow, p)}
	count(ports) > 0
	message := concat("", ["allows port(s) ", port_list(ports), " from ", concat(", ", sort(sources))])
]

gcp_sql_public := [finding("tf-gcp-sql-public", b.address, "settings.ip_configuration.authorized_networks", message) |
	bs := input.resources.google_sql_database_instance
	some b in bs
	open := {n.value |
		settings := b.attributes.settings
		some s in settings
		ips := s.ip_configuration
		some ip in ips
		networks := ip.authorized_networks
		some n in networks
		n.value in world_cidrs
	}
	count(open) > 0
	message := concat("", ["authorized network ", concat(", ", sort(open))])
]

# --- tf-gcp-kms-rotation-off: rotation_period must be a literal of at most 90 days.
max_rotation_seconds := 7776000

rotation_seconds(period) := seconds if {
	is_string(period)
	endswith(period, "s")
	number := trim_suffix(period, "s")
	count(split(number, ".")) <= 2
	not startswith(number, ".")
	not endswith(number, ".")
	digits(replace(number, ".", ""))
	seconds := to_number(number) # in the body: rego-cpp 1.5.2 may evaluate a head despite a failed `every`
}

rotation_within_limit(attrs) if rotation_seconds(attrs.rotation_period) <= max_rotation_seconds

# Automatic rotation is not supported for asymmetric keys.
asymmetric_crypto_key(attrs) if {
	is_string(attrs.purpose)
	startswith(attrs.purpose, "ASYMMETRIC_")
}

gcp_kms_rotation_off := [finding("tf-gcp-kms-rotation-off", b.address, "rotation_period", "rotation_period is missing or longer than 90 days") |
	bs := input.resources.google_kms_crypto_key
	some b in bs
	not asymmetric_crypto_key(b.attributes)
	not rotation_within_limit(b.attributes)
]
