"""The baselines' recorded public-set scores (``baseline_scores.json``): a move fails, naming what moved, unless the
environment's version was bumped, and then the file must be recorded again in the same change."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, ClassVar

import pytest

from security_verifiers.core.errors import ConfigError
from security_verifiers.envs.phishing.env import Phishing
from security_verifiers.harness.conformance import check_reference_is_top_and_hacks_lose
from security_verifiers.harness.public_scores import read_record, record_problems, write_record

TABLE = {"test": {"reference": {"reward_mean": 1.0, "f1": 1.0}, "heuristic": {"reward_mean": 0.87, "f1": None}}}
HASHES = {"test": "sha256:abc"}


class _Bumped(Phishing):
    version: ClassVar[str] = "99.0.0"


def _env(tmp_path: Path, cls: type[Phishing] = Phishing) -> Phishing:
    env = cls()
    env.data_dir = tmp_path  # type: ignore[misc]  # the record only: nothing here loads the public sets
    return env


def _moved(key: str, value: Any, split: str = "test", name: str = "heuristic") -> dict:
    table = copy.deepcopy(TABLE)
    table[split][name][key] = value
    return table


def test_a_recorded_table_agrees_with_itself_and_records_the_version(tmp_path: Path) -> None:
    env = _env(tmp_path)
    assert record_problems(env, TABLE, HASHES)[0].startswith("phishing has no recorded baseline scores")
    write_record(env, TABLE, HASHES)
    assert read_record(env)["version"] == Phishing.version
    assert record_problems(env, TABLE, HASHES) == []
    assert record_problems(env, _moved("reward_mean", 0.87 + 1e-12), HASHES) == []  # within the tolerance


@pytest.mark.parametrize(("table", "hashes", "message"), [
    # a score moved: named with both values, and the rule
    (_moved("reward_mean", 0.86), HASHES, "phishing 0.3.4 test heuristic: reward_mean is 0.86, recorded 0.87"),
    # undefined where it was defined is a move too
    (_moved("reward_mean", None), HASHES, "reward_mean is None, recorded 0.87"),
    # the public set changed under the same version
    (TABLE, {"test": "sha256:def"}, "test: the public split's hash is sha256:def, the record's sha256:abc"),
    # a new baseline, or a new metric: recorded again, no version needed
    ({"test": {**TABLE["test"], "new": {"reward_mean": 0.5, "f1": 0.5}}}, HASHES, "baseline new is not recorded"),
    (_moved("brier", 0.1), HASHES, "metric brier is not recorded"),
])
def test_each_difference_is_named(tmp_path: Path, table: dict, hashes: dict, message: str) -> None:
    env = _env(tmp_path)
    write_record(env, TABLE, HASHES)
    problems = record_problems(env, table, hashes)
    assert message in problems[0], problems
    moved = "is not recorded" not in message  # then the rule, once: bump the version, then record again
    assert len(problems) == 1 + moved
    assert ("bumps phishing's version" in problems[-1]) == moved and "`sv gate --record --env phishing`" in problems[-1]


def test_a_long_list_is_cut(tmp_path: Path) -> None:
    env = _env(tmp_path)
    write_record(env, TABLE, HASHES)
    many = {"test": {name: {"reward_mean": 0.1, "f1": 0.1} for name in TABLE["test"]}}
    assert record_problems(env, many, HASHES, most=2)[2] == "... and 2 more"


def test_another_version_must_record_the_file_again(tmp_path: Path) -> None:
    write_record(_env(tmp_path), TABLE, HASHES)
    bumped = _env(tmp_path, _Bumped)
    (problem,) = record_problems(bumped, TABLE, HASHES)  # even with nothing moved
    assert "records phishing 0.3.4, this code is phishing 99.0.0" in problem
    assert "`sv gate --record --env phishing`" in problem and "changelog" in problem


def test_recording_a_moved_score_needs_a_version_bump(tmp_path: Path) -> None:
    write_record(_env(tmp_path), TABLE, HASHES)
    with pytest.raises(ConfigError, match=r"1 recorded score.* of phishing 0.3.4 moved \(first: .*reward_mean is 0.5"
                                          r".*bump phishing's version"):
        write_record(_env(tmp_path), _moved("reward_mean", 0.5), HASHES)
    write_record(_env(tmp_path), _moved("brier", 0.1), HASHES)  # nothing moved: a new metric is recorded as is
    write_record(bumped := _env(tmp_path, _Bumped), _moved("reward_mean", 0.5), HASHES)
    assert record_problems(bumped, _moved("reward_mean", 0.5), HASHES) == []


class _Rescaled(Phishing):
    """A deliberate reward change that keeps every ranking: each reward scaled by 0.99."""

    def score(self, item, transcript):  # noqa: ANN001, ANN201
        score = super().score(item, transcript)
        return score.model_copy(update={"reward": 0.99 * score.reward})


class _RescaledAndBumped(_Rescaled):
    version: ClassVar[str] = "0.3.99"


@pytest.mark.parametrize(("broken", "message"), [
    (_Rescaled, "phishing 0.3.4 ood reference: reward_mean is 0.99, recorded 1.0"),
    (_RescaledAndBumped, "records phishing 0.3.4, this code is phishing 0.3.99"),
])
def test_the_conformance_check_fails_on_a_moved_reward(broken: type, message: str) -> None:
    with pytest.raises(AssertionError, match=message):
        check_reference_is_top_and_hacks_lose(broken())
