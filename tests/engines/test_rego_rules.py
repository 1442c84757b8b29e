"""Every rule of our Rego library against its fixtures: ``fixtures/rules/<rule_id>/fire*`` must raise the rule on
the resource named by the first line (``# expect: Kind/name`` or ``# expect: type.name``), ``pass*`` must not raise
it at all. Fixtures are also valid configs (strict Kubernetes schema / HCL), so the rules are tested on what the
oracle will actually see."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

from security_verifiers.engines.findings import catalog
from security_verifiers.engines.rego import POLICY_DIR, RegoEngine, policy_files
from security_verifiers.engines.validate import validate

FIXTURES = Path(__file__).parent / "fixtures"
RULE_FIXTURES = FIXTURES / "rules"
REGO_RULES = sorted(rule_id for rule_id, rule in catalog().items() if rule.engine == "rego")


@cache
def engine() -> RegoEngine:
    return RegoEngine()


def platform_of(path: Path) -> str:
    return "terraform" if path.suffix == ".tf" else "kubernetes"


def fixture_files() -> list[Path]:
    return sorted(p for p in RULE_FIXTURES.glob("*/*") if p.suffix in (".yaml", ".tf"))


def expected_resource(path: Path) -> str:
    first = path.read_text(encoding="utf-8").splitlines()[0]
    match = re.fullmatch(r"#\s*expect:\s*(\S+)\s*", first)
    assert match, f"{path}: a firing fixture must start with '# expect: <resource>'"
    return match.group(1)


def fixture_id(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


FIRING = [p for p in fixture_files() if p.name.startswith("fire")]
PASSING = [p for p in fixture_files() if p.name.startswith("pass")]


@pytest.mark.parametrize("path", FIRING, ids=fixture_id)
def test_firing_fixture_raises_its_rule_on_the_expected_resource(path: Path) -> None:
    rule_id, resource = path.parent.name, expected_resource(path)
    findings = engine().scan(platform_of(path), path.read_text(encoding="utf-8"))
    hits = sorted({f.resource for f in findings if f.rule_id == rule_id})
    assert resource in hits, f"{rule_id} should fire on {resource}; it fired on {hits}"


@pytest.mark.parametrize("path", PASSING, ids=fixture_id)
def test_passing_fixture_does_not_raise_its_rule(path: Path) -> None:
    rule_id = path.parent.name
    findings = engine().scan(platform_of(path), path.read_text(encoding="utf-8"))
    hits = [f"{f.resource} ({f.message})" for f in findings if f.rule_id == rule_id]
    assert not hits, f"{rule_id} should not fire: {hits}"


@pytest.mark.parametrize("path", FIRING + PASSING, ids=fixture_id)
def test_fixture_is_a_valid_config(path: Path) -> None:
    result = validate(platform_of(path), path.read_text(encoding="utf-8"))
    assert result.ok, result.errors


def test_every_rego_rule_has_firing_and_passing_fixtures() -> None:
    missing = []
    for rule_id in REGO_RULES:
        names = [p.name for p in (RULE_FIXTURES / rule_id).glob("*")]
        if not any(n.startswith("fire") for n in names):
            missing.append(f"{rule_id}: no fire* fixture")
        if not any(n.startswith("pass") for n in names):
            missing.append(f"{rule_id}: no pass* fixture")
    assert not missing, missing


def test_fixture_folders_are_rego_rules_of_the_catalog() -> None:
    folders = {p.name for p in RULE_FIXTURES.iterdir() if p.is_dir()}
    assert folders <= set(REGO_RULES), sorted(folders - set(REGO_RULES))


def test_fixture_platform_matches_the_rule_platform() -> None:
    rules = catalog()
    for path in fixture_files():
        assert platform_of(path) in rules[path.parent.name].platforms, path


def test_policy_sources_name_exactly_the_rego_rules_of_the_catalog() -> None:
    """Every rule id written in the policies is a rego rule of the catalog, and every rego rule is written
    somewhere (a rule id is a string literal in a finding or in a rule table)."""
    ids: set[str] = set()
    for path in policy_files():
        ids |= set(re.findall(r'"((?:k8s|tf|cfg)-[a-z0-9-]+)"', path.read_text(encoding="utf-8")))
    assert ids == set(REGO_RULES), {"unknown": sorted(ids - set(REGO_RULES)),
                                    "never raised": sorted(set(REGO_RULES) - ids)}


def test_every_finding_of_every_fixture_is_a_rego_rule_of_its_platform() -> None:
    rules = catalog()
    paths = fixture_files() + sorted((FIXTURES / "secure").glob("*"))
    for path in paths:
        platform = platform_of(path)
        for finding in engine().scan(platform, path.read_text(encoding="utf-8")):
            rule = rules[finding.rule_id]
            assert rule.engine == "rego" and platform in rule.platforms, (path, finding)
            assert finding.severity == rule.severity and finding.engines == ("rego",)


def test_policies_live_in_the_package_folders() -> None:
    assert {p.parent.name for p in policy_files()} == {"kubernetes", "terraform"}
    assert all(p.is_relative_to(POLICY_DIR) for p in policy_files())
