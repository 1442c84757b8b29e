# Pod- and container-level security settings (CIS Kubernetes 5.2, Pod Security Standards).
package config_audit.kubernetes

import rego.v1

dangerous_capabilities := {"ALL", "SYS_ADMIN", "NET_ADMIN", "SYS_PTRACE", "SYS_MODULE", "NET_RAW", "DAC_READ_SEARCH"}

seccomp_confined_types := {"RuntimeDefault", "Localhost"}

privileged_container := [container_finding("k8s-privileged-container", it, "runs privileged") |
	items := input.containers
	some it in items
	it.container.securityContext.privileged == true
]

privilege_escalation := [container_finding("k8s-privilege-escalation", it, "does not set allowPrivilegeEscalation: false") |
	items := input.containers
	some it in items
	not it.container.securityContext.allowPrivilegeEscalation == false
]

# runAsUser 0 wins over runAsNonRoot: the kubelet would refuse to start it, but the intent is root.
root_reason(it) := "runAsUser is 0" if {
	effective_setting(it, "runAsUser") == 0
} else := "runAsNonRoot is not true" if {
	not effective_setting(it, "runAsNonRoot") == true
}

run_as_root := [container_finding("k8s-run-as-root", it, concat("", ["may run as root: ", reason])) |
	items := input.containers
	some it in items
	reason := root_reason(it)
]

capability_name(x) := trim_prefix(upper(x), "CAP_") if is_string(x)

added_capabilities := [container_finding("k8s-added-capabilities", it, concat("", ["adds ", text_list(dangerous)])) |
	items := input.containers
	some it in items
	adds := as_list(it.container.securityContext.capabilities.add)
	dangerous := {name | some x in adds; name := capability_name(x); name in dangerous_capabilities}
	count(dangerous) > 0
]

drops_all_capabilities(it) if {
	drops := as_list(it.container.securityContext.capabilities.drop)
	some x in drops
	capability_name(x) == "ALL"
}

capabilities_not_dropped := [container_finding("k8s-capabilities-not-dropped", it, "does not drop ALL capabilities") |
	items := input.containers
	some it in items
	not drops_all_capabilities(it)
]

host_namespace_fields := {
	"k8s-host-network": "hostNetwork",
	"k8s-host-pid": "hostPID",
	"k8s-host-ipc": "hostIPC",
}

host_namespaces := [finding(rule_id, w.resource, null, concat("", ["pod sets ", field, ": true"])) |
	ws := input.workloads
	some w in ws
	fields := host_namespace_fields
	some rule_id
	field := fields[rule_id]
	w.spec[field] == true
]

hostpath_volumes := [finding("k8s-hostpath-volume", w.resource, null, concat("", ["hostPath volume(s): ", text_list(names)])) |
	ws := input.workloads
	some w in ws
	volumes := w.spec.volumes
	names := {to_text(attr(v, "name")) | some v in volumes; v.hostPath != null}
	count(names) > 0
]

host_ports := [container_finding("k8s-host-port", it, concat("", ["binds host port(s) ", text_list(ports)])) |
	items := input.containers
	some it in items
	declared := it.container.ports
	ports := {to_text(p.hostPort) | some p in declared; has_value(p.hostPort); p.hostPort != 0}
	count(ports) > 0
]

writable_root_fs := [container_finding("k8s-writable-root-fs", it, "does not set readOnlyRootFilesystem: true") |
	items := input.containers
	some it in items
	not it.container.securityContext.readOnlyRootFilesystem == true
]

sa_token_automount := [finding("k8s-sa-token-automount", w.resource, null, "pod does not set automountServiceAccountToken: false") |
	ws := input.workloads
	some w in ws
	not w.spec.automountServiceAccountToken == false
]

# serviceAccount is the deprecated alias of serviceAccountName; the API server still honours it.
dedicated_service_account(spec) if {
	name := spec.serviceAccountName
	is_string(name)
	not name in {"", "default"}
}

dedicated_service_account(spec) if {
	name := spec.serviceAccount
	is_string(name)
	not name in {"", "default"}
}

default_service_account := [finding("k8s-default-service-account", w.resource, null, "pod uses the default service account") |
	ws := input.workloads
	some w in ws
	not dedicated_service_account(w.spec)
]

seccomp_not_set := [container_finding("k8s-seccomp-not-set", it, "has no RuntimeDefault/Localhost seccomp profile") |
	items := input.containers
	some it in items
	not effective_setting(it, "seccompProfile").type in seccomp_confined_types
]
