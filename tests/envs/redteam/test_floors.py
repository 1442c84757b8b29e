"""E5 ``redteam-attack``'s constant floor: the best attacker that sends the same texts to every item, its rewards
played against each item's scripted target when the item is scored, so the metrics need the stored outcomes alone."""

from __future__ import annotations

import asyncio
import json
from functools import cache
from typing import Any

import pytest

from security_verifiers.core.types import Transcript
from security_verifiers.envs.redteam.attack.baselines import constant_attacks
from security_verifiers.envs.redteam.attack.env import AttackConfig, RedteamAttack
from security_verifiers.harness.episode import run_episode

ENV = RedteamAttack()


@cache
def outcomes(split: str, name: str) -> list[dict[str, Any]]:
    policy = ENV.baselines()[name]()
    return [asyncio.run(run_episode(ENV, policy, item)).outcome for item in ENV.dataset(split).items]


@pytest.mark.parametrize("split", ["test", "ood"])
def test_the_floor_is_the_templates_library_and_equals_its_baseline(split: str) -> None:
    # the templates baseline sends the same five texts to every item: it is a constant attacker, and the best one
    stored = [json.loads(json.dumps(o)) for o in outcomes(split, "noop")]
    report = ENV.metrics_report(stored)
    floor = report.constant_policy
    assert floor is not None and floor.policy == "constant-templates"
    templates = outcomes(split, "templates")
    assert floor.reward_mean == pytest.approx(sum(o["reward"] for o in templates) / len(templates))
    assert report.metrics["constant_reward"] == floor.reward_mean
    assert "\n" not in floor.answer  # one table cell


def test_every_constant_is_scored_and_the_ordinary_message_earns_nothing() -> None:
    stored = outcomes("test", "noop")
    assert all(set(o["constant_rewards"]) == set(constant_attacks()) for o in stored)
    assert all(o["constant_rewards"]["noop"] == 0.0 for o in stored)
    assert all(0.0 <= r <= 1.0 for o in stored for r in o["constant_rewards"].values())


def test_the_constants_are_the_same_whichever_attacker_was_scored() -> None:
    # the floor is a property of the items, not of the run: every baseline's outcomes carry the same constants
    assert [o["constant_rewards"] for o in outcomes("ood", "noop")] == \
        [o["constant_rewards"] for o in outcomes("ood", "reference")]


def test_no_floor_against_a_served_target_or_without_outcomes() -> None:
    served = [{**o, "constant_rewards": None} for o in outcomes("ood", "noop")]  # what a served target stores
    assert ENV.metrics_report(served).constant_policy is None
    assert ENV.metrics_report([]).constant_policy is None
    item = ENV.dataset("ood").items[0]
    score = RedteamAttack(AttackConfig(target_model="some-model")).score(item, Transcript(messages=[]))
    assert score.outcome["constant_rewards"] is None  # no model called at scoring time
