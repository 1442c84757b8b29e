"""Whether a run's results hold every rollout its metadata promises: the status a report shows.

``metadata.json`` says ``finished`` once the runner is done, but the results file can still fall short
afterwards (a final line cut by a full disk or a copy that stopped) or a run may have been stopped or killed.
A report over fewer rollouts than the dataset asks for must say so, or its metrics read as final.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from security_verifiers.core.types import RolloutRecord

#: The status of a run whose metadata says ``finished`` but whose results lack rollouts or hold a cut line.
INCOMPLETE = "incomplete"


@dataclass(frozen=True)
class RunStatus:
    """A run's status as the report states it, and the counts behind it."""

    status: str | None
    expected_rollouts: int | None
    recorded_rollouts: int
    cut_line: int | None

    @property
    def detail(self) -> str | None:
        """Why the run is not complete, in one line (``None`` when it is).

        >>> RunStatus("incomplete", 100, 99, 100).detail
        '1 cut line in results.jsonl (line 100); 99 of 100 rollouts recorded'
        >>> RunStatus("finished", 100, 100, None).detail is None
        True
        """
        parts = []
        if self.cut_line is not None:
            parts.append(f"1 cut line in results.jsonl (line {self.cut_line})")
        if self.expected_rollouts is not None and self.recorded_rollouts < self.expected_rollouts:
            parts.append(f"{self.recorded_rollouts} of {self.expected_rollouts} rollouts recorded")
        return "; ".join(parts) or None

    @property
    def missing_rollouts(self) -> int | None:
        """Rollouts the dataset asks for that the results lack (``None`` when the metadata does not say)."""
        if self.expected_rollouts is None:
            return None
        return max(self.expected_rollouts - self.recorded_rollouts, 0)

    @property
    def complete(self) -> bool:
        """The run ended on its own and holds every rollout (a stopped, killed or cut run is not complete)."""
        return self.status == "finished"

    def completeness(self) -> dict[str, Any]:
        """The counts as ``summary.json`` carries them (top-level keys, read by the report and the leaderboard)."""
        return {"complete": self.complete, "expected_rollouts": self.expected_rollouts,
                "recorded_rollouts": self.recorded_rollouts, "missing_rollouts": self.missing_rollouts,
                "cut_line": self.cut_line}


def expected_rollouts(metadata: dict[str, Any]) -> int | None:
    """Items × samples, as the run's metadata records them (``None`` when it records no item count).

    >>> expected_rollouts({"dataset": {"n": 50}, "run": {"samples": 2}}), expected_rollouts({})
    (100, None)
    """
    n = (metadata.get("dataset") or {}).get("n")
    if not isinstance(n, int):
        return None
    samples = (metadata.get("run") or {}).get("samples", 1)  # RunConfig's default, for metadata written by hand
    return n * samples


def run_status(metadata: dict[str, Any], records: list[RolloutRecord], cut_line: int | None) -> RunStatus:
    """``records`` (one per item and sample) against ``metadata``: a ``finished`` run that lacks rollouts or
    had a cut line is :data:`INCOMPLETE`; a ``running`` run whose process is gone is ``stopped``; any other status is
    kept."""
    from security_verifiers.harness.run_metadata import effective_status  # a killed run reads "stopped"

    expected = expected_rollouts(metadata)
    status = effective_status(metadata)
    short = cut_line is not None or (expected is not None and len(records) < expected)
    if status == "finished" and short:
        status = INCOMPLETE
    return RunStatus(status=status, expected_rollouts=expected, recorded_rollouts=len(records), cut_line=cut_line)
