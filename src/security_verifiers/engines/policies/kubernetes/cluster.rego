# Object-level rules: RBAC, Services, Ingress, NetworkPolicy coverage and ConfigMaps.
package config_audit.kubernetes

import rego.v1

rbac_wildcard_fields := {"k8s-rbac-wildcard-verbs": "verbs", "k8s-rbac-wildcard-resources": "resources"}

rbac_wildcards := [finding(rule_id, o.resource, sprintf("rules[%v]", [i]), concat("", ["rule grants ", field, ": *"])) |
	some kind in ["Role", "ClusterRole"]
	objs := input.objects[kind]
	some o in objs
	rules := o.body.rules
	some i
	rule := rules[i]
	fields := rbac_wildcard_fields
	some rule_id
	field := fields[rule_id]
	"*" in as_list(rule[field])
]

cluster_admin_binding := [finding("k8s-cluster-admin-binding", o.resource, "roleRef", "binds the cluster-admin role") |
	some kind in ["RoleBinding", "ClusterRoleBinding"]
	objs := input.objects[kind]
	some o in objs
	o.body.roleRef.name == "cluster-admin"
]

nodeport_service := [finding("k8s-nodeport-service", o.resource, null, "Service type NodePort exposes a port on every node") |
	objs := input.objects.Service
	some o in objs
	o.body.spec.type == "NodePort"
]

lb_ranges_annotation := "service.beta.kubernetes.io/load-balancer-source-ranges"

# The cloud controllers honour both the spec field and the older annotation.
lb_source_ranges(o) := array.concat(as_list(attr(o.body.spec, "loadBalancerSourceRanges")), annotation_ranges(o))

annotation_ranges(o) := split(annotation, ",") if {
	annotation := o.body.metadata.annotations[lb_ranges_annotation]
	is_string(annotation)
} else := []

lb_unrestricted_reason(ranges) := "no loadBalancerSourceRanges" if {
	count([r | some r in ranges; is_string(r); trim_space(r) != ""]) == 0
} else := "loadBalancerSourceRanges open to the whole internet" if {
	some r in ranges
	is_string(r)
	trim_space(r) in {"0.0.0.0/0", "::/0"}
}

loadbalancer_unrestricted := [finding("k8s-loadbalancer-unrestricted", o.resource, null, concat("", ["LoadBalancer Service with ", reason])) |
	objs := input.objects.Service
	some o in objs
	o.body.spec.type == "LoadBalancer"
	ranges := lb_source_ranges(o)
	reason := lb_unrestricted_reason(ranges)
]

ingress_no_tls := [finding("k8s-ingress-no-tls", o.resource, null, "Ingress has no tls section") |
	objs := input.objects.Ingress
	some o in objs
	not has_items(o.body.spec.tls)
]

workload_namespaces := {effective_namespace(w) | ws := input.workloads; some w in ws}

# Only a NetworkPolicy that restricts ingress counts: one that admits all ingress (`ingress: [{}]`) or is about
# egress alone isolates nothing, whatever its podSelector.
networkpolicy_namespaces := {effective_namespace(o) |
	objs := input.objects.NetworkPolicy
	some o in objs
	restricts_ingress(attr(o.body, "spec"))
}

# Ingress is among the policy's types (implied when policyTypes is absent) and no ingress rule admits everything.
restricts_ingress(spec) if {
	ingress_policy_type(spec)
	rules := as_list(attr(spec, "ingress"))
	not allows_all_ingress(rules)
}

ingress_policy_type(spec) if attr(spec, "policyTypes") == null

ingress_policy_type(spec) if "Ingress" in as_list(attr(spec, "policyTypes"))

# A rule with no peers (`from`) and no ports admits every source on every port.
allows_all_ingress(rules) if {
	some r in rules
	not has_items(attr(r, "from"))
	not has_items(attr(r, "ports"))
}

# Only namespaces declared in the file are judged: of others we cannot know their policies.
missing_networkpolicy := [finding("k8s-missing-networkpolicy", o.resource, null, message) |
	objs := input.objects.Namespace
	some o in objs
	o.name in workload_namespaces
	not o.name in networkpolicy_namespaces
	message := concat("", ["namespace ", o.name, " runs workloads but has no NetworkPolicy"])
]

secret_in_configmap := [finding("k8s-secret-in-configmap", o.resource, null, message) |
	objs := input.objects.ConfigMap
	some o in objs
	keys := {k |
		some field in ["data", "binaryData"] # binaryData holds the same entries, base64-encoded
		entries := o.body[field]
		some k # rego-cpp 1.5.2 rejects `some k, v in` inside comprehensions
		value := entries[k]
		secret_like_name(k)
		has_value(value)
	}
	count(keys) > 0
	message := concat("", ["ConfigMap holds secret-looking key(s) ", text_list(keys)])
]
