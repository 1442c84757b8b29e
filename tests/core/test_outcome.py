"""The Outcome base (strict, frozen, stored and read back) and the metrics builder."""

from __future__ import annotations

from typing import ClassVar

import pytest
from pydantic import ValidationError

from security_verifiers.core.metrics import ratio
from security_verifiers.core.metrics_builder import Breakdown, build_metrics, mean_statistics
from security_verifiers.core.metrics_report import ConstantPolicy, MetricsReport
from security_verifiers.core.outcome import Outcome


class _Row(Outcome):
    group: str
    tags: list[str] = []
    hit: bool
    reward: float


class _Reordered(_Row):
    extra: int = 0
    stored_order: ClassVar[tuple[str, ...]] = ("group", "extra")


def _flat(rows: list[_Row]) -> dict[str, float | int | None]:
    return {"n": len(rows), "hit_rate": ratio(sum(r.hit for r in rows), len(rows))}


def test_an_outcome_is_strict_frozen_and_closed() -> None:
    with pytest.raises(ValidationError):
        _Row.read({"group": "a", "hit": "yes", "reward": 1.0})  # no coercion of a string to a bool
    with pytest.raises(ValidationError):
        _Row.read({"group": "a", "hit": True, "reward": 1.0, "note": "x"})  # no unknown key
    row = _Row.read({"group": "a", "hit": True, "reward": 1.0})
    with pytest.raises(ValidationError):
        row.hit = False  # type: ignore[misc]
    assert _Row.read(row) is row  # an outcome already read passes through


def test_stored_round_trips_in_its_order() -> None:
    stored = {"group": "a", "extra": 2, "tags": ["x"], "hit": False, "reward": 0.5}
    again = _Reordered.read(stored).stored()
    assert again == stored and list(again) == list(stored)


def test_build_metrics_from_declarations() -> None:
    rows = [_Row(group="a", tags=["x", "y"], hit=True, reward=1.0), _Row(group="b", hit=False, reward=0.0),
            _Row(group="a", tags=["y"], hit=False, reward=0.5)]
    floor = ConstantPolicy(policy="always-no", answer="no", reward_mean=0.25, note="a floor")
    report = build_metrics(rows, ["i1", "i2", "i3"], _flat,
                           lambda o: mean_statistics({"reward_mean": lambda r: r.reward}, o),
                           {"group": Breakdown(key=lambda r: r.group), "tag": Breakdown(many=lambda r: r.tags),
                            "hits": Breakdown(key=lambda r: r.group, among=lambda r: r.hit)}, floor)
    MetricsReport.model_validate(report)
    assert report["metrics"] == {"n": 3, "hit_rate": 1 / 3, "constant_reward": 0.25}
    lo, hi = report["intervals"]["reward_mean"]
    assert lo is not None and hi is not None and lo <= 0.5 <= hi
    assert list(report["breakdowns"]["group"]) == ["a", "b"] and report["breakdowns"]["group"]["a"]["n"] == 2
    assert {k: v["n"] for k, v in report["breakdowns"]["tag"].items()} == {"none": 1, "x": 1, "y": 2}
    assert list(report["breakdowns"]["hits"]) == ["a"] and report["breakdowns"]["group"]["b"]["few_items"]
    assert report["constant_policy"]["policy"] == "always-no"


def test_build_metrics_without_outcomes_or_floor() -> None:
    report = build_metrics([], None, _flat, lambda o: mean_statistics({"reward_mean": lambda r: r.reward}, o),
                           floor=False)
    assert report == {"metrics": {"n": 0, "hit_rate": None}, "intervals": {}, "breakdowns": {}}


def test_a_breakdown_takes_one_way_of_grouping() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        Breakdown(key=lambda r: r.group, many=lambda r: r.tags)
    with pytest.raises(ValueError, match="exactly one"):
        Breakdown()
