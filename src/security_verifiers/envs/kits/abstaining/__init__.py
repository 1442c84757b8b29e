"""The abstaining-classifier kit: a binary label with Abstain and a stated probability, scored by a cost profile
and the Brier rule; its metrics, plots and Bayes-action baselines (E1 network-logs and E4 phishing).

An environment built on it derives from :class:`AbstainingEnvironment` and names its :class:`Labels` (and so
gets the kit's metric declarations, which the one metrics builder turns into the report, its plots and its reward
weights), subclasses :class:`AbstainingConfig` for its config, scores with :func:`score_answer`, and lists its
baselines with :func:`baseline_factories` (its own probability models
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
from security_verifiers.envs.kits.abstaining.environment import AbstainingEnvironment
from security_verifiers.envs.kits.abstaining.metrics import classifier_breakdowns
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
    "AbstainingEnvironment",
    "BayesBaseline",
    "ClassifierOutcome",
    "ConstantBaseline",
    "Labels",
    "ReferenceBaseline",
    "baseline_factories",
    "bayes_answer",
    "classifier_breakdowns",
    "classifier_plots",
    "constant_baseline_names",
    "score_answer",
]
