# The package's output: every rule's findings in one array. A rule missing here never fires, which
# the fixture tests (one firing fixture per catalog rule) would catch.
package config_audit.kubernetes

import rego.v1

findings := [f |
	all := [
		privileged_container, privilege_escalation, run_as_root, added_capabilities,
		capabilities_not_dropped, host_namespaces, hostpath_volumes, host_ports, writable_root_fs,
		sa_token_automount, default_service_account, seccomp_not_set,
		missing_resources, latest_image_tag, missing_probes, secret_in_env,
		rbac_wildcards, cluster_admin_binding, nodeport_service, loadbalancer_unrestricted,
		ingress_no_tls, missing_networkpolicy, secret_in_configmap, removed_api_version,
	]
	some fs in all
	some f in fs
]
