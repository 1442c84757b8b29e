"""E2's metrics: headline values worked out by hand, and the typed outcome contract they read."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from security_verifiers.envs.config_audit.metrics import config_audit_metrics, point_metrics
from security_verifiers.envs.config_audit.outcome import AuditOutcome


def base(**item: Any) -> dict[str, Any]:
    fields = {"platform": "kubernetes", "cloud": None, "clean": False, "n_oracle": 2,
              "oracle_rules": ["k8s-psp-allows-host-pid", "k8s-psp-allows-privileged"], "oracle_weight": 6.0,
              "tool_calls": 0, "tool_seconds": 0.0, "over_budget": 0}
    return {**fields, **item}


def valid(**fields: Any) -> dict[str, Any]:
    answer = {"valid": True, "reward": 0.5, "patch_present": False, "tp": 1, "fp": 1, "fn": 1, "tp_w": 3.0,
              "fp_w": 1.0, "fn_w": 3.0, "detection": 0.6,
              "tp_rules": ["k8s-psp-allows-host-pid"], "fp_rules": ["k8s-default-namespace"],
              "fn_rules": ["k8s-psp-allows-privileged"], "claimed": 2, "patch_applied": False, "patch_valid": False,
              "patch_inventory_ok": False, "patch_fixed_w": 0.0, "patch_original_w": 6.0, "patch_new_w": 0.0,
              "patch_n_fixed": 0, "patch_n_new": 0, "patch_n_undetermined": 0, "patch_error": None,
              "patch_score": 0.0}
    return {**base(), **answer, **fields}


def invalid(**item: Any) -> dict[str, Any]:
    return AuditOutcome(**base(**item), valid=False, reward=0.0, patch_present=False).stored()


def test_headline_metrics_by_hand() -> None:
    patched = valid(patch_present=True, patch_applied=True, patch_valid=True, patch_inventory_ok=True,
                    patch_fixed_w=3.0, patch_n_fixed=1, patch_score=0.5, reward=0.55)
    outcomes = [valid(), patched, invalid()]
    m = point_metrics(outcomes)
    # tp 2, fp 2, fn 1 + 1 + 2 (the invalid answer missed both of its findings); weighted: 6, 2, 3 + 3 + 6.
    assert m["precision"] == pytest.approx(2 / 4) and m["recall"] == pytest.approx(2 / 6)
    assert m["f1"] == pytest.approx(2 * 2 / (2 * 2 + 2 + 4))
    assert m["f1_weighted"] == pytest.approx(2 * 6 / (2 * 6 + 2 + 12))
    assert m["fix_rate"] == pytest.approx(3.0 / 18.0)
    assert m["patch_rate"] == pytest.approx(1 / 3) and m["patch_valid_rate"] == 1.0
    assert m["format_valid_rate"] == pytest.approx(2 / 3)
    assert m["reward_mean"] == pytest.approx((0.5 + 0.55 + 0.0) / 3)


def test_a_policy_that_claims_nothing_has_f1_zero_with_an_interval() -> None:
    nothing = valid(tp=0, fp=0, fn=2, tp_w=0.0, fp_w=0.0, fn_w=6.0, detection=0.0, tp_rules=[], fp_rules=[],
                    fn_rules=["k8s-psp-allows-host-pid", "k8s-psp-allows-privileged"], claimed=0)
    report = config_audit_metrics([nothing] * 4, [f"i{k}" for k in range(4)])
    assert report["metrics"]["f1_weighted"] == 0.0 and report["intervals"]["f1_weighted"] == [0.0, 0.0]


def test_clean_items_count_false_alarms() -> None:
    clean = base(clean=True, n_oracle=0, oracle_rules=[], oracle_weight=0.0)
    quiet = {**valid(), **clean, "tp": 0, "fp": 0, "fn": 0, "tp_w": 0.0, "fp_w": 0.0, "fn_w": 0.0, "claimed": 0,
             "tp_rules": [], "fp_rules": [], "fn_rules": []}
    noisy = {**quiet, "fp": 1, "fp_w": 1.0, "claimed": 1, "fp_rules": ["k8s-default-namespace"]}
    m = point_metrics([quiet, noisy])
    assert m["clean_pass_rate"] == 0.5 and m["false_positive_rate_clean"] == 0.5


def test_per_rule_rows_carry_severity_and_count_invalid_answers_as_misses() -> None:
    rows = config_audit_metrics([invalid(), valid()])["breakdowns"]["rule"]
    pid, privileged = rows["k8s-psp-allows-host-pid"], rows["k8s-psp-allows-privileged"]
    assert privileged["fn"] == 2 and pid["tp"] == 1 and pid["fn"] == 1
    assert rows["k8s-psp-allows-privileged"]["severity"] in {"low", "medium", "high", "critical"}


@pytest.mark.parametrize("broken", [
    {k: v for k, v in valid().items() if k != "fix_rate" and k != "patch_fixed_w"},  # a key the metrics read
    {**valid(), "patch_fixed": 1.0},  # a misspelt key
    {**invalid(), "tp": 1},  # an invalid answer cannot have detected anything
    {**valid(), "platform": "docker"},
])
def test_an_outcome_that_breaks_the_contract_is_an_error_not_a_default(broken: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        point_metrics([broken])


def test_an_invalid_answer_is_stored_without_detection_or_patch_fields() -> None:
    stored = invalid()
    assert "tp" not in stored and "patch_score" not in stored and stored["valid"] is False
    assert AuditOutcome.model_validate(stored).counts().fn == 2


def missed(rule: str, n: int, found: int = 0) -> list[dict[str, Any]]:
    """``n`` items with one finding of ``rule`` each, the first ``found`` of them detected."""
    return [valid(oracle_rules=[rule], n_oracle=1, tp=int(k < found), fp=0, fn=int(k >= found),
                  tp_rules=[rule] if k < found else [], fp_rules=[], fn_rules=[] if k < found else [rule])
            for k in range(n)]


def test_worst_rules_need_enough_findings_and_put_the_graver_first() -> None:
    outcomes = [*missed("cfg-hardcoded-aws-key", 3),  # critical, 0/3: listed first
                *missed("k8s-low-uid", 4),  # low, 0/4: same recall, milder, after it
                *missed("k8s-host-pid", 6, found=3),  # high, 3/6
                *missed("k8s-host-network", 2),  # high, 0/2: too few findings to be listed
                *missed("k8s-host-ipc", 5, found=5)]  # all found: nothing to list
    report = config_audit_metrics(outcomes)
    worst = report["breakdowns"]["worst_rules"]
    assert list(worst) == ["cfg-hardcoded-aws-key", "k8s-low-uid", "k8s-host-pid"]
    assert worst["cfg-hardcoded-aws-key"] == {"severity": "critical", "n_findings": 3, "tp": 0, "fn": 3, "recall": 0.0,
                                              "precision": None, "few_findings": True}
    # The severity rows count findings too, and flag a severity with fewer than ten.
    severity = report["breakdowns"]["severity"]
    assert severity["critical"]["recall"] == 0.0 and severity["critical"]["n_findings"] == 3
    assert severity["critical"]["few_findings"] is True and severity["high"]["n_findings"] == 6 + 2 + 5
    assert severity["high"]["few_findings"] is False and severity["high"]["recall"] == pytest.approx(8 / 13)


def test_platform_rows_carry_a_reward_interval_and_flag_few_items() -> None:
    outcomes = [valid(reward=0.2), valid(reward=0.4), valid(reward=0.6),
                *[valid(platform="terraform", cloud="aws", reward=0.5)] * 12]
    rows = config_audit_metrics(outcomes, [f"i{k}" for k in range(15)])["breakdowns"]
    kubernetes, terraform = rows["platform"]["kubernetes"], rows["platform"]["terraform"]
    assert (kubernetes["n"], kubernetes["few_items"], terraform["few_items"]) == (3, True, False)
    assert kubernetes["reward_ci"][0] <= 0.4 <= kubernetes["reward_ci"][1] and terraform["reward_ci"] == [0.5, 0.5]
    assert rows["cloud"]["aws"]["few_items"] is False


def test_headline_intervals_bracket_their_estimates() -> None:
    clean = base(clean=True, n_oracle=0, oracle_rules=[], oracle_weight=0.0)
    noisy = {**valid(), **clean, "tp": 0, "fn": 0, "tp_w": 0.0, "fn_w": 0.0, "tp_rules": [], "fn_rules": []}
    patched = valid(patch_present=True, patch_applied=True, patch_valid=True, patch_inventory_ok=True,
                    patch_fixed_w=3.0, patch_n_fixed=1, patch_score=0.5, reward=0.55, tool_calls=2)
    outcomes = [valid(), patched, invalid(), noisy, {**patched, "patch_inventory_ok": False}] * 4
    report = config_audit_metrics(outcomes, [f"i{k}" for k in range(len(outcomes))])
    for key in ("reward_mean", "f1_weighted", "precision_weighted", "recall_weighted", "fix_rate",
                "patch_valid_rate", "false_positive_rate_clean", "tool_calls_mean"):
        lo, hi = report["intervals"][key]
        assert lo <= report["metrics"][key] <= hi, key


def test_the_empty_answer_floor_is_what_the_scorer_gives_the_empty_answer() -> None:
    # Thirty test items of both platforms, clean and not: the floor computed from another policy's outcomes (one
    # that claims a rule on every file) equals the mean reward the scorer gives the empty answer on them.
    from security_verifiers.core.types import Message, Transcript
    from security_verifiers.envs.config_audit import ConfigAudit

    env = ConfigAudit()
    items = list(env.dataset("test").items)[:30]

    def scored(reply: str) -> list:
        return env.score_many(items, [Transcript(messages=[Message(role="assistant", content=reply)])] * len(items))

    noisy = scored('{"findings": [{"rule_id": "k8s-host-pid", "resource": "Pod/x"}], "patch": ""}')
    constant = env.metrics([s.outcome for s in noisy])["constant_policy"]
    empty = scored(constant["answer"])
    assert any(o.outcome["clean"] for o in noisy) and not all(o.outcome["clean"] for o in noisy)
    assert constant["policy"] == "empty-answer"
    assert constant["reward_mean"] == pytest.approx(sum(s.reward for s in empty) / len(empty), abs=1e-12)
