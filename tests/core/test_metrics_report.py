"""The typed metrics report: the constant floor is one number, and old summaries still read."""

import pytest
from pydantic import ValidationError

from security_verifiers.core.metrics_report import ConstantPolicy, MetricsReport

FLOOR = ConstantPolicy(policy="always-abstain", answer="{}", reward_mean=0.89, note="A note.")


@pytest.mark.parametrize(("metrics", "constant", "ok"), [
    ({"constant_reward": 0.89}, FLOOR, True),  # the two agree
    ({}, None, True),  # neither: a summary written before the floor existed
    ({"constant_reward": 0.5}, FLOOR, False),  # two different floors
    ({}, FLOOR, False),  # the policy without its flat metric
    ({"constant_reward": 0.89}, None, False),  # the flat metric without its policy
])
def test_the_flat_constant_reward_and_the_policy_agree(metrics: dict, constant, ok: bool) -> None:
    def build() -> MetricsReport:
        return MetricsReport(metrics=metrics, constant_policy=constant)

    if ok:
        assert build().constant_policy == constant
    else:
        with pytest.raises(ValidationError, match="constant_reward"):
            build()


def test_from_summary_reads_the_floor_and_summaries_without_one() -> None:
    stored = MetricsReport(metrics={"constant_reward": 0.89}, constant_policy=FLOOR).stored()
    assert MetricsReport.from_summary(stored).constant_policy == FLOOR
    assert MetricsReport.from_summary({"metrics": {"reward_mean": 0.5}}).constant_policy is None
