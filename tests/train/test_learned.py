"""``summary.json["learned"]``: the constant floor and the delta against it, and the signs of a degenerate policy
(one answer to every item, labels that contradict their own probability), on run directories the harness writes."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from security_verifiers.core.rundir import RunDir
from security_verifiers.core.types import Item, Message
from security_verifiers.envs.base import Environment, get_env
from security_verifiers.harness.runner import RunConfig, run_eval
from security_verifiers.models.base import Baseline, Policy
from security_verifiers.train.learned import learned

N = 40
DEGENERATE = json.dumps({"label": "Malicious", "p_malicious": 0.02})
#: Answers cycled over the items (by position), with whether each contradicts its probability.
MIXED = [
    ({"label": "Malicious", "p_malicious": 0.9}, False),
    ({"label": "Malicious", "p_malicious": 0.3}, True),   # positive label, p below 1/2
    ({"label": "Benign", "p_malicious": 0.7}, True),      # negative label, p above 1/2
    ({"label": "Benign", "p_malicious": 0.1}, False),
    ({"label": "Abstain", "p_malicious": 0.95}, False),   # abstaining claims no label to contradict
    ({"label": "Malicious", "p_malicious": 0.5}, False),  # 1/2 contradicts neither label
    ("not an answer", False),                             # unparsed: counted as invalid, not a contradiction
]


class Scripted(Baseline):
    """The answer ``reply(position of the item)`` to every item."""

    name = "scripted"

    def __init__(self, items: list[Item], reply: Callable[[int], str]) -> None:
        self.position = {item.id: i for i, item in enumerate(items)}
        self.reply = reply

    def answer(self, item: Item, messages: list[Message]) -> str:
        return self.reply(self.position[item.id])


def _run(env: Environment, policy: Policy, path: Path, n: int = N, samples: int = 1) -> Path:
    dataset = env.dataset("test", n=n)
    asyncio.run(run_eval(env, policy, dataset, RunDir(path), RunConfig(samples=samples), model_name=policy.name,
                         progress=False))
    return path


def _scripted(env: Environment, reply: Callable[[int], str], path: Path, n: int = N, samples: int = 1) -> Path:
    return _run(env, Scripted(list(env.dataset("test", n=n).items), reply), path, n, samples)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("learned")
    env = get_env("network-logs")
    out = {"honest": _run(env, env.baselines()["heuristic"](), tmp / "honest"),
           "degenerate": _scripted(env, lambda i: DEGENERATE, tmp / "degenerate"),
           "degenerate-x2": _scripted(env, lambda i: DEGENERATE, tmp / "degenerate-x2", samples=2),
           "mixed": _scripted(env, lambda i: (lambda a: a if isinstance(a, str) else json.dumps(a))(
               MIXED[i % len(MIXED)][0]), tmp / "mixed")}
    floor = learned(out["honest"], out["degenerate"], n_boot=10).floor
    assert floor is not None
    out["constant"] = _scripted(env, lambda i: floor.answer, tmp / "constant")
    out["constant-x2"] = _scripted(env, lambda i: floor.answer, tmp / "constant-x2", samples=2)
    return out


def test_a_degenerate_after_run_is_visible(runs: dict[str, Path]) -> None:
    """Every answer ``Malicious, p = 0.02``: one answer, all contradicting, below the floor, AUC at chance."""
    found = learned(runs["honest"], runs["degenerate"], n_boot=200)
    after, before = found.after, found.before
    assert found.items == N and after.n == N
    assert after.distinct_texts == 1 and after.distinct_labels == 1 and after.labels == {"Malicious": N}
    assert after.contradictions == N and after.contradiction_share == 1.0
    assert after.auc == 0.5 and before.auc is not None and before.auc > 0.8
    assert before.contradictions == 0 and before.distinct_texts > 1
    assert found.floor is not None and found.after_vs_floor is not None and found.before_vs_floor is not None
    delta, (lo, hi) = found.after_vs_floor.delta, found.after_vs_floor.ci
    assert delta == pytest.approx(after.reward_mean - found.floor.reward_mean)
    assert lo is not None and hi is not None and lo <= delta <= hi < 0
    assert found.before_vs_floor.delta > found.after_vs_floor.delta
    brier = after.calibration["brier"]
    assert set(after.calibration) == {"brier", "ece", "aurc"} and brier is not None and brier > 0.3
    line = found.line()
    assert f"vs constant floor {found.floor.reward_mean:.4f} ({found.floor.policy})" in line
    assert f"distinct answers {before.distinct_texts} -> 1;" in line and "Malicious answers" in line
    assert "-> 100%" in line
    assert f"label contradicts probability 0/{N} -> {N}/{N}" in line and "AUC" in line and "-> 0.500" in line


@pytest.mark.parametrize("run", ["constant", "constant-x2"])
def test_a_run_that_answers_the_floor_gains_nothing_over_it(runs: dict[str, Path], run: str) -> None:
    """Answering the floor's own answer to every item (once, or twice per item) is the floor: delta 0."""
    found = learned(runs["honest"], runs[run], n_boot=200)
    assert found.floor is not None and found.after_vs_floor is not None
    assert found.after_vs_floor.reward_mean == pytest.approx(found.floor.reward_mean, abs=1e-12)
    assert found.after_vs_floor.delta == pytest.approx(0.0, abs=1e-12)
    lo, hi = found.after_vs_floor.ci
    assert lo is not None and hi is not None and lo <= 0.0 and hi == pytest.approx(0.0, abs=1e-12)
    assert found.after.distinct_texts == 1 and found.after.contradictions == 0
    assert found.after.n == (2 * N if run == "constant-x2" else N) and found.items == N


