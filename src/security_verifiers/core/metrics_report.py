"""The metrics of one run as a type: what every environment's ``metrics`` returns, and what the summary, the
report, the leaderboard and the terminal all render from, so a headline metric reads the same everywhere.

``metrics`` is flat (name -> number, ``None`` where undefined, e.g. F1 with nothing to find and nothing
claimed); ``intervals`` holds a 95% bootstrap interval for some of them (both ends ``None`` exactly when the
metric is undefined); ``breakdowns`` holds the same kind of numbers per group (platform, family, rule...).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

Number = float | int | None


def fmt(value: Any) -> str:
    """One table cell: floats to 4 decimals, ``None`` as a dash, a pair as an interval.

    >>> fmt(0.123456), fmt(None), fmt(3), fmt([0.1, 0.25])
    ('0.1235', '–', '3', '[0.1000, 0.2500]')
    """
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.4f}"
    if isinstance(value, list | tuple) and len(value) == 2:
        return f"[{fmt(value[0])}, {fmt(value[1])}]"
    return str(value)


class HeadlineRow(BaseModel):
    """One headline metric as every view shows it: key, direction, value and interval."""

    key: str
    higher_is_better: bool
    value: Number
    interval: tuple[Number, Number] | None

    @property
    def arrow(self) -> str:
        return "↑" if self.higher_is_better else "↓"


class MetricsReport(BaseModel):
    """Metrics, intervals and breakdowns of a set of outcomes (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    metrics: dict[str, Number] = Field(default_factory=dict)
    intervals: dict[str, tuple[Number, Number]] = Field(default_factory=dict)
    breakdowns: dict[str, dict[str, dict[str, Any]]] = Field(default_factory=dict)

    @classmethod
    def from_summary(cls, summary: Mapping[str, Any]) -> MetricsReport:
        """The report stored in a ``summary.json`` (its ``metrics``, ``intervals`` and ``breakdowns``)."""
        return cls.model_validate({k: summary.get(k) or {} for k in ("metrics", "intervals", "breakdowns")})

    def headline(self, keys: Sequence[tuple[str, bool]]) -> list[HeadlineRow]:
        """The rows of the headline metrics ``(key, higher_is_better)``, in that order."""
        return [HeadlineRow(key=key, higher_is_better=up, value=self.metrics.get(key),
                            interval=self.intervals.get(key)) for key, up in keys]

    def stored(self) -> dict[str, Any]:
        """The three parts as plain JSON values (intervals as lists), as ``summary.json`` keeps them."""
        return self.model_dump(mode="json")
