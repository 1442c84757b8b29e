"""The rule catalog against the pinned Checkov registry: every check is mapped onto one rule or excluded.

This is what makes the oracle's breadth a property of the code rather than of one measurement: a Checkov
upgrade that adds checks fails here until each one is mapped or excluded with a reason.
"""

from __future__ import annotations

import pytest

from security_verifiers.engines.findings import PLATFORMS, catalog, checkov_map, exclusions, rules_for


@pytest.fixture(scope="module")
def registry() -> dict:
    from security_verifiers.engines.checkov import registered_checks

    return registered_checks()


def test_catalog_loads_with_unique_ids_and_valid_fields() -> None:
    rules = catalog()
    assert len(rules) == len({r.id for r in rules.values()})
    for rule in rules.values():
        assert rule.platforms and set(rule.platforms) <= set(PLATFORMS), rule.id
        if rule.engine == "checkov":
            assert rule.checkov, f"{rule.id}: a Checkov rule maps at least one check"
            assert rule.resource_types, f"{rule.id}: a Checkov rule names the resource types it fires on"
        assert rule.remediation.strip() and rule.title.strip()


def test_catalog_files_read_the_same_with_libyaml_as_with_the_pure_python_loader() -> None:
    # the catalog is read with libyaml's loader (fast, in every process); it must be the data the reference loader reads
    import yaml

    from security_verifiers.engines.configs import FAST_LOADER
    from security_verifiers.engines.findings import CATALOG_DIR

    for path in sorted(CATALOG_DIR.glob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        assert yaml.load(text, Loader=FAST_LOADER) == yaml.safe_load(text), path.name  # noqa: S506


def test_every_registered_check_is_mapped_or_excluded(registry: dict) -> None:
    excluded = {(e.platform, e.checkov) for e in exclusions()}
    mapped = {(p, check) for p in PLATFORMS for check in checkov_map(p)}
    missing = sorted(key for key in registry if key not in mapped and key not in excluded)
    assert not missing, f"{len(missing)} Checkov checks are neither mapped nor excluded, e.g. {missing[:10]}"
    both = sorted(mapped & excluded)
    assert not both, f"checks both mapped and excluded: {both[:10]}"


def test_every_mapped_or_excluded_check_exists(registry: dict) -> None:
    unknown = sorted({(p, c) for p in PLATFORMS for c in checkov_map(p) if (p, c) not in registry}
                     | {(e.platform, e.checkov) for e in exclusions() if (e.platform, e.checkov) not in registry})
    assert not unknown, f"mapped or excluded checks that the pinned Checkov does not have: {unknown[:10]}"


def test_checkov_rules_fire_only_on_the_types_of_their_checks(registry: dict) -> None:
    for rule in catalog().values():
        if rule.engine != "checkov":
            continue
        supported = {t for p in rule.platforms for c in rule.checkov if (p, c) in registry
                     for t in registry[(p, c)].resource_types}
        extra = set(rule.resource_types) - supported
        assert not extra, f"{rule.id}: resource types {sorted(extra)} are not checked by {rule.checkov}"


@pytest.mark.parametrize(("platform", "types", "expected", "absent"), [
    # an S3 bucket brings the S3 rules and the secret rules, not the Kubernetes or RDS ones
    ("terraform", {"aws_s3_bucket"}, "tf-aws-s3-versioning-off", "tf-aws-rds-unencrypted"),
    # a Deployment brings the container rules but not the Ingress rule
    ("kubernetes", {"Deployment"}, "k8s-privileged-container", "k8s-ingress-no-tls"),
])
def test_rules_for_lists_the_rules_of_the_types_present(platform: str, types: set, expected: str, absent: str) -> None:
    ids = {r.id for r in rules_for(platform, types)}
    assert expected in ids and absent not in ids
    assert "cfg-hardcoded-private-key" in ids  # rules of any resource are always listed
