# The package's output: every rule's findings in one array. A rule missing here never fires, which
# the fixture tests (one firing fixture per catalog rule) would catch.
package config_audit.terraform

import rego.v1

findings := [f |
	all := [
		s3_public_acl_inline, s3_public_acl_resource, s3_public_grant_inline, s3_public_grant_resource,
		s3_public_access_block_flags, s3_missing_public_access_block, s3_no_encryption, s3_versioning_off,
		s3_logging_off, sg_inline_open_admin_port, sg_rule_open_admin_port, vpc_ingress_open_admin_port,
		iam_wildcard_document, iam_wildcard_inline, rds_public, kms_rotation_off, attribute_not_true,
		gcp_bucket_iam_member, gcp_bucket_iam_binding, gcp_bucket_access_control, gcp_bucket_acl,
		gcp_firewall_open_admin_port, gcp_sql_public, gcp_kms_rotation_off,
		azure_storage_public_access, azure_storage_https_off, azure_storage_old_tls,
		nsg_inline_open_admin_port, nsg_rule_open_admin_port, azure_sql_public,
	]
	some fs in all
	some f in fs
]
