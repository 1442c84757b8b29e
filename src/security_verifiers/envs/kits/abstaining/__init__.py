"""The abstaining-classifier kit: a binary label with Abstain and a stated probability, scored by a cost profile
and the Brier rule; its metrics, plots and Bayes-action baselines (E1 network-logs and E4 phishing).

An environment built on it declares its :class:`Labels`, subclasses :class:`AbstainingConfig` for its config,
scores with :func:`score_answer`, declares its metrics with :mod:`.metrics` (flat metrics, bootstrap statistics,
breakdowns, costs and floor, which the one metrics builder turns into the report) and plots with
:func:`classifier_plots`, and lists its baselines with :func:`baseline_factories` (its own probability models
subclass :class:`BayesBaseline`).
"""

from security_verifiers.envs.kits.abstaining.baselines import (
    BayesBaseline,
    ConstantBaseline,
    ReferenceBaseline,
    baseline_factories,
    bayes_answer,
    constant_baseline_names,
)
from security_verifiers.envs.kits.abstaining.plots import classifier_plots
from security_verifiers.envs.kits.abstaining.reward import (
    CALIBRATION,
    DECISION,
    AbstainingConfig,
    ClassifierOutcome,
    Labels,
    score_answer,
)

__all__ = [
    "CALIBRATION",
    "DECISION",
    "AbstainingConfig",
    "BayesBaseline",
    "ClassifierOutcome",
    "ConstantBaseline",
    "Labels",
    "ReferenceBaseline",
    "baseline_factories",
    "bayes_answer",
    "classifier_plots",
    "constant_baseline_names",
    "score_answer",
]
