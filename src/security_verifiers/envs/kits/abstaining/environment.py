"""The base of an environment built on the abstaining kit (E1, E4, the template): it names its :class:`Labels`,
and gets the kit's metric declarations (flat metrics, bootstrap statistics, breakdowns by family, split and
difficulty, its costs echoed with the run's metrics, the constant floor), its plots and its reward weights, so
that each such environment states only what is its own (E4 adds its evidence metrics and floor)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from security_verifiers.core.metrics_builder import Statistic
from security_verifiers.core.metrics_report import ConstantPolicy
from security_verifiers.core.outcome import Outcome
from security_verifiers.envs.base import Environment
from security_verifiers.envs.kits.abstaining import metrics as kit_metrics
from security_verifiers.envs.kits.abstaining.plots import classifier_plots
from security_verifiers.envs.kits.abstaining.reward import AbstainingConfig, ClassifierOutcome, Labels


class AbstainingEnvironment(Environment):
    """An abstaining classifier's environment. A subclass sets :attr:`labels` and
    ``breakdowns = classifier_breakdowns(LABELS)`` (or its own), and its config derives from
    :class:`AbstainingConfig`."""

    labels: ClassVar[Labels]
    config: AbstainingConfig
    outcome_model: ClassVar[type[Outcome]] = ClassifierOutcome

    def component_weights(self) -> dict[str, float]:
        return self.config.component_weights()

    def flat_metrics(self, outcomes: Sequence[Any]) -> dict[str, Any]:
        return kit_metrics.flat_metrics(outcomes)

    def interval_statistics(self, outcomes: Sequence[Any]) -> Mapping[str, Statistic]:
        return kit_metrics.interval_statistics(outcomes)

    def run_metrics(self) -> dict[str, Any]:
        return kit_metrics.cost_metrics(self.config)

    def constant_policy(self, outcomes: Sequence[Any]) -> ConstantPolicy | None:
        return kit_metrics.constant_policy(outcomes, self.config, self.labels)

    def plots(self, outcomes: Sequence[dict[str, Any]], out_dir: Path) -> list[Path]:
        return classifier_plots(self.typed_outcomes(outcomes), self.labels, out_dir)
