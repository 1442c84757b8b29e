# S3 buckets: public ACLs, public access blocks, encryption, versioning and access logging.
# Since AWS provider v4 these settings live in companion resources that point at the bucket with
# `bucket = aws_s3_bucket.NAME.id` (or .bucket, or the bucket's literal name); the older inline blocks
# of aws_s3_bucket are accepted as well.
package config_audit.terraform

import rego.v1

public_canned_acls := {"public-read", "public-read-write", "authenticated-read"}

public_grantee_uris := {
	"http://acs.amazonaws.com/groups/global/AllUsers",
	"http://acs.amazonaws.com/groups/global/AuthenticatedUsers",
}

public_access_block_flags := ["block_public_acls", "block_public_policy", "ignore_public_acls", "restrict_public_buckets"]

# [key, bucket address] for every way a companion's `bucket` argument can name a bucket of the file:
# "${aws_s3_bucket.NAME.id}", "${aws_s3_bucket.NAME.bucket}", or the bucket's literal name. (Exact
# strings, not parsing: a reference with a count/for_each index is not recognised.)
bucket_keys := [[key, b.address] |
	bs := input.resources.aws_s3_bucket
	some b in bs
	some key in bucket_ref_keys(b)
]

bucket_ref_keys(b) := [concat("", ["${", b.address, ".id}"]), concat("", ["${", b.address, ".bucket}"]), b.attributes.bucket] if {
	literal_string(b.attributes.bucket)
} else := [concat("", ["${", b.address, ".id}"]), concat("", ["${", b.address, ".bucket}"])]

# The addresses of the buckets that some companion in `companions` points at.
targeted_buckets(companions) := {pair[1] |
	pairs := bucket_keys
	some pair in pairs
	some c in companions
	c.attributes.bucket == pair[0]
}

# Where to report a companion's problem: on its bucket when that is in the file (as Checkov does),
# else on the companion itself.
bucket_of(companion) := address if {
	ref := companion.attributes.bucket
	addresses := [pair[1] | pairs := bucket_keys; some pair in pairs; pair[0] == ref]
	address := addresses[0] # the first bucket of the file (indexing sort()'s result fails in rego-cpp 1.5.2)
} else := companion.address

# --- tf-aws-s3-public-acl
s3_public_acl_inline := [finding("tf-aws-s3-public-acl", b.address, "acl", concat("", ["bucket ACL is ", b.attributes.acl])) |
	bs := input.resources.aws_s3_bucket
	some b in bs
	b.attributes.acl in public_canned_acls
]

s3_public_acl_resource := [finding("tf-aws-s3-public-acl", bucket_of(a), path, concat("", ["bucket ACL is ", a.attributes.acl])) |
	acls := input.resources.aws_s3_bucket_acl
	some a in acls
	a.attributes.acl in public_canned_acls
	path := concat(".", [a.address, "acl"])
]

s3_public_grant_inline := [finding("tf-aws-s3-public-acl", b.address, "grant", "bucket ACL grants access to a public group") |
	bs := input.resources.aws_s3_bucket
	some b in bs
	grants := b.attributes.grant
	some grant in grants
	grant.uri in public_grantee_uris
]

public_access_control_policy(acl) if {
	policies := acl.attributes.access_control_policy
	some policy in policies
	grants := policy.grant
	some grant in grants
	grantees := grant.grantee
	some grantee in grantees
	grantee.uri in public_grantee_uris
}

s3_public_grant_resource := [finding("tf-aws-s3-public-acl", bucket_of(a), path, "bucket ACL grants access to a public group") |
	acls := input.resources.aws_s3_bucket_acl
	some a in acls
	public_access_control_policy(a)
	path := concat(".", [a.address, "access_control_policy"])
]

# --- tf-aws-s3-public-access-block-off: every flag of every block must be true, and every bucket
# needs a block (unless the account-level block covers all buckets).
s3_public_access_block_flags := [finding("tf-aws-s3-public-access-block-off", pab.address, flag, concat("", [flag, " is not true"])) |
	pabs := input.resources.aws_s3_bucket_public_access_block
	some pab in pabs
	flags := public_access_block_flags
	some flag in flags
	not is_true(pab.attributes[flag])
]

account_public_access_blocked if {
	pabs := input.resources.aws_s3_account_public_access_block
	some pab in pabs
	flags := public_access_block_flags
	count([flag | some flag in flags; is_true(pab.attributes[flag])]) == count(flags)
}

# The buckets that companions of each kind point at (undefined, so "not in", when there are none).
with_public_access_block := targeted_buckets(input.resources.aws_s3_bucket_public_access_block)

with_encryption := targeted_buckets(input.resources.aws_s3_bucket_server_side_encryption_configuration)

with_logging := targeted_buckets(input.resources.aws_s3_bucket_logging)

with_versioning := targeted_buckets([v |
	vs := input.resources.aws_s3_bucket_versioning
	some v in vs
	confs := v.attributes.versioning_configuration
	some conf in confs
	conf.status == "Enabled"
])

s3_missing_public_access_block := [finding("tf-aws-s3-public-access-block-off", b.address, null, "bucket has no aws_s3_bucket_public_access_block") |
	not account_public_access_blocked
	bs := input.resources.aws_s3_bucket
	some b in bs
	not b.address in with_public_access_block
]

# --- tf-aws-s3-no-encryption
s3_no_encryption := [finding("tf-aws-s3-no-encryption", b.address, null, "bucket has no server-side encryption configuration") |
	bs := input.resources.aws_s3_bucket
	some b in bs
	not b.address in with_encryption
	not has_items(b.attributes.server_side_encryption_configuration)
]

# --- tf-aws-s3-versioning-off
inline_versioning_enabled(b) if {
	vs := b.attributes.versioning
	some v in vs
	is_true(v.enabled)
}

s3_versioning_off := [finding("tf-aws-s3-versioning-off", b.address, null, "bucket versioning is not enabled") |
	bs := input.resources.aws_s3_bucket
	some b in bs
	not b.address in with_versioning
	not inline_versioning_enabled(b)
]

# --- tf-aws-s3-logging-off
s3_logging_off := [finding("tf-aws-s3-logging-off", b.address, null, "bucket has no access logging") |
	bs := input.resources.aws_s3_bucket
	some b in bs
	not b.address in with_logging
	not has_items(b.attributes.logging)
]
