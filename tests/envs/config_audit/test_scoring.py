"""Pure parts of the config-audit reward: weighted detection, fix score, inventory preservation."""

import pytest

from security_verifiers.engines.findings import Finding, Severity
from security_verifiers.envs.config_audit.scoring import inventory_preserved, score_detection, score_fix


def f(rule: str, resource: str, severity: Severity) -> Finding:
    return Finding(rule_id=rule, resource=resource, severity=severity)


TRUTH = [f("k8s-privileged-container", "Deployment/web", Severity.CRITICAL),
         f("k8s-missing-cpu-request", "Deployment/web", Severity.LOW)]


@pytest.mark.parametrize(
    ("claims", "expected"),
    [
        ([("k8s-privileged-container", "Deployment/web"), ("k8s-missing-cpu-request", "Deployment/web")], 1.0),
        # duplicates add nothing
        ([("k8s-privileged-container", "Deployment/web")] * 5 + [("k8s-missing-cpu-request", "Deployment/web")], 1.0),
        # missing the critical one costs far more than missing the low one
        ([("k8s-missing-cpu-request", "Deployment/web")], 2 * 1 / (2 * 1 + 5)),
        ([("k8s-privileged-container", "Deployment/web")], 2 * 5 / (2 * 5 + 1)),
        # a false positive weighs its rule's catalog severity (k8s-host-pid is high = 3)
        ([*[(t.rule_id, t.resource) for t in TRUTH], ("k8s-host-pid", "Deployment/web")], 2 * 6 / (2 * 6 + 3)),
        # an invented rule id weighs as a critical one
        ([*[(t.rule_id, t.resource) for t in TRUTH], ("made-up", "Deployment/web")], 2 * 6 / (2 * 6 + 5)),
        # the right rule on the wrong resource is both a false positive and a miss
        ([("k8s-privileged-container", "Deployment/api"), ("k8s-missing-cpu-request", "Deployment/web")],
         2 * 1 / (2 * 1 + 5 + 5)),
        ([], 0.0),  # silence on a dirty file
    ],
)
def test_detection_is_severity_weighted_f1(claims, expected) -> None:
    assert score_detection(claims, TRUTH).score == pytest.approx(expected)


def test_fix_score_counts_fixed_minus_new() -> None:
    new = f("k8s-host-pid", "Deployment/web", Severity.HIGH)
    assert score_fix(TRUTH, [])[-1] == 1.0  # everything fixed
    assert score_fix(TRUTH, [TRUTH[1]])[-1] == pytest.approx(5 / 6)  # critical fixed, low left
    assert score_fix(TRUTH, [new])[-1] == pytest.approx((6 - 3) / 6)  # all fixed, one high introduced
    assert score_fix(TRUTH, TRUTH + [new])[-1] == 0.0  # nothing fixed and worse: clipped at 0
    assert score_fix([], [])[-1] == 1.0 and score_fix([], [new])[-1] == 0.0  # clean file


@pytest.mark.parametrize(
    ("after", "ok"),
    [
        ({"Deployment/web": [("web", "nginx")], "Service/web": []}, True),  # unchanged
        ({"Deployment/web": [("web", "nginx")], "Service/web": [], "NetworkPolicy/deny": []}, True),  # added
        ({"Deployment/web": [("web", "nginx")]}, False),  # removed a resource
        ({"Deployment/web-renamed": [("web", "nginx")], "Service/web": []}, False),  # renamed
        ({"StatefulSet/web": [("web", "nginx")], "Service/web": []}, False),  # kind changed
        ({"Deployment/web": [], "Service/web": []}, False),  # containers stripped
        ({"Deployment/web": [("web", "busybox")], "Service/web": []}, False),  # image swapped
    ],
)
def test_inventory_preservation(after, ok: bool) -> None:
    before = {"Deployment/web": [("web", "nginx")], "Service/web": []}
    assert (inventory_preserved(before, after) is None) == ok
