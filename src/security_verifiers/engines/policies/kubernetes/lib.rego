# Shared helpers of the Kubernetes policy library (config-audit, E2).
#
# Input (built by security_verifiers.engines.rego.kubernetes_input), the whole manifest at once,
# as the objects grouped by kind plus two flat views of the workloads among them (Python only
# reshapes; every decision is made here):
#   {"objects":    {<kind>: [{"kind", "name", "namespace", "resource": "Kind/name", "body"}]},
#    "workloads":  [{"resource", "kind", "namespace", "spec": the pod spec without its container lists}],
#    "containers": [{"resource", "kind", "init": bool, "container",
#                    "pod_security_context": the pod-level securityContext (or null)}]}
# A workload's "body" in "objects" has no "spec": its pod spec and containers are in the views.
# Workloads are the objects of the kinds in configs.POD_SPEC_PATHS whose pod spec is a mapping.
#
# Output: `findings`, an array of {"rule_id", "resource", "path", "message"}, concatenated from one
# complete array rule per check (findings.rego).
#
# Written for rego-cpp 1.5.2 (regopy), whose costs and quirks shape the style:
# - every evaluation step costs microseconds, so Python hands over flat lists (one item per container,
#   objects grouped by kind) instead of Rego building them (10x cheaper);
# - built-ins copy their arguments: no object.get/count/is_object on whole objects or lists in hot
#   paths; look values up with references (`attr` for "missing means null");
# - partial set rules (`findings contains f if`) cost O(n^2) in their size: every rule is an array
#   comprehension;
# - iterating a rule or function value directly (`some x in rule`) re-evaluates it per step: each
#   collection is bound to a local variable first (`xs := rule; some x in xs`);
# - inside comprehensions, `some k, v in x` is rejected (use `some k; v := x[k]`) and a function
#   argument used as a key (`obj[arg]`) is taken for a fresh variable: keys there are local variables;
# - strings made by built-ins get unescaped quotes inside sprintf("%s"): messages use concat;
# - built-ins raise (strict errors on), so every built-in call is guarded by a type check: the
#   manifests come from models and may put any type anywhere.
package config_audit.kubernetes

import rego.v1

# Names of secret-looking keys (env vars, ConfigMap keys), matched case-insensitively after
# normalising "-" and "." to "_" (so "api-key" and "db.password" count too).
secret_name_patterns := ["PASSWORD", "PASSWD", "SECRET", "TOKEN", "API_KEY", "APIKEY", "PRIVATE_KEY", "ACCESS_KEY"]

# The value of obj[key], null when missing (or when obj is not an object).
attr(obj, key) := v if {
	v := obj[key]
} else := null

container_name(c) := to_text(c.name) if c.name != null else := "<unnamed>"

# Any value as text for messages. Strings produced by built-ins must go through concat, never
# sprintf("%s"): rego-cpp 1.5.2 wraps them in unescaped quotes there, which breaks the output JSON.
to_text(x) := x if is_string(x) else := sprintf("%v", [x])

# A container-level setting falls back to the pod-level one, as the kubelet resolves it.
effective_setting(item, key) := v if {
	v := item.container.securityContext[key]
	v != null
} else := v if {
	v := item.pod_security_context[key]
	v != null
}

finding(rule_id, resource, path, message) := {"rule_id": rule_id, "resource": resource, "path": path, "message": message}

# A container finding: on the workload, narrowed to the container; the message names it.
container_finding(rule_id, item, text) := finding(rule_id, item.resource, name, concat("", ["container ", name, " ", text])) if {
	name := container_name(item.container)
}

# A value that is present: not null and not the empty string.
has_value(x) if {
	x != null
	x != ""
}

# A non-empty list.
has_items(x) if {
	is_array(x)
	count(x) > 0
}

secret_like_name(name) if {
	is_string(name)
	normalised := replace(replace(upper(name), "-", "_"), ".", "_")
	patterns := secret_name_patterns
	some pattern in patterns
	contains(normalised, pattern)
}

# The effective namespace of an object; objects without one live in "default".
effective_namespace(o) := o.namespace if {
	is_string(o.namespace)
	o.namespace != ""
} else := "default"

# A value as a list: lists as they are, a lone scalar as a one-element list, null as [].
as_list(x) := x if is_array(x) else := [] if x == null else := [x]

# Sorted, comma-separated text of a set of strings.
text_list(xs) := concat(", ", sort(xs))
