# Shared helpers of the Terraform policy library (config-audit, E2).
#
# Input (built by security_verifiers.engines.rego.terraform_input), the whole file at once, its
# blocks grouped by type so that a rule reads only the blocks it is about:
#   {"resources": {<type>: [{"type", "name", "address", "attributes"}]}, "data": {<type>: [...]}}
# attributes hold plain values; nested blocks are lists of objects; expressions that are not literals
# arrive as strings "${...}".
#
# Output: `findings`, an array of {"rule_id", "resource", "path", "message"}, concatenated from one
# complete array rule per check (see findings.rego).
#
# Unknown values: a setting that must be secure (e.g. encrypted = true) passes only when it is the
# literal secure value, so a reference (var.x) does not silence a rule we cannot verify; a setting
# that is insecure only when enabled (e.g. publicly_accessible = true) fires only on the literal.
#
# Written for rego-cpp 1.5.2 (regopy); see kubernetes/lib.rego for the costs and quirks that shape the
# style (array rules; references instead of built-ins on whole objects; collections bound to locals
# before `some x in`; no `some k, v in` and no function argument as a key inside comprehensions;
# concat for messages; type-guarded built-ins) and, here, no regex (compiled on every call, ~35 us).
package config_audit.terraform

import rego.v1

admin_ports := [22, 3389]

world_cidrs := {"0.0.0.0/0", "::/0"}

# Blocks of one type are read with references, `bs := input.resources.aws_s3_bucket` (undefined,
# hence no iteration, when the file has none).

finding(rule_id, address, path, message) := {"rule_id": rule_id, "resource": address, "path": path, "message": message}

is_true(x) if x == true

is_true(x) if x == "true"

is_false(x) if x == false

is_false(x) if x == "false"

# A value as a list: lists as they are, null as [], a lone value as a one-element list.
as_list(x) := x if is_array(x) else := [] if x == null else := [x]

# The value of obj[key], null when missing (or when obj is not an object).
attr(obj, key) := v if {
	v := obj[key]
} else := null

# An attribute as a list; a missing attribute is the empty list (not undefined).
list_attr(obj, key) := as_list(attr(obj, key))

# A non-empty list (of nested blocks, typically).
has_items(x) if {
	is_array(x)
	count(x) > 0
}

lower_str(x) := lower(x) if is_string(x) else := sprintf("%v", [x])

# Any value as text for messages. Strings produced by built-ins must go through concat, never
# sprintf("%s"): rego-cpp 1.5.2 wraps them in unescaped quotes there, which breaks the output JSON.
to_text(x) := x if is_string(x) else := sprintf("%v", [x])

# An integer from a number or a decimal string; undefined otherwise (e.g. "${var.port}").
as_int(x) := x if {
	is_number(x)
} else := to_number(trim_space(x)) if {
	is_string(x)
	digits(trim_space(x))
}

# A non-empty string of decimal digits (no regex: rego-cpp compiles a pattern on every call, ~35 us).
digits(s) if {
	s != ""
	trim(s, "0123456789") == ""
}

# A port specification ("22", 22, "20-30", "*") that includes port p.
port_spec_covers(spec, p) if as_int(spec) == p

port_spec_covers(spec, _) if spec == "*"

port_spec_covers(spec, p) if {
	is_string(spec)
	bounds := split(trim_space(spec), "-")
	count(bounds) == 2
	as_int(bounds[0]) <= p
	p <= as_int(bounds[1])
}

port_range_covers(from, to, p) if {
	as_int(from) <= p
	p <= as_int(to)
}

# "22, 3389" for a set of port numbers (messages).
port_list(ports) := concat(", ", [format_int(p, 10) | some p in sort(ports)])

literal_string(x) if {
	is_string(x)
	not contains(x, "${")
}
