"""The abstaining kit's report figures: every axis labelled, no legend over a curve, for any shape of answers."""

import json

import pytest

from security_verifiers.envs.kits.abstaining.plots import classifier_figures
from tests.envs.kits.abstaining.test_kit import PHISHING, score
from tests.helpers import figure_problems


def reply(label: str, p: float) -> str:
    return json.dumps({"label": label, "p_phishing": p})


# A miscalibrated model whose curve runs through the upper left corner, where the legend used to sit: it states
# 0.1 on phishing and 0.9 on legitimate mail.
BACKWARDS = [score(reply("Legitimate", 0.1), 1).outcome, score(reply("Phishing", 0.9), 0).outcome] * 5
MIXED = [score(reply("Phishing", 0.8), 1).outcome, score(reply("Abstain", 0.4), 0).outcome,
         score("not an answer", 1).outcome]
ONLY_INVALID = [score("not an answer", 0).outcome]


@pytest.mark.parametrize("outcomes", [BACKWARDS, MIXED, ONLY_INVALID], ids=["backwards", "mixed", "only-invalid"])
def test_figures_label_every_axis_and_keep_legends_off_the_axes(outcomes) -> None:
    for name, fig in classifier_figures(outcomes, PHISHING).items():
        assert figure_problems(fig) == [], name


def test_the_checker_catches_a_legend_inside_the_axes_and_a_missing_label() -> None:
    fig = classifier_figures(BACKWARDS, PHISHING)["risk_coverage.png"]
    ax = fig.axes[0]
    ax.legend(loc="upper left")
    ax.set_xlabel("")
    assert set(figure_problems(fig)) == {"a legend covers axes 0", "axes 0: no x label"}
