"""E2 generator, Kubernetes side: secure bases that the whole oracle (Rego, every mapped Checkov check, semgrep)
finds clean, and mutation operators that each inject exactly what they declare, alone and combined.

Every operator is applied alone to *every* template where it has a target (not just one, as the showcase does),
because the interactions that break precision (an image digest that also satisfies the pull-policy check, a
NetworkPolicy that covers every pod, a one-rule Role that Checkov's graph checks can read) differ per template.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from security_verifiers.engines.configs import inventory, parse_kubernetes
from security_verifiers.engines.findings import catalog
from security_verifiers.envs.config_audit.generation.generator import Slot, draft, label, self_check
from security_verifiers.envs.config_audit.generation.mutations import injectable_rules, operators
from security_verifiers.envs.config_audit.generation.mutations_k8s_graph import rbac_graph_findings, unselected_pods
from security_verifiers.envs.config_audit.generation.templates_k8s import K8S_TEMPLATES
from security_verifiers.envs.config_audit.scoring import inventory_preserved

SEEDS = range(4)


@pytest.fixture(scope="module")
def oracle() -> Any:
    oracle_module = pytest.importorskip("security_verifiers.engines.oracle")
    try:
        return oracle_module.get_oracle()
    except oracle_module.EngineUnavailable as err:  # pragma: no cover - depends on the installation
        pytest.skip(f"the oracle's engines are not available: {err}")


# --------------------------------------------------------------------------------------------------
# Bases
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(K8S_TEMPLATES))
def test_bases_are_valid_and_clean_under_the_whole_oracle(name: str, oracle: Any) -> None:
    texts = [K8S_TEMPLATES[name](random.Random(seed)).render() for seed in SEEDS]
    for seed, result in zip(SEEDS, oracle.scan_many([("kubernetes", t) for t in texts]), strict=True):
        assert result.valid, (seed, result.validation_errors)
        assert not result.findings, (seed, sorted(result.keys))


@pytest.mark.parametrize("name", sorted(K8S_TEMPLATES))
def test_bases_are_deterministic_and_hardened(name: str) -> None:
    base = K8S_TEMPLATES[name](random.Random(7))
    assert base.render() == K8S_TEMPLATES[name](random.Random(7)).render()
    for obj in parse_kubernetes(base.render()):
        spec = obj.pod_spec
        if spec is None:
            continue
        assert spec["securityContext"]["runAsUser"] >= 10000
        for container in obj.containers():
            image = container["image"]
            repo, _, digest = image.partition("@sha256:")
            assert len(digest) == 64 and int(digest, 16) >= 0 and ":" in repo.rsplit("/", 1)[-1], image
            assert container["imagePullPolicy"] == "Always"
            assert not any("secretKeyRef" in (e.get("valueFrom") or {}) for e in container.get("env") or [])
            assert "envFrom" not in container
    assert unselected_pods(base.docs) == []


def test_digests_differ_between_bases() -> None:
    images = [c["image"] for seed in SEEDS for o in parse_kubernetes(K8S_TEMPLATES["web_app"](
        random.Random(seed)).render()) for c in o.containers()]
    digests = [i.split("@", 1)[1] for i in images]
    assert len(set(digests)) == len(digests)


# --------------------------------------------------------------------------------------------------
# Operators alone
# --------------------------------------------------------------------------------------------------
def _applications() -> list[tuple[str, str, int]]:
    """(rule, template, seed) for every operator and every template where it has a target (first seed that has)."""
    out = []
    for rule, op in sorted(operators("kubernetes").items()):
        for name in sorted(K8S_TEMPLATES):
            seed = next((s for s in SEEDS if op.targets(K8S_TEMPLATES[name](random.Random(s)))), None)
            if seed is not None:
                out.append((rule, name, seed))
    return out


@pytest.fixture(scope="module")
def alone(oracle: Any) -> list[tuple[str, str, list[tuple[str, str]], str, str, Any]]:
    rows = []
    for rule, name, seed in _applications():
        base = K8S_TEMPLATES[name](random.Random(seed))
        broken = base.copy()
        op = operators("kubernetes")[rule]
        rng = random.Random(f"{rule}/{name}/{seed}")
        resource = rng.choice(op.targets(broken))
        op.apply(broken, resource, rng)
        rows.append((rule, name, op.injected(broken, resource), base.render(), broken.render()))
    results = oracle.scan_many([("kubernetes", row[4]) for row in rows])
    return [(*row, result) for row, result in zip(rows, results, strict=True)]


def test_every_operator_alone_injects_exactly_what_it_declares(alone: list[Any]) -> None:
    problems = []
    for rule, name, injected, fixed, text, result in alone:
        if not result.valid:
            problems.append(f"{rule} on {name}: invalid {result.validation_errors[:2]}")
        if result.keys != set(injected):
            problems.append(f"{rule} on {name}: missing {sorted(set(injected) - result.keys)}, "
                            f"unexpected {sorted(result.keys - set(injected))}")
        if inventory_preserved(inventory("kubernetes", text), inventory("kubernetes", fixed)):
            problems.append(f"{rule} on {name}: the base does not hold every object of the text")
    assert not problems, "\n".join(problems)


def test_every_operator_has_a_target_in_some_template() -> None:
    assert {rule for rule, _, _ in _applications()} == set(operators("kubernetes"))


def test_at_least_22_checkov_only_rules_are_injectable() -> None:
    rules = catalog()
    checkov_only = {r for r in injectable_rules("kubernetes") if rules[r].engine == "checkov"}
    assert len(checkov_only) >= 22, sorted(checkov_only)
    assert all("kubernetes" in rules[r].platforms for r in injectable_rules("kubernetes"))


# --------------------------------------------------------------------------------------------------
# Operators combined
# --------------------------------------------------------------------------------------------------
def test_combined_mutations_pass_the_self_check(oracle: Any) -> None:
    rng = random.Random(20240611)
    usage: Counter[str] = Counter()
    drafts = [draft(random.Random(rng.getrandbits(64)), "dev", Slot("kubernetes", False, None), usage)
              for _ in range(90)]
    assert all(1 <= len({r for r, _ in d.mutations}) for d in drafts)
    items = label(drafts, oracle)
    assert self_check(items, oracle) == []
    assert len(usage) >= 40  # the 90 items spread over most rules


# --------------------------------------------------------------------------------------------------
# The graph-check predictions (Checkov quirks included)
# --------------------------------------------------------------------------------------------------
ROLE = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "r", "namespace": "ns"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps", "secrets"], "verbs": ["get", "list"]}]}
BINDING = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
           "metadata": {"name": "b", "namespace": "ns"},
           "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
           "subjects": [{"kind": "ServiceAccount", "name": "app", "namespace": "ns"}]}


def _two_rules(role: dict[str, Any]) -> dict[str, Any]:
    extra = {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get"]}
    return {**role, "rules": [*role["rules"], extra]}


@pytest.mark.parametrize(("docs", "expected"), [
    ([ROLE, BINDING], {("k8s-rbac-sa-can-read-all-secrets", "RoleBinding/b")}),
    ([_two_rules(ROLE), BINDING], set()),  # Checkov reads rules.resources of one-rule roles only
    ([{**ROLE, "rules": [{**ROLE["rules"][0], "resourceNames": ["tls"]}]}, BINDING], set()),
    ([ROLE, {**BINDING, "subjects": [{"kind": "User", "name": "alice"}]}], set()),
    ([ROLE, {**BINDING, "roleRef": {**BINDING["roleRef"], "name": "other"}}], set()),
], ids=["one-rule", "two-rules", "resource-names", "user-subject", "unbound"])
def test_rbac_graph_prediction_matches_the_oracle(docs: list[dict[str, Any]], expected: set[tuple[str, str]],
                                                  oracle: Any) -> None:
    from security_verifiers.envs.config_audit.generation.templates_k8s import render_yaml

    assert rbac_graph_findings(docs) == expected
    found = {k for k in oracle.scan("kubernetes", render_yaml(docs)).keys if k[0].startswith("k8s-rbac-sa-")}
    assert found == expected


def _pod(name: str, labels: dict[str, str] | None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "ns"} | ({"labels": labels} if labels else {})
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]}}


def _policy(selector: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": "n", "namespace": "elsewhere"}, "spec": {"podSelector": selector}}


CRON = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c", "namespace": "ns"},
        "spec": {"schedule": "0 1 * * *", "jobTemplate": {"spec": {"template": {
            "metadata": {"labels": {"app": "c"}},
            "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox:1.36"}]}}}}}}


@pytest.mark.parametrize(("docs", "expected"), [
    ([_pod("p", {"app": "p"}), _pod("q", None), CRON], ["Pod/p", "Pod/q"]),  # a CronJob is not unfolded
    ([_pod("p", {"app": "p"}), _pod("q", None), _policy({})], []),  # every pod, whatever its namespace
    ([_pod("p", {"app": "p"}), _pod("q", None), _policy({"matchLabels": {"app": "x"}})], ["Pod/p"]),
    ([_pod("p", {"app": "p"}), _policy({"matchLabels": {"app": "p"}})], []),
], ids=["no-policy", "select-all", "other-labels", "matching"])
def test_networkpolicy_prediction_matches_the_oracle(docs: list[dict[str, Any]], expected: list[str],
                                                     oracle: Any) -> None:
    from security_verifiers.envs.config_audit.generation.templates_k8s import render_yaml

    assert unselected_pods(docs) == expected
    found = sorted(r for rule, r in oracle.scan("kubernetes", render_yaml(docs)).keys
                   if rule == "k8s-pod-no-networkpolicy")
    assert found == expected
