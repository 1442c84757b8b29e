# Azure: storage accounts, network security groups, SQL servers
# (Key Vault purge protection is in aws.rego's must_be_true table).
package config_audit.terraform

import rego.v1

# --- tf-azure-storage-public-access: only an explicit true fires (the provider default changed
# across versions); secure configurations set allow_nested_items_to_be_public = false explicitly.
# allow_blob_public_access is the pre-3.0 name of the argument.
azure_storage_public_access := [finding("tf-azure-storage-public-access", b.address, field, concat("", [field, " is true"])) |
	bs := input.resources.azurerm_storage_account
	some b in bs
	some field in ["allow_nested_items_to_be_public", "allow_blob_public_access"]
	is_true(b.attributes[field])
]

# --- tf-azure-storage-https-off: the default is HTTPS only, so only an explicit false fires
# (enable_https_traffic_only is the pre-4.0 name of the argument).
azure_storage_https_off := [finding("tf-azure-storage-https-off", b.address, field, concat("", [field, " is false"])) |
	bs := input.resources.azurerm_storage_account
	some b in bs
	some field in ["https_traffic_only_enabled", "enable_https_traffic_only"]
	is_false(b.attributes[field])
]

# A missing min_tls_version fires too: older providers default to TLS1_0.
modern_tls_versions := {"TLS1_2", "TLS1_3"}

tls_text(version) := "not set" if version == null else := to_text(version)

azure_storage_old_tls := [finding("tf-azure-storage-old-tls", b.address, "min_tls_version", message) |
	bs := input.resources.azurerm_storage_account
	some b in bs
	version := attr(b.attributes, "min_tls_version")
	not version in modern_tls_versions
	message := concat("", ["min_tls_version is ", tls_text(version)])
]

# --- tf-azure-nsg-open-admin-port
internet_prefixes := {"*", "0.0.0.0/0", "0.0.0.0", "::/0", "internet", "any"}

# SSH and RDP are TCP services; "*" includes TCP.
tcp_protocols := {"tcp", "*"}

# Why a security rule opens SSH/RDP to the internet; undefined when it does not.
nsg_open_reason(rule) := message if {
	lower_str(attr(rule, "direction")) == "inbound"
	lower_str(attr(rule, "access")) == "allow"
	lower_str(attr(rule, "protocol")) in tcp_protocols
	internet_source(rule)
	ports := nsg_open_ports(rule)
	count(ports) > 0
	message := concat("", ["inbound allow from the internet to port(s) ", port_list(ports)])
}

internet_source(rule) if {
	prefixes := array.concat(list_attr(rule, "source_address_prefix"), list_attr(rule, "source_address_prefixes"))
	some prefix in prefixes
	lower_str(prefix) in internet_prefixes
}

nsg_open_ports(rule) := {p |
	specs := array.concat(list_attr(rule, "destination_port_range"), list_attr(rule, "destination_port_ranges"))
	some p in admin_ports
	some spec in specs
	port_spec_covers(spec, p)
}

nsg_inline_open_admin_port := [finding("tf-azure-nsg-open-admin-port", nsg.address, sprintf("security_rule[%v]", [i]), message) |
	nsgs := input.resources.azurerm_network_security_group
	some nsg in nsgs
	rules := nsg.attributes.security_rule
	some i
	rule := rules[i] # bound first: rego-cpp 1.5.2 does not bind `i` through a call argument
	message := nsg_open_reason(rule)
]

nsg_rule_open_admin_port := [finding("tf-azure-nsg-open-admin-port", b.address, null, message) |
	bs := input.resources.azurerm_network_security_rule
	some b in bs
	message := nsg_open_reason(b.attributes)
]

azure_sql_public := [finding("tf-azure-sql-public", b.address, "public_network_access_enabled", "public network access is not disabled") |
	bs := input.resources.azurerm_mssql_server
	some b in bs
	not is_false(b.attributes.public_network_access_enabled)
]
