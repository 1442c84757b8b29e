"""config-audit's report figures: every axis labelled, the severity legend outside the bars."""

import pytest

from security_verifiers.envs.config_audit.outcome import read_outcomes
from security_verifiers.envs.config_audit.plots import config_audit_plots, patch_funnel_figure, rule_recall_figure
from tests.envs.config_audit.test_metrics import invalid, missed, valid
from tests.helpers import figure_problems

OUTCOMES = read_outcomes([*missed("cfg-hardcoded-aws-key", 3), *missed("k8s-low-uid", 4, found=4),
                          *missed("k8s-host-pid", 6, found=3), valid(), invalid()])


@pytest.mark.parametrize("outcomes", [OUTCOMES, OUTCOMES[-1:], []], ids=["mixed", "only-invalid", "none"])
@pytest.mark.parametrize("figure", [rule_recall_figure, patch_funnel_figure])
def test_figures_label_every_axis_and_keep_legends_off_the_axes(figure, outcomes) -> None:
    assert figure_problems(figure(outcomes)) == []


def test_the_recall_legend_names_the_severities_shown() -> None:
    (legend,) = rule_recall_figure(OUTCOMES).legends
    assert [t.get_text() for t in legend.get_texts()] == ["low", "high", "critical"]


def test_plots_are_written(tmp_path) -> None:
    paths = config_audit_plots(OUTCOMES, tmp_path)
    assert [p.name for p in paths] == ["rule_recall.png", "patch_funnel.png"]
    assert all(p.read_bytes()[:4] == b"\x89PNG" for p in paths)
