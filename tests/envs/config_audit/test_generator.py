"""E2 generator: deterministic, exact, balanced items whose labels are the oracle's truth.

The oracle costs ~2 s per semgrep run and ~40 ms per text, so the expensive checks share module-scoped
fixtures: one rebuild of the public set (which also proves determinism against the committed file), one
showcase with one item per operator, and small generated sets; balance statistics use the oracle-free
:func:`plan`.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest

from security_verifiers.core.datasets import content_hash, read_jsonl
from security_verifiers.core.errors import DatasetError
from security_verifiers.core.types import Item
from security_verifiers.engines.configs import parse_kubernetes, parse_terraform
from security_verifiers.engines.findings import catalog
from security_verifiers.envs.config_audit.env import DATA_DIR, ConfigAudit
from security_verifiers.envs.config_audit.generation.generator import (
    FILENAMES,
    GENERATOR_VERSION,
    SPLITS,
    generate,
    operator_showcase,
    plan,
    self_check,
)
from security_verifiers.envs.config_audit.generation.hcl_tree import Block, heredoc, ref, render_hcl
from security_verifiers.envs.config_audit.generation.mutation_kit import fake_aws_key_id, fake_pem
from security_verifiers.envs.config_audit.generation.mutations import injectable_rules, missing_operators, operators
from security_verifiers.envs.config_audit.generation.templates_k8s import K8S_TEMPLATES
from security_verifiers.envs.config_audit.generation.templates_tf import TF_TEMPLATES
from security_verifiers.envs.kits.public_sets import PUBLIC_SEED, build_public_sets
from security_verifiers.harness.conformance import baseline_rewards

MANIFEST = json.loads((DATA_DIR / "manifest.json").read_text())
PUBLIC_SIZES = ConfigAudit().public_sets().sizes


@pytest.fixture(scope="module")
def small() -> list[Item]:
    return generate("dev", 20, seed=11)


@pytest.fixture(scope="module")
def showcase() -> list[Item]:
    return operator_showcase(seed=0)


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("public")
    build_public_sets(env := ConfigAudit(), out, baseline_rewards(env))
    return out


# --------------------------------------------------------------------------------------------------
# Contract, determinism, counts
# --------------------------------------------------------------------------------------------------
def test_items_follow_the_contract(small) -> None:
    assert len(small) == 20 and len({i.id for i in small}) == 20
    for item in small:
        assert item.split == "dev" and item.id.startswith("ca-")
        assert set(item.input) == {"platform", "filename", "text"}
        assert item.input["filename"] == FILENAMES[item.input["platform"]]
        assert set(item.target) == {"findings", "fixed", "mutations"}
        assert set(item.meta) == {"generator_version", "template", "cloud", "n_mutations"}
        assert item.meta["generator_version"] == GENERATOR_VERSION
        assert (item.meta["cloud"] is None) == (item.input["platform"] == "kubernetes")
        for f in item.target["findings"]:
            assert set(f) == {"rule_id", "resource", "path", "severity", "engines"}
            assert f["severity"] == catalog()[f["rule_id"]].severity.value
        keys = [(f["rule_id"], f["resource"]) for f in item.target["findings"]]
        assert keys == sorted(keys)
        assert {(m["rule_id"], m["resource"]) for m in item.target["mutations"]} == set(keys)


def test_same_seed_same_items_other_seed_or_split_differs(small) -> None:
    assert content_hash(generate("dev", 20, seed=11)) == content_hash(small)  # served by the oracle cache
    assert [d.key for d in plan("dev", 20, seed=12)] != [d.key for d in plan("dev", 20, seed=11)]
    assert [d.key for d in plan("train", 20, seed=11)] != [d.key for d in plan("dev", 20, seed=11)]


@pytest.mark.parametrize("split", SPLITS)
def test_plan_is_exact_unique_and_extends(split: str) -> None:
    drafts = plan(split, 45, seed=3)
    assert len(drafts) == 45 and len({d.key for d in drafts}) == 45
    assert {d.split for d in drafts} == {split}
    assert plan(split, 20, seed=3) == drafts[:20]
    assert plan(split, 0, seed=3) == [] and generate(split, 0, seed=3) == []


@pytest.mark.parametrize("split", ["validation", "", "TEST", "ood"])
def test_unknown_split_is_an_error(split: str) -> None:
    with pytest.raises(DatasetError, match="unknown split"):
        generate(split, 5, seed=0)


def test_negative_n_is_an_error() -> None:
    with pytest.raises(DatasetError):
        plan("train", -1, seed=0)


def test_balance_over_200_items() -> None:
    drafts = plan("train", 200, seed=5)
    clean = [d for d in drafts if not d.mutations]
    assert 0.25 <= len(clean) / 200 <= 0.35
    platforms = Counter(d.platform for d in drafts)
    assert platforms["kubernetes"] == platforms["terraform"] == 100
    positives = Counter(d.platform for d in drafts if d.mutations)
    assert positives["kubernetes"] == positives["terraform"]
    assert all(1 <= len(d.mutations) <= 4 for d in drafts if d.mutations)
    assert all(d.text == d.fixed for d in clean) and all(d.text != d.fixed for d in drafts if d.mutations)
    clouds = Counter(d.cloud for d in drafts if d.platform == "terraform")
    assert set(clouds) == {"aws", "gcp", "azure"} and max(clouds.values()) - min(clouds.values()) <= 10
    used = {(d.platform, r) for d in drafts for r, _ in d.mutations}
    every = {(p, r) for p in FILENAMES for r in operators(p)}
    assert used == every, f"rules never injected in 200 items: {sorted(every - used)}"


# --------------------------------------------------------------------------------------------------
# Operators and the oracle
# --------------------------------------------------------------------------------------------------
#: How many catalog rules the generator must be able to inject (the issue "Real use of E1/E2" asks for 100).
MIN_INJECTABLE_RULES = 100


def test_every_core_rule_has_an_operator_and_at_least_100_rules_are_injectable() -> None:
    assert missing_operators() == []
    for rule in catalog().values():
        if rule.engine != "checkov":
            for platform in rule.native_platforms:
                assert operators(platform)[rule.id].rule_id == rule.id
    injectable = injectable_rules("kubernetes") | injectable_rules("terraform")
    assert len(injectable) >= MIN_INJECTABLE_RULES, f"only {len(injectable)} rules have a mutation operator"


def test_every_operator_is_detected_precisely(showcase) -> None:
    """One item per (platform, operator), in registry order, holding exactly what the operator injects: its rule on
    its resource, the rules its edit also violates there (``also``) and its spillover onto other resources.
    operator_showcase already ran the self-check."""
    expected = [(p, op) for p in FILENAMES for op in operators(p).values()]
    assert [i.input["platform"] for i in showcase] == [p for p, _ in expected]
    for item, (_, op) in zip(showcase, expected, strict=True):
        injected = sorted((m["rule_id"], m["resource"]) for m in item.target["mutations"])
        own = [resource for rule, resource in injected if rule == op.rule_id]
        assert any({(rule, resource) for rule in op.rules} <= set(injected) for resource in own), (op.rule_id, injected)
        assert [(f["rule_id"], f["resource"]) for f in item.target["findings"]] == injected
    assert self_check(showcase) == []


@pytest.mark.parametrize("order", [("tf-aws-s3-public-acl", "tf-aws-s3-public-access-block-off"),
                                   ("tf-aws-s3-public-access-block-off", "tf-aws-s3-public-acl")])
def test_a_public_acl_on_a_bucket_without_its_access_block_is_labelled_as_the_oracle_finds_it(order) -> None:
    """Each edit alone is one rule; together they make Checkov's CKV_AWS_379 fire on the ACL resource too, which
    the edit that comes second declares (a generated item drew both once and failed its self-check)."""
    from security_verifiers.engines.oracle import get_oracle

    seed = next(s for s in range(50) if TF_TEMPLATES["aws_audit"](random.Random(s)).resources("aws_s3_bucket_acl"))
    base = TF_TEMPLATES["aws_audit"](random.Random(seed))
    bucket = "aws_s3_bucket." + base.resources("aws_s3_bucket_acl")[0].address.split(".", 1)[1]
    injected: set[tuple[str, str]] = set()
    for rule_id in order:
        operator = operators("terraform")[rule_id]
        operator.apply(base, bucket, random.Random(0))
        injected |= set(operator.injected(base, bucket))
    acl = "aws_s3_bucket_acl." + bucket.split(".", 1)[1]
    assert ("tf-aws-s3-public-no-secure-transport", acl) in injected
    assert set(get_oracle().scan("terraform", base.render()).keys) == injected


def test_self_check_catches_a_wrong_target(small) -> None:
    positive = next(i for i in small if i.target["mutations"])
    clean = next(i for i in small if not i.target["mutations"])
    forged = positive.model_copy(update={"target": {**positive.target, "mutations": []}})
    lying = clean.model_copy(update={"target": {**clean.target, "mutations": [
        {"rule_id": "k8s-host-pid", "resource": "Deployment/nope"}]}})
    problems = self_check([forged, lying])
    assert any("unexpected finding" in p for p in problems)
    assert any("not found by the oracle" in p for p in problems)


def test_bases_are_rendered_in_canonical_style() -> None:
    rng = random.Random(0)
    for name, build in TF_TEMPLATES.items():
        text = build(rng).render()
        parse_terraform(text)
        assert text.endswith("}\n") and "\t" not in text and "\n\n\n" not in text, name
        assert all((len(line) - len(line.lstrip(" "))) % 2 == 0 for line in text.splitlines()), name
    for name, build in K8S_TEMPLATES.items():
        objects = parse_kubernetes(build(rng).render())
        assert objects and all(o.namespace or o.kind in ("Namespace", "ClusterRole", "ClusterRoleBinding")
                               for o in objects), name


def test_hcl_renderer_and_fake_secrets() -> None:
    block = Block("resource", ("aws_x", "y"), [("a", "b"), ("n", 3), ("on", True), ("l", ["p", ref("var.q")]),
                                               ("m", {"k": "v", "x.y": 1}), Block("inner", (), [("z", False)])])
    assert render_hcl([block]) == ('resource "aws_x" "y" {\n  a = "b"\n  n = 3\n  on = true\n  l = ["p", var.q]\n'
                                   '  m = {\n    k = "v"\n    "x.y" = 1\n  }\n  inner {\n    z = false\n  }\n}\n')
    rng = random.Random(1)
    key = fake_aws_key_id(rng)
    assert key.startswith("AKIA") and len(key) == 20 and key.isupper() and key != "AKIAIOSFODNN7EXAMPLE"
    pem = fake_pem(rng)
    assert "PRIVATE KEY-----" in pem.splitlines()[0] and heredoc(pem).text.startswith("<<-EOT\n-----BEGIN")


# --------------------------------------------------------------------------------------------------
# Public set
# --------------------------------------------------------------------------------------------------
def test_committed_public_set_matches_its_manifest() -> None:
    assert MANIFEST["generator_version"] == GENERATOR_VERSION
    for split, n in PUBLIC_SIZES.items():
        entry = MANIFEST["splits"][split]
        dataset = read_jsonl(DATA_DIR / entry["file"], split, expected_hash=entry["hash"])
        assert len(dataset) == entry["n"] == n and entry["seed"] == PUBLIC_SEED and dataset.splits == (split,)


def test_build_reproduces_the_committed_files(rebuilt: Path) -> None:
    for name in ("manifest.json", "test.jsonl", "DATA_CARD.md"):
        assert (rebuilt / name).read_bytes() == (DATA_DIR / name).read_bytes(), name
    card = (DATA_DIR / "DATA_CARD.md").read_text()
    assert "`test`: passed on 150 items" in card and MANIFEST["splits"]["test"]["hash"] in card
