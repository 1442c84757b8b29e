"""Terraform side of the E2 generator: secure bases that the whole oracle accepts, and operators that inject exactly
what they declare.

The oracle costs ~20 ms a text, so each check scans one batch: every scenario with a few seeds (bases), and every
operator applied alone to every base where it has a target (operators).
"""

from __future__ import annotations

import random
import zlib
from collections import Counter
from typing import Any

import pytest

from security_verifiers.engines.configs import inventory, parse_terraform
from security_verifiers.engines.findings import catalog
from security_verifiers.envs.config_audit.generation.hcl_tree import Block, Call, render_hcl
from security_verifiers.envs.config_audit.generation.mutations_tf import terraform_operators
from security_verifiers.envs.config_audit.generation.templates_tf import TF_CLOUDS, TF_TEMPLATES

SEEDS = (0, 1, 2)
OPERATORS = terraform_operators()


@pytest.fixture(scope="module")
def oracle() -> Any:
    oracle_module = pytest.importorskip("security_verifiers.engines.oracle")
    try:
        return oracle_module.get_oracle()
    except oracle_module.EngineUnavailable as err:  # pragma: no cover - depends on the installation
        pytest.skip(f"the oracle's engines are not available: {err}")


def _bases() -> list[tuple[str, int, Any]]:
    return [(name, seed, TF_TEMPLATES[name](random.Random(seed))) for name in sorted(TF_TEMPLATES) for seed in SEEDS]


# --------------------------------------------------------------------------------------------------
# Bases
# --------------------------------------------------------------------------------------------------
def test_every_base_is_valid_and_clean_under_the_whole_oracle(oracle: Any) -> None:
    bases = _bases()
    results = oracle.scan_many([("terraform", base.render()) for _, _, base in bases])
    problems = [f"{name}/{seed}: valid={r.valid} {r.validation_errors[:2]} findings={sorted(r.keys)}"
                for (name, seed, _), r in zip(bases, results, strict=True) if not r.valid or r.findings]
    assert problems == []


def test_bases_are_deterministic_and_vary_with_the_seed() -> None:
    for name, build in TF_TEMPLATES.items():
        assert build(random.Random(7)).render() == build(random.Random(7)).render(), name
        assert len({build(random.Random(seed)).render() for seed in range(4)}) > 1, name


def test_scenarios_cover_the_three_clouds_and_the_new_resource_types() -> None:
    assert set(TF_CLOUDS.values()) == {"aws", "gcp", "azure"} and set(TF_CLOUDS) == set(TF_TEMPLATES)
    types: Counter[str] = Counter()
    for build in TF_TEMPLATES.values():
        for seed in range(6):
            types.update({b.type for b in parse_terraform(build(random.Random(seed)).render()).blocks})
    wanted = {
        "aws_eks_cluster", "google_container_cluster", "azurerm_kubernetes_cluster",  # managed Kubernetes
        "aws_iam_policy", "aws_iam_role",  # IAM policies built from policy documents
        "aws_lambda_function", "google_cloudfunctions2_function", "azurerm_linux_function_app",  # functions
        "aws_ecr_repository", "google_artifact_registry_repository", "azurerm_container_registry",  # registries
        "aws_opensearch_domain",  # search
        "aws_instance", "google_compute_instance", "azurerm_linux_virtual_machine",  # virtual machines
    }
    assert wanted <= set(types), sorted(wanted - set(types))


def test_each_resource_type_of_an_operator_appears_in_several_scenarios_or_often() -> None:
    """An operator whose resources sit in one rare scenario would starve in a 200-item dataset: each applies to at
    least a sixth of the bases of its cloud (measured over seeded bases)."""
    bases = [(TF_CLOUDS[name], build(random.Random(seed))) for name, build in TF_TEMPLATES.items() for seed in range(8)]
    per_cloud = Counter(cloud for cloud, _ in bases)
    for op in OPERATORS:
        hits = Counter(cloud for cloud, base in bases if op.targets(base))
        assert hits, f"{op.rule_id} has no target in any base"
        assert max(hits[c] / per_cloud[c] for c in hits) >= 1 / 6, (op.rule_id, dict(hits))


def test_call_values_render_as_nested_hcl() -> None:
    block = Block("resource", ("aws_kms_key", "k"), [("policy", Call("jsonencode", {
        "Statement": [{"Effect": "Allow", "Action": ["kms:*"]}]}))])
    assert render_hcl([block]) == ('resource "aws_kms_key" "k" {\n  policy = jsonencode({\n    Statement = [\n'
                                   '      {\n        Effect = "Allow"\n        Action = ["kms:*"]\n      },\n'
                                   '    ]\n  })\n}\n')
    parse_terraform(render_hcl([block]))


# --------------------------------------------------------------------------------------------------
# Operators
# --------------------------------------------------------------------------------------------------
def test_terraform_operators_inject_at_least_thirty_checkov_rules() -> None:
    rules = catalog()
    injectable = {rule for op in OPERATORS for rule in op.rules}
    assert len({r for r in injectable if rules[r].engine == "checkov"}) >= 30
    assert all("terraform" in rules[r].platforms for r in injectable)


def test_every_rule_an_operator_also_violates_has_an_operator_of_its_own() -> None:
    """A dataset may then hold each rule alone, and counting injected rules against operators stays exact."""
    own = {op.rule_id for op in OPERATORS}
    assert {rule for op in OPERATORS for rule in op.also} <= own
    assert len(own) == len(OPERATORS)


def _mutated() -> list[tuple[str, str, Any, Any, str]]:
    """(rule, resource, base, mutated, base text before) for every operator on its first target of every base
    it applies to."""
    out = []
    for name, seed, base in [b for b in _bases() if b[1] < 2]:
        text = base.render()
        for op in OPERATORS:
            for resource in op.targets(base)[:1]:
                mutated = base.copy()
                op.apply(mutated, resource, random.Random(zlib.crc32(f"{name}:{seed}:{op.rule_id}".encode())))
                out.append((op.rule_id, resource, base, mutated, text))
    return out


@pytest.fixture(scope="module")
def mutated() -> list[tuple[str, str, Any, Any, str]]:
    return _mutated()


def test_every_operator_injects_exactly_what_it_declares(oracle: Any, mutated: list[Any]) -> None:
    operators = {op.rule_id: op for op in OPERATORS}
    results = oracle.scan_many([("terraform", m.render()) for _, _, _, m, _ in mutated])
    problems = []
    for (rule, resource, base, _, _), result in zip(mutated, results, strict=True):
        expected = {(r, resource) for r in operators[rule].rules}
        if not result.valid or result.keys != expected:
            problems.append(f"{rule} on {resource} ({base.template}): missing {sorted(expected - result.keys)}, "
                            f"extra {sorted(result.keys - expected)}, valid={result.valid}")
    assert problems == []
    assert {rule for rule, *_ in mutated} == set(operators)


def test_operators_never_add_a_resource_and_leave_the_base_untouched(mutated: list[Any]) -> None:
    for rule, _, base, after, text in mutated:
        before_objects = set(inventory("terraform", text)["objects"])
        after_objects = set(inventory("terraform", after.render())["objects"])
        assert after_objects <= before_objects, rule
        assert after.render() != text, rule
        assert base.render() == text, rule  # the operator edited a copy, never the base (nor a shared block)
