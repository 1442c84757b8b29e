# Container hygiene: resources, image pinning, probes and literal secrets in env.
package config_audit.kubernetes

import rego.v1

resource_fields := {
	"k8s-missing-cpu-limit": ["limits", "cpu"],
	"k8s-missing-memory-limit": ["limits", "memory"],
	"k8s-missing-cpu-request": ["requests", "cpu"],
	"k8s-missing-memory-request": ["requests", "memory"],
}

missing_resources := [container_finding(rule_id, it, concat("", ["has no resources.", spec[0], ".", spec[1]])) |
	items := input.containers
	some it in items
	fields := resource_fields
	some rule_id
	spec := fields[rule_id]
	not has_value(it.container.resources[spec[0]][spec[1]])
]

# The tag of an image reference, looked for only after the last "/" (a registry may carry a port).
image_tag(image) := tag if {
	parts := split(image, "/")
	last := parts[count(parts) - 1]
	contains(last, ":")
	tag := substring(last, indexof(last, ":") + 1, -1)
}

unpinned_reason(image) := "has no tag" if {
	not image_tag(image)
} else := "uses the latest tag" if {
	image_tag(image) == "latest"
}

latest_image_tag := [container_finding("k8s-latest-image-tag", it, concat("", ["image ", image, " ", reason])) |
	items := input.containers
	some it in items
	image := it.container.image
	is_string(image)
	image != ""
	not contains(image, "@") # a digest pins the image whatever the tag says
	reason := unpinned_reason(image)
]

probe_fields := {"k8s-missing-liveness-probe": "livenessProbe", "k8s-missing-readiness-probe": "readinessProbe"}

# Run-to-completion workloads have no use for liveness/readiness probes.
probe_exempt_kinds := {"Job", "CronJob"}

probe_set(probe) if {
	is_object(probe)
	count(probe) > 0
}

missing_probes := [container_finding(rule_id, it, concat("", ["has no ", field])) |
	items := input.containers
	some it in items
	it.init == false # init containers run to completion: no probes
	not it.kind in probe_exempt_kinds
	fields := probe_fields
	some rule_id
	field := fields[rule_id]
	not probe_set(it.container[field])
]

secret_in_env := [container_finding("k8s-secret-in-env", it, concat("", ["sets ", text_list(names), " as literal env value(s)"])) |
	items := input.containers
	some it in items
	env := it.container.env
	names := {e.name | some e in env; secret_like_name(e.name); has_value(e.value)}
	count(names) > 0
]
