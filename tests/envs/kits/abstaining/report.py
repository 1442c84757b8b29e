"""The abstaining kit's metrics report, wired as :meth:`Environment.metrics` wires an environment's declarations
(the kit's flat metrics, bootstrap statistics, breakdowns, costs and floor into the one builder), for tests that
check the kit apart from any environment's config."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from security_verifiers.core.metrics_builder import build_metrics
from security_verifiers.envs.kits.abstaining import AbstainingConfig, ClassifierOutcome, Labels
from security_verifiers.envs.kits.abstaining import metrics as kit_metrics


def classifier_metrics(outcomes: Sequence[Mapping[str, Any]], config: AbstainingConfig, labels: Labels,
                       items: Sequence[str] | None = None) -> dict[str, Any]:
    typed = ClassifierOutcome.read_all(outcomes)
    return build_metrics(typed, items, kit_metrics.flat_metrics, kit_metrics.interval_statistics,
                         kit_metrics.classifier_breakdowns(labels), kit_metrics.constant_policy(typed, config, labels),
                         run=kit_metrics.cost_metrics(config))