def test_contradictions_count_labels_against_their_own_probability(runs: dict[str, Path]) -> None:
    found = learned(runs["honest"], runs["mixed"], n_boot=10)
    expected = sum(MIXED[i % len(MIXED)][1] for i in range(N))
    assert found.after.contradictions == expected and found.after.contradiction_share == expected / N
    invalid = sum(isinstance(MIXED[i % len(MIXED)][0], str) for i in range(N))
    assert found.after.labels is not None and found.after.labels["invalid"] == invalid
    assert found.after.distinct_labels == 3 and found.after.distinct_texts == len(MIXED)


def test_the_floor_delta_is_paired_with_the_same_resamples_for_both_runs(runs: dict[str, Path]) -> None:
    """The same run as before and after gets the same delta and interval against the floor on both sides."""
    found = learned(runs["honest"], runs["honest"], n_boot=100)
    assert found.before_vs_floor == found.after_vs_floor and found.before == found.after


def test_the_rollouts_of_one_item_are_resampled_together(runs: dict[str, Path]) -> None:
    """Two identical rollouts per item are not twice the evidence: the same interval as one rollout per item."""
    once = learned(runs["honest"], runs["degenerate"], n_boot=200).after_vs_floor
    twice = learned(runs["honest"], runs["degenerate-x2"], n_boot=200).after_vs_floor
    assert once is not None and twice is not None
    assert twice.delta == pytest.approx(once.delta) and twice.ci == pytest.approx(once.ci)


def test_an_environment_without_a_constant_answer_says_so(tmp_path: Path) -> None:
    env = get_env("code-repair")
    policy = env.baselines()["empty-answer"]()
    before, after = (_run(env, policy, tmp_path / name, n=3) for name in ("a", "b"))
    found = learned(before, after, n_boot=10)
    assert found.floor is None and found.after_vs_floor is None and found.before_vs_floor is None
    assert found.no_floor == "code-repair defines no constant answer"
    assert found.after.contradictions is None and found.after.labels is None and found.after.auc is None
    assert found.after.distinct_texts == 1
    assert found.line().startswith("no constant floor (code-repair defines no constant answer); distinct answers")
