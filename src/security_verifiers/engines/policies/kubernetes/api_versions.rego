# API versions the API server no longer serves (k8s-removed-api-version). The table is the one of
# security_verifiers.engines.api_versions (a test keeps them equal): "apiVersion Kind" -> the Kubernetes
# release that stopped serving it and the apiVersion that replaced it (null: the kind itself is gone).
package config_audit.kubernetes

import rego.v1

removed_apis := {
	"admissionregistration.k8s.io/v1beta1 MutatingWebhookConfiguration": {"removed_in": "1.22", "replacement": "admissionregistration.k8s.io/v1"},
	"admissionregistration.k8s.io/v1beta1 ValidatingWebhookConfiguration": {"removed_in": "1.22", "replacement": "admissionregistration.k8s.io/v1"},
	"apiextensions.k8s.io/v1beta1 CustomResourceDefinition": {"removed_in": "1.22", "replacement": "apiextensions.k8s.io/v1"},
	"apiregistration.k8s.io/v1beta1 APIService": {"removed_in": "1.22", "replacement": "apiregistration.k8s.io/v1"},
	"apps/v1beta1 ControllerRevision": {"removed_in": "1.16", "replacement": "apps/v1"},
	"apps/v1beta1 Deployment": {"removed_in": "1.16", "replacement": "apps/v1"},
	"apps/v1beta1 StatefulSet": {"removed_in": "1.16", "replacement": "apps/v1"},
	"apps/v1beta2 DaemonSet": {"removed_in": "1.16", "replacement": "apps/v1"},
	"apps/v1beta2 Deployment": {"removed_in": "1.16", "replacement": "apps/v1"},
	"apps/v1beta2 ReplicaSet": {"removed_in": "1.16", "replacement": "apps/v1"},
	"apps/v1beta2 StatefulSet": {"removed_in": "1.16", "replacement": "apps/v1"},
	"autoscaling/v2beta1 HorizontalPodAutoscaler": {"removed_in": "1.25", "replacement": "autoscaling/v2"},
	"autoscaling/v2beta2 HorizontalPodAutoscaler": {"removed_in": "1.26", "replacement": "autoscaling/v2"},
	"batch/v1beta1 CronJob": {"removed_in": "1.25", "replacement": "batch/v1"},
	"batch/v2alpha1 CronJob": {"removed_in": "1.25", "replacement": "batch/v1"},
	"certificates.k8s.io/v1beta1 CertificateSigningRequest": {"removed_in": "1.22", "replacement": "certificates.k8s.io/v1"},
	"coordination.k8s.io/v1beta1 Lease": {"removed_in": "1.22", "replacement": "coordination.k8s.io/v1"},
	"discovery.k8s.io/v1beta1 EndpointSlice": {"removed_in": "1.25", "replacement": "discovery.k8s.io/v1"},
	"events.k8s.io/v1beta1 Event": {"removed_in": "1.25", "replacement": "events.k8s.io/v1"},
	"extensions/v1beta1 DaemonSet": {"removed_in": "1.16", "replacement": "apps/v1"},
	"extensions/v1beta1 Deployment": {"removed_in": "1.16", "replacement": "apps/v1"},
	"extensions/v1beta1 Ingress": {"removed_in": "1.22", "replacement": "networking.k8s.io/v1"},
	"extensions/v1beta1 NetworkPolicy": {"removed_in": "1.16", "replacement": "networking.k8s.io/v1"},
	"extensions/v1beta1 PodSecurityPolicy": {"removed_in": "1.16", "replacement": null},
	"extensions/v1beta1 ReplicaSet": {"removed_in": "1.16", "replacement": "apps/v1"},
	"networking.k8s.io/v1beta1 Ingress": {"removed_in": "1.22", "replacement": "networking.k8s.io/v1"},
	"networking.k8s.io/v1beta1 IngressClass": {"removed_in": "1.22", "replacement": "networking.k8s.io/v1"},
	"node.k8s.io/v1beta1 RuntimeClass": {"removed_in": "1.25", "replacement": "node.k8s.io/v1"},
	"policy/v1beta1 PodDisruptionBudget": {"removed_in": "1.25", "replacement": "policy/v1"},
	"policy/v1beta1 PodSecurityPolicy": {"removed_in": "1.25", "replacement": null},
	"rbac.authorization.k8s.io/v1alpha1 ClusterRole": {"removed_in": "1.22", "replacement": "rbac.authorization.k8s.io/v1"},
	"rbac.authorization.k8s.io/v1alpha1 ClusterRoleBinding": {"removed_in": "1.22", "replacement": "rbac.authorization.k8s.io/v1"},
	"rbac.authorization.k8s.io/v1alpha1 Role": {"removed_in": "1.22", "replacement": "rbac.authorization.k8s.io/v1"},
	"rbac.authorization.k8s.io/v1alpha1 RoleBinding": {"removed_in": "1.22", "replacement": "rbac.authorization.k8s.io/v1"},
	"rbac.authorization.k8s.io/v1beta1 ClusterRole": {"removed_in": "1.22", "replacement": "rbac.authorization.k8s.io/v1"},
	"rbac.authorization.k8s.io/v1beta1 ClusterRoleBinding": {"removed_in": "1.22", "replacement": "rbac.authorization.k8s.io/v1"},
	"rbac.authorization.k8s.io/v1beta1 Role": {"removed_in": "1.22", "replacement": "rbac.authorization.k8s.io/v1"},
	"rbac.authorization.k8s.io/v1beta1 RoleBinding": {"removed_in": "1.22", "replacement": "rbac.authorization.k8s.io/v1"},
	"scheduling.k8s.io/v1alpha1 PriorityClass": {"removed_in": "1.22", "replacement": "scheduling.k8s.io/v1"},
	"scheduling.k8s.io/v1beta1 PriorityClass": {"removed_in": "1.22", "replacement": "scheduling.k8s.io/v1"},
	"storage.k8s.io/v1beta1 CSIDriver": {"removed_in": "1.22", "replacement": "storage.k8s.io/v1"},
	"storage.k8s.io/v1beta1 CSINode": {"removed_in": "1.22", "replacement": "storage.k8s.io/v1"},
	"storage.k8s.io/v1beta1 CSIStorageCapacity": {"removed_in": "1.27", "replacement": "storage.k8s.io/v1"},
	"storage.k8s.io/v1beta1 StorageClass": {"removed_in": "1.22", "replacement": "storage.k8s.io/v1"},
	"storage.k8s.io/v1beta1 VolumeAttachment": {"removed_in": "1.22", "replacement": "storage.k8s.io/v1"},
}

removed_api_advice(entry) := concat("", ["; use apiVersion ", entry.replacement]) if {
	is_string(entry.replacement)
} else := "; the kind is gone (use Pod Security Admission labels on the namespace)"

removed_api_version := [finding("k8s-removed-api-version", o.resource, "apiVersion", message) |
	groups := input.objects
	some kind
	objs := groups[kind]
	some o in objs
	api := o.body.apiVersion
	is_string(api)
	table := removed_apis
	entry := table[concat(" ", [api, kind])]
	message := concat("", [kind, " apiVersion ", api, " is not served since Kubernetes ", entry.removed_in, removed_api_advice(entry)])
]
