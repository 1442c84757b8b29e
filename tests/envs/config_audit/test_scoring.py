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


def inv(objects: dict[str, list[tuple[str, list[str], list[str]]]], declared: tuple[str, ...] = ()) -> dict:
    """An inventory from ``{resource: [(namespace, init images, main images)]}`` (container name = image)."""
    return {"objects": {r: [{"namespace": ns, "init": [[i, i] for i in init], "containers": [[c, c] for c in main]}
                            for ns, init, main in entries] for r, entries in objects.items()},
            "declared_namespaces": list(declared)}


WEB = ("default", [], ["docker.io/library/nginx"])
SVC = ("default", [], [])
BEFORE = inv({"Deployment/web": [WEB], "Service/web": [SVC]})


@pytest.mark.parametrize(
    ("after", "ok"),
    [
        (BEFORE, True),  # unchanged
        (inv({"Deployment/web": [WEB], "Service/web": [SVC], "NetworkPolicy/deny": [SVC]}), True),  # added
        (inv({"Deployment/web": [WEB]}), False),  # removed a resource
        (inv({"Deployment/web-renamed": [WEB], "Service/web": [SVC]}), False),  # renamed
        (inv({"StatefulSet/web": [WEB], "Service/web": [SVC]}), False),  # kind changed
        (inv({"Deployment/web": [("default", [], [])], "Service/web": [SVC]}), False),  # containers stripped
        # every container moved to initContainers, `containers: []`
        (inv({"Deployment/web": [("default", ["docker.io/library/nginx"], [])], "Service/web": [SVC]}), False),
        (inv({"Deployment/web": [("default", [], ["docker.io/library/busybox"])], "Service/web": [SVC]}), False),
        # the image re-pointed at another registry
        (inv({"Deployment/web": [("default", [], ["mirror.example.net/library/nginx"])], "Service/web": [SVC]}),
         False),
        # moved out of default into a namespace nobody declares: another object
        (inv({"Deployment/web": [("shop", *WEB[1:])], "Service/web": [SVC]}), False),
        # moved out of default into a namespace the patch declares (the fix of k8s-default-namespace)
        (inv({"Deployment/web": [("shop", *WEB[1:])], "Service/web": [SVC], "Namespace/shop": [SVC]},
             declared=("shop",)), True),
    ],
)
def test_inventory_preservation(after, ok: bool) -> None:
    assert (inventory_preserved(BEFORE, after) is None) == ok


def test_inventory_keeps_named_namespaces_and_same_named_objects() -> None:
    before = inv({"Role/app": [("a", [], []), ("b", [], [])]})
    assert inventory_preserved(before, before) is None
    # one of two same-named objects moved from one named namespace to another (declared): not the same object
    moved = inv({"Role/app": [("a", [], []), ("c", [], [])]}, declared=("c",))
    assert "moved from namespace b to c" in (inventory_preserved(before, moved) or "")
    # moving into a namespace the original already uses is allowed only out of default
    before = inv({"Role/app": [("default", [], [])], "Role/other": [("shop", [], [])]})
    after = inv({"Role/app": [("shop", [], [])], "Role/other": [("shop", [], [])]})
    assert inventory_preserved(before, after) is None
